package ctl

import (
	"context"
	"fmt"
)

func runTest(_ context.Context, _ []string, env Env) int {
	fmt.Fprintln(env.Stderr, "iggy-connectors test: not built yet")
	return ExitUsage
}
