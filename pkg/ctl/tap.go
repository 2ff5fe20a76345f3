package ctl

import (
	"context"
	"fmt"
)

func runTap(_ context.Context, _ []string, env Env) int {
	fmt.Fprintln(env.Stderr, "iggy-connectors tap: not built yet")
	return ExitUsage
}
