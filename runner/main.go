package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"
)

// Exit codes of the runner process.
const (
	ExitOK     = 0 // graceful stop
	ExitFatal  = 1 // the connector failed (status error); a supervisor restarts it
	ExitConfig = 2 // the configuration is missing or invalid
)

// Main is the whole program behind cmd/iggy-connector-runner, callable from tests: load settings
// from environ, run until the context from signals ends, and return the exit code.
func Main(environ []string, stderr io.Writer, signals func() (context.Context, context.CancelFunc)) int {
	ctx, cancel := signals()
	defer cancel()

	boot := slog.New(slog.NewTextHandler(stderr, nil))
	loadCtx, cancelLoad := context.WithTimeout(ctx, time.Minute)
	s, err := LoadSettings(loadCtx, environ)
	cancelLoad()
	if err != nil {
		boot.Error("invalid configuration", "error", err)
		return ExitConfig
	}
	log, err := NewLogger(stderr, s.LogFormat, s.Env.LogLevel)
	if err != nil {
		boot.Error("invalid configuration", "error", err)
		return ExitConfig
	}
	if !s.Connector.Enabled {
		log.Warn("connector is disabled (enabled = false); nothing to run", "connector_key", s.Connector.Key)
		return ExitOK
	}
	r, err := New(s, log)
	if err != nil {
		log.Error("invalid configuration", "error", err)
		return ExitConfig
	}
	if s.Env.CPUProfile != "" {
		f, err := os.Create(s.Env.CPUProfile)
		if err != nil {
			log.Error("invalid configuration", "error", fmt.Errorf("IGGY_CONNECTOR_CPU_PROFILE: %w", err))
			return ExitConfig
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Error("invalid configuration", "error", fmt.Errorf("IGGY_CONNECTOR_CPU_PROFILE: %w", err))
			return ExitConfig
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	log.Info("starting connector runner", "connector_key", s.Connector.Key, "connector_type", string(s.Connector.Kind),
		"pid", os.Getpid(), "iggy_address", s.Iggy.Address)
	if err := r.Run(ctx); err != nil {
		fmt.Fprintln(stderr, "iggy-connector-runner: fatal:", err)
		return ExitFatal
	}
	return ExitOK
}
