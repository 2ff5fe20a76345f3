package supervisor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/ctl"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
	"github.com/iggy-connectors-go/runtime/pkg/telemetry"
)

// Exit codes of iggy-connectors.
const (
	ExitOK     = 0 // stopped by SIGTERM/SIGINT after draining the runners
	ExitFailed = 1 // bad configuration, or the API or provider failed at startup
)

// Main is the whole program behind cmd/iggy-connectors, callable from tests: load the runtime
// config as upstream does, start the runners and the API, and drain everything once ctx ends.
func Main(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		switch a {
		case "-h", "--help", "help":
			Usage(stdout)
			return ExitOK
		case "-V", "--version", "version":
			fmt.Fprintf(stdout, "iggy-connectors %s\n", RuntimeVersion)
			return ExitOK
		default:
			fmt.Fprintf(stderr, "iggy-connectors: unexpected argument %q (configuration is by file and environment variables; see --help)\n", a)
			return ExitFailed
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "iggy-connectors: working directory:", err)
		return ExitFailed
	}
	loaded, err := config.Load(environ, wd)
	if err != nil {
		fmt.Fprintln(stderr, "iggy-connectors: Failed to load configuration:", err)
		return ExitFailed
	}
	rt := loaded.Runtime
	tel, telErr := telemetry.Setup(ctx, rt.Telemetry, telemetry.Resource{ServiceVersion: RuntimeVersion})
	rings := NewLogRings(rt.HTTP.Secrets()) // the logs routes' records (api_logs.go)
	logs, err := newLoggers(stdout, rt.Logging.Format, config.EnvMap(loaded.Env)["RUST_LOG"], tel.LogHandler(), rings.Handler())
	if err != nil {
		fmt.Fprintln(stderr, "iggy-connectors: logging:", err)
		_ = tel.Shutdown(ctx)
		return ExitFailed
	}
	log := logs.own
	if telErr != nil {
		log.Error("cannot set up telemetry", "error", telErr)
		return ExitFailed
	}
	tel.SetErrorLogger(log)
	defer logging.RouteStdlib(log)() // the Iggy SDK's chatter (offsets routes) at debug
	defer func() {
		// Flush what is queued; a dead collector must not hold the exit up for long.
		sctx, cancel := context.WithTimeout(context.Background(), telemetryFlushTimeout)
		defer cancel()
		if err := tel.Shutdown(sctx); err != nil {
			log.Warn("telemetry not flushed", "error", err)
		}
	}()
	for _, w := range loaded.Warnings {
		log.Warn(w)
	}
	if config.DisplayConfig(loaded.Env) {
		log.Info("runtime configuration", "file", loaded.Path, "config", rt.LogValue())
	}
	var prov provider.Provider
	if !rt.Fleet.Enabled { // attach mode reads no provider: the orchestrator owns the configs
		if prov, err = provider.New(rt, loaded.Env, log.With("component", "provider")); err != nil {
			log.Error("cannot open the connector config provider", "error", err)
			return ExitFailed
		}
	}
	s, err := New(Options{Runtime: rt, Environ: loaded.Env, Provider: prov, Logger: log, RunnerLog: logs.runners, LogLevel: logs.level, LogRings: rings})
	if err != nil {
		log.Error("cannot start", "error", err)
		return ExitFailed
	}
	if err := s.Start(ctx); err != nil {
		log.Error("cannot start", "error", err)
		s.Shutdown()
		return ExitFailed
	}
	log.Info("iggy-connectors started", "connectors", len(s.ordered), "api", s.APIAddr(), "pid", os.Getpid())
	var apiErr error
	select {
	case <-ctx.Done():
	case apiErr = <-s.apiDoneChan():
	}
	log.Info("shutting down: draining runners (sources first, then sinks)")
	s.Shutdown()
	if apiErr != nil {
		log.Error("REST API failed", "error", apiErr)
		return ExitFailed
	}
	log.Info("iggy-connectors stopped")
	return ExitOK
}

// apiDoneChan reports a failure of the API server; nil channel (never ready) when there is none.
func (s *Supervisor) apiDoneChan() <-chan error {
	return s.apiDone
}

// telemetryFlushTimeout bounds the final telemetry flush at exit.
const telemetryFlushTimeout = 3 * time.Second

// loggers are the supervisor's two loggers on one output.
type loggers struct {
	// own: the supervisor's records, printed and exported (telemetry).
	own *slog.Logger
	// runners: relayed runner lines, printed only (each runner exports its own records). A runner
	// filtered its lines already, with its own filter, which may be changed at run time (PUT
	// .../log_level), so they are not filtered again.
	runners *slog.Logger
	// level is own's handler, whose filter PUT /log_level changes.
	level LevelSetter
}

// newLoggers builds both loggers in format, filtered by rustLog (a bad filter falls back to the
// default with a warning, as upstream). also (the telemetry export, the connectors' log rings;
// nil entries skipped) receive the supervisor's records that pass the filter.
func newLoggers(w io.Writer, format, rustLog string, also ...slog.Handler) (loggers, error) {
	out := &lockedWriter{w: w} // one record is one Write; the lock keeps the two loggers' lines whole
	own, err := logging.NewHandler(out, logging.Options{Format: format, Filter: rustLog, LenientFilter: true, Also: also})
	if err != nil {
		return loggers{}, err
	}
	runners, err := logging.NewHandler(out, logging.Options{Format: format, Filter: "trace", Target: logging.TargetRunner})
	if err != nil {
		return loggers{}, err
	}
	return loggers{own: slog.New(own), runners: slog.New(runners), level: own}, nil
}

// lockedWriter serialises writes from several handlers to one output.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Usage writes the --help text.
func Usage(w io.Writer) {
	fmt.Fprint(w, `iggy-connectors is a drop-in replacement for Apache Iggy's connectors runtime. It reads the same
runtime config file and IGGY_CONNECTORS_* variables, loads connector configs from the configured
provider, runs every enabled connector in its own iggy-connector-runner process (restarted when it
dies) and serves upstream's REST API, /stats and /metrics over them.

Usage: iggy-connectors [--help | --version]     the server
       iggy-connectors SUBCOMMAND [flags]         the command line (SUBCOMMAND --help for its flags)

Config file: IGGY_CONNECTORS_CONFIG_PATH (default core/connectors/runtime/config.toml, searched from the
working directory upwards); dotenv: IGGY_CONNECTORS_ENV_PATH (default: the nearest .env).
SIGTERM/SIGINT drains the runners (sources first, then sinks) and exits 0.
Log verbosity: RUST_LOG (default info), e.g. "warn,iggy_connectors::runner=debug". Targets:
iggy_connectors (the supervisor), iggy_connectors::runner (relayed runner lines, tagged
connector_key), iggy_connectors::benchmark, connector (plugin lines).

`)
	fmt.Fprint(w, "Subcommands:\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range ctl.Commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Summary)
	}
	tw.Flush()
	fmt.Fprint(w, "\nSupervisor variables:\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, v := range SupervisorEnvVars() {
		d := v.Default
		if d == "" {
			d = `""`
		}
		fmt.Fprintf(tw, "  %s\t(default %s)\t%s\n", v.Name, d, v.Help)
	}
	tw.Flush()
	fmt.Fprint(w, "\nRuntime variables (the runtime file's keys):\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, v := range config.RuntimeEnvVars() {
		if v.Key == "" {
			continue
		}
		d := v.Default
		if d == "" {
			d = `""`
		}
		fmt.Fprintf(tw, "  %s\t(default %s)\t%s\n", v.Name, d, v.Help)
	}
	tw.Flush()
}
