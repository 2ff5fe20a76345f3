package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Exit codes of the runner process.
const (
	ExitOK     = 0 // graceful stop
	ExitFatal  = 1 // the connector failed (status error); a supervisor restarts it
	ExitConfig = 2 // the configuration is missing or invalid
)

// Main is the whole program behind cmd/iggy-connector-runner, callable from tests: load settings
// from environ, run until the context from signals ends, and return the exit code. Logs go to
// stdout (as upstream's); a configuration error or the fatal reason also goes to stderr.
func Main(environ []string, stdout, stderr io.Writer, signals func() (context.Context, context.CancelFunc)) int {
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
	log, err := NewLogger(stdout, s.LogFormat, s.Env.LogLevel)
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
		boot.Error("invalid configuration", "error", err)
		return ExitConfig
	}
	if config.DisplayConfig(environ) {
		log.Info("effective runtime configuration", "config", fmt.Sprintf("%+v", s.Runtime.Redacted()))
	}
	if s.Env.CPUProfile != "" {
		f, err := os.Create(s.Env.CPUProfile)
		if err != nil {
			boot.Error("invalid configuration", "error", fmt.Errorf("IGGY_CONNECTOR_CPU_PROFILE: %w", err))
			return ExitConfig
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			boot.Error("invalid configuration", "error", fmt.Errorf("IGGY_CONNECTOR_CPU_PROFILE: %w", err))
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
