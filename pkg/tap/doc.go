// Package tap is the view inside a running connector (docs/see-inside.md): the shape of one
// sampled message as a tap streams it and a dry run prints it, the hub a runner's pipeline offers
// messages to, and the Server-Sent Events streams the tap and the logs routes write.
//
// Files: event.go (Event, the JSON of one sampled message: its point, place in Iggy, id,
// headers, schema and payload rendered by schema), mask.go (secret-named fields of a JSON payload
// masked in place, the payload's own key order and bytes kept), marshal.go (Marshal: an Event as
// one line, the same bytes wherever it is written, no string HTML-escaped), text.go (Event.Text: one line for
// people, `--format text`), query.go (Query, what a
// tap client asks for: points, limit, rate, partition; Mask, a bit per point), hub.go (Hub: at
// most DefaultMaxSubscribers taps per runner, each with a bounded buffer the pipeline offers to
// without ever blocking, drops counted; with no tap open the pipeline pays one atomic load per
// batch), sample.go (Sample, a message's bytes copied by the pipeline and rendered as an Event
// in the subscriber's goroutine), sse.go (the event-stream Writer, extending the write deadline
// per event, and Reader), serve.go (Serve: one tap stream with its dropped, keep-alive and end
// events), logs.go (LogsQuery and ServeLogs: a connector's log records from a pkg/logging.Ring as
// JSON lines or followed as events, for the runner's and the supervisor's logs routes).
package tap
