// Command iggy-connectors is the drop-in replacement of Apache Iggy's connectors runtime: it runs
// each connector in its own iggy-connector-runner process and serves upstream's REST API. With a
// subcommand (tap, logs, test; pkg/ctl) it is the operator's command line instead. See
// `iggy-connectors --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/iggy-connectors-go/runtime/pkg/ctl"
	"github.com/iggy-connectors-go/runtime/supervisor"
)

// gcPercent is the supervisor's GC target unless GOGC is set: it is idle most of the time with a
// small heap, and collecting at half Go's default growth kept it 2.2 MiB (PSS) smaller at 50
// connectors for 0.45 ms more per /metrics (measured: docs/benchmarks.md §7).
const gcPercent = 50

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-ctx.Done()
		stop() // a second signal terminates at once, the default way
	}()
	if len(os.Args) > 1 {
		if cmd, ok := ctl.Lookup(os.Args[1]); ok {
			wd, _ := os.Getwd()
			os.Exit(cmd.Run(ctx, os.Args[2:], ctl.Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, Environ: os.Environ(), Dir: wd}))
		}
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(supervisor.Main(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}
