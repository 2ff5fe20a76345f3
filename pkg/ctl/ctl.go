// Package ctl is the operator's command line inside the iggy-connectors binary: the subcommands
// that talk to a running supervisor (tap, logs) or check a connector file without one (test).
// `iggy-connectors` with no subcommand is the server, as upstream's binary.
//
// Files: ctl.go (the subcommand table and what they share: exit codes, the environment),
// client.go (the server subcommands' flags and calls: --url / IGGY_CONNECTORS_URL, --api-key /
// IGGY_CONNECTORS_HTTP_API_KEY, --format json|text, the errors an operator can act on), tap.go
// (`tap`: a connector's live tap as JSON lines of tap.Event, which `test --input` reads back),
// logs.go (`logs`: a connector's recent log records, followed with --follow), stream.go (the
// server's event stream both follow), test.go (`test`, the dry run: the runner binary's
// --dry-run through pkg/dryrun, compared with an expectation file; its golden cases are
// testdata/test/*). docs/see-inside.md shows them at work.
package ctl

import (
	"context"
	"io"
)

// Exit codes of every subcommand.
const (
	ExitOK       = 0 // done; for `test`, the output matched the expectation
	ExitMismatch = 1 // `test` found a difference; tap and logs: the server or the stream failed
	ExitUsage    = 2 // bad flags, a bad connector file or sample file (named in the message)
)

// Env is what a subcommand reads and writes, so tests run it in-process.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	Environ        []string // KEY=value, as os.Environ
	Dir            string   // the working directory relative paths start from
}

// Command is one subcommand.
type Command struct {
	Name    string
	Summary string // one line for the binary's --help
	Run     func(ctx context.Context, args []string, env Env) int
}

// Commands lists the subcommands in the order --help shows them.
var Commands = []Command{
	{Name: "tap", Summary: "stream sampled messages of a running connector: tap sinks/KEY [--point delivered] [--limit 10]", Run: runTap},
	{Name: "logs", Summary: "a connector's recent log records: logs sinks/KEY [--tail N] [--level warn] [--follow]", Run: runLogs},
	{Name: "test", Summary: "dry-run a connector file over sample messages: test CONNECTOR_FILE --input SAMPLES.jsonl [--expect FILE] [--update] [--format json|text]", Run: runTest},
}

// Lookup finds a subcommand by name.
func Lookup(name string) (Command, bool) {
	for _, c := range Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}
