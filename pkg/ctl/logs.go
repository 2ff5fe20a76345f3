package ctl

import (
	"context"
	"fmt"
)

func runLogs(_ context.Context, _ []string, env Env) int {
	fmt.Fprintln(env.Stderr, "iggy-connectors logs: not built yet")
	return ExitUsage
}
