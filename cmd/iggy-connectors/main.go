// Command iggy-connectors is the drop-in replacement of Apache Iggy's connectors runtime: it runs
// each connector in its own iggy-connector-runner process and serves upstream's REST API. See
// `iggy-connectors --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/iggy-connectors-go/runtime/supervisor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-ctx.Done()
		stop() // a second signal terminates at once, the default way
	}()
	os.Exit(supervisor.Main(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}
