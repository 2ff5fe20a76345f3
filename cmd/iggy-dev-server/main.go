// Command iggy-dev-server is an in-memory Iggy 0.8 server for development and
// tests only: it speaks the TCP binary protocol of the Go SDK v0.8.0 and keeps
// every message in memory, so nothing survives a restart.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
)

const usage = `iggy-dev-server: an in-memory Iggy 0.8 server, for development and tests only.

It speaks the Iggy 0.8 TCP binary protocol well enough for the official Go SDK
v0.8.0 and the connectors runtime. All data lives in memory and is lost when it
stops. Do not use it in production: run the real Apache Iggy server there.

Usage: iggy-dev-server [--help]

Configured by environment variables:
`

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage+devbroker.EnvHelp+"  IGGY_DEV_LOG_LEVEL               debug, info, warn or error (default info)\n")
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "iggy-dev-server:", err)
		os.Exit(1)
	}
}

func run() error {
	var level slog.Level
	if raw := os.Getenv("IGGY_DEV_LOG_LEVEL"); raw != "" {
		if err := level.UnmarshalText([]byte(raw)); err != nil {
			return fmt.Errorf("IGGY_DEV_LOG_LEVEL=%q: %w", raw, err)
		}
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	cfg, err := devbroker.ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	cfg.Logger = logger

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := devbroker.New(cfg)
	if err := srv.Start(ctx); err != nil {
		return err
	}
	logger.Warn("iggy-dev-server is for development and tests only; data is kept in memory", "address", srv.Addr())
	<-ctx.Done()
	logger.Info("stopping")
	srv.Stop()
	return nil
}
