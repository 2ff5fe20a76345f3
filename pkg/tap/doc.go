// Package tap is the view inside a running connector (docs: "See inside"): the shape of one
// sampled message as a tap streams it and a dry run prints it.
//
// Files: event.go (Event, the JSON of one sampled message: its point, place in Iggy, id,
// headers, schema and payload rendered by schema, secret fields masked), marshal.go (Marshal: an
// Event as one line, the same bytes wherever it is written), text.go (Event.Text: one line for
// people, `--format text`).
package tap
