package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
	"github.com/iggy-connectors-go/runtime/pkg/telemetry"
)

// telemetryFlushTimeout bounds the final telemetry flush at exit.
const telemetryFlushTimeout = 3 * time.Second

// Main is the whole program behind cmd/iggy-connector-runner, callable from tests: load settings
// from environ, run until the context from signals ends, and return the exit code. Logs go to
// stdout (as upstream's); a configuration error or the fatal reason goes to stderr as one line
// (runnerproc.ConfigErrorLine, runnerproc.FatalPrefix). The exit codes are runnerproc's.
func Main(environ []string, stdout, stderr io.Writer, signals func() (context.Context, context.CancelFunc)) int {
	ctx, cancel := signals()
	defer cancel()

	invalid := func(err error) int {
		fmt.Fprintln(stderr, runnerproc.ConfigErrorLine(err.Error()))
		return runnerproc.ExitConfig
	}
	loadCtx, cancelLoad := context.WithTimeout(ctx, time.Minute)
	s, err := LoadSettings(loadCtx, environ)
	cancelLoad()
	if err != nil {
		return invalid(err)
	}
	key := s.Connector.Key
	tel, err := telemetry.Setup(ctx, s.Runtime.Telemetry, telemetry.Resource{
		ConnectorKey: key, ConnectorKind: string(s.Connector.Kind), PID: os.Getpid(),
	})
	if err != nil {
		return invalid(fmt.Errorf("connector %q: %w", key, err))
	}
	defer func() {
		// Flush what is queued; a dead collector must not hold the exit up for long.
		flushCtx, cancelFlush := context.WithTimeout(context.Background(), telemetryFlushTimeout)
		defer cancelFlush()
		if err := tel.Shutdown(flushCtx); err != nil {
			fmt.Fprintf(stderr, "iggy-connector-runner: connector %q: %v\n", key, err)
		}
	}()
	logs := logRing(s)
	log, err := newProcessLogger(stdout, s, logFilter(environ, s.Env.LogLevel), tel, logs)
	if err != nil {
		return invalid(fmt.Errorf("connector %q: %w", key, err))
	}
	tel.SetErrorLogger(log)
	defer logging.RouteStdlib(log)()
	if !s.Connector.Enabled {
		log.Warn("connector is disabled (enabled = false); nothing to run")
		return runnerproc.ExitOK
	}
	r, err := New(s, log, tel)
	if err != nil {
		return invalid(err)
	}
	r.keepLogs(logs)
	if config.DisplayConfig(environ) {
		log.Info("effective runtime configuration", "config", s.Runtime.LogValue())
	}
	if s.Env.CPUProfile != "" {
		f, err := os.Create(s.Env.CPUProfile)
		if err != nil {
			return invalid(fmt.Errorf("IGGY_CONNECTOR_CPU_PROFILE: %w", err))
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return invalid(fmt.Errorf("IGGY_CONNECTOR_CPU_PROFILE: %w", err))
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	log.Info("starting connector runner", "pid", os.Getpid(), "iggy_address", s.Iggy.Address)
	if err := r.Run(ctx); err != nil {
		fmt.Fprintln(stderr, runnerproc.FatalPrefix+err.Error())
		return runnerproc.ExitFatal
	}
	return runnerproc.ExitOK
}
