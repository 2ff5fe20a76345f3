// Package dryrun is what a dry run's callers share (docs/dry-runs.md): the sample messages it
// takes, the problems it reports, and running it in the runner binary
// (`iggy-connector-runner --dry-run`), which owns the decode → transforms → encode code.
// `iggy-connectors test` (pkg/ctl) and the supervisor's preview routes run it that way, so there
// is one implementation of the pipeline, the runner's.
//
// Files: points.go (the points only a dry run writes: filtered, failed), sample.go (Sample and
// ParseSample: one message in the pkg/tap.Event shape, its payload and headers read back from
// their rendering), read.go (ReadSamples: JSON lines), problem.go (Problem: a bad config field or
// sample field), run.go (Run: the runner binary as a child process, its events and problems).
package dryrun
