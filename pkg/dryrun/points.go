package dryrun

// Points only a dry run writes, besides pkg/tap's delivered (sink) and sent (source). A message at
// either is shown as the sample gave it (its payload rendered in the sample's schema).
const (
	// PointFiltered: a transform dropped the message on purpose (a running connector counts it as
	// filtered).
	PointFiltered = "filtered"
	// PointFailed: decode, a transform or encode failed on the message; the event's error names
	// the stage as a dead-letter record's iggy_dlq_stage does ("decode: ...", "transform: ...",
	// "encode: ...", "send: ..." for a source message over Iggy's limits). A running sink drops
	// and counts such a message (or dead-letters it with tolerance = "all"); a running source
	// rejects the batch holding it (or dead-letters the message with tolerance = "all").
	PointFailed = "failed"
)
