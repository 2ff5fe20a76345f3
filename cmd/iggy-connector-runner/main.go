// Command iggy-connector-runner runs exactly one Iggy connector (one sink or source plugin) with its
// Iggy pump, configured by environment variables only. See `iggy-connector-runner --help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
	"github.com/iggy-connectors-go/runtime/runner"
)

func main() {
	// Settings are read from this copy; the secrets leave the process environment, so the
	// plugin's getenv and whatever it spawns never see them.
	environ := os.Environ()
	runnerproc.UnsetSecrets()
	if len(os.Args) > 1 && os.Args[1] == runnerproc.ArgDryRun {
		ctx, cancel := signalContext()
		code := runner.DryRunMain(ctx, environ, os.Args[2:], os.Stdin, os.Stdout)
		cancel()
		os.Exit(code)
	}
	for _, a := range os.Args[1:] {
		switch a {
		case "-h", "--help", "help":
			runner.Usage(os.Stdout)
			return
		case runnerproc.ArgCheck:
			ctx, cancel := signalContext()
			code := runner.CheckMain(ctx, environ, os.Stdout)
			cancel()
			os.Exit(code)
		default:
			fmt.Fprintln(os.Stderr, runnerproc.ConfigErrorLine(fmt.Sprintf("unexpected argument %q (configuration is by environment variables; see --help)", a)))
			os.Exit(runnerproc.ExitConfig)
		}
	}
	os.Exit(runner.Main(environ, os.Stdout, os.Stderr, signalContext))
}

// signalContext ends on the first SIGTERM or SIGINT; a second one kills the process the default way.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-ctx.Done()
		cancel() // restores default handling: a second signal terminates at once
	}()
	return ctx, cancel
}
