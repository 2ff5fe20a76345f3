package runner

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// The log level at run time (docs/runtime-changes.md): GET /log_level shows the filter in force,
// PUT /log_level replaces it without a restart, for the runner's own lines and its plugin's. The
// process logger's filter is swappable (logging.Handler.SetFilter), so the change applies to the
// next line written.
//
// Plugin lines: plugins filter their own lines from their first open on (upstream's SDK reads
// RUST_LOG then; so does the C plugins' helper), and nothing in the plugin ABI lets the host tell
// them a new level later. So before that first open the runner sets RUST_LOG in its environment
// to what its filter lets through of plugin lines (logging.PluginFilter), lowered to
// IGGY_CONNECTOR_PLUGIN_LOG_CEILING when set; afterwards the host filters plugin lines with the
// current filter. A run-time change makes plugin lines quieter at once, and more verbose only down
// to the level the plugin was opened with (GET shows it as plugin_filter).

// levelSetter is the process logger's handler when it can change its filter (logging.Handler).
type levelSetter interface {
	SetFilter(logging.Filter)
	Filter() logging.Filter
}

// logLevel is the runner's filter at run time.
type logLevel struct {
	log     *slog.Logger
	handler levelSetter // nil: the logger cannot change its filter (a test's own logger)

	mu         sync.Mutex
	configured string // RUST_LOG, else IGGY_CONNECTOR_LOG_LEVEL, as the runner started with it
	current    string
	plugin     string // the RUST_LOG the plugin was opened with ("" before the open)
	ceiling    slog.Level
}

// newLogLevel wraps the process logger; configured is the filter it was built with.
func newLogLevel(log *slog.Logger, configured string, ceiling slog.Level) *logLevel {
	l := &logLevel{log: log, configured: configured, current: configured, ceiling: ceiling}
	if h, ok := log.Handler().(levelSetter); ok {
		l.handler = h
	}
	return l
}

// tellPlugin sets RUST_LOG in the process environment (the C library's, which a plugin reads) to
// the filter the plugin should be opened with. Call it before the first open: a plugin reads it
// once.
func (l *logLevel) tellPlugin() {
	if l.handler == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.plugin = logging.PluginFilter(l.handler.Filter(), l.ceiling)
	if os.Getenv("RUST_LOG") == l.plugin {
		return
	}
	if err := os.Setenv("RUST_LOG", l.plugin); err != nil {
		l.log.Warn("cannot set RUST_LOG for the plugin; it filters its lines with the environment's", "error", err)
	}
}

func (l *logLevel) state() logging.LevelState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return logging.LevelState{Filter: l.current, Configured: l.configured, PluginFilter: l.plugin}
}

// errLevelFixed: the process logger cannot change its filter.
var errLevelFixed = errors.New("this runner's logger cannot change its filter")

// set applies a change: its filter, or the configured one for a reset.
func (l *logLevel) set(c logging.LevelChange) error {
	if l.handler == nil {
		return errLevelFixed
	}
	text, f := l.configured, c.Parsed()
	if c.Filter != nil {
		text = *c.Filter
	} else {
		var err error
		if f, err = logging.ParseFilter(text); err != nil {
			f = logging.MustParseFilter(logging.DefaultFilter) // as the logger started: lenient
		}
	}
	l.mu.Lock()
	from := l.current
	l.current = text
	l.handler.SetFilter(f)
	plugin := l.plugin
	l.mu.Unlock()
	// At warn, so the line shows under the quieter filters too: an operator changed what is logged.
	l.log.Warn("log filter changed", "from", from, "to", text, "configured", l.configured, "plugin_filter", plugin)
	return nil
}

// handleLogLevel answers GET and PUT /log_level.
func (r *Runner) handleLogLevel(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPut {
		body, ok, _ := httplimit.ReadBody(w, req) // another read error leaves the parser a part
		if !ok {
			return
		}
		c, err := logging.ParseLevelChange(body)
		if err == nil && c.Persist {
			err = errors.New(`"persist": true is the supervisor's (it keeps the filter in the connector's target-state file); a runner keeps a level until it exits: set RUST_LOG in its environment to keep one`)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_log_level", err.Error())
			return
		}
		if err := r.level.set(c); err != nil {
			writeError(w, http.StatusConflict, "invalid_state", err.Error())
			return
		}
	}
	writeJSON(w, r.level.state())
}

// pluginLogCeiling reads IGGY_CONNECTOR_PLUGIN_LOG_CEILING: a level word, or "" for none (the
// plugin is opened with what the runner's filter takes of its lines).
func pluginLogCeiling(s string) (slog.Level, error) {
	if strings.TrimSpace(s) == "" {
		return logging.LevelOff, nil
	}
	return logging.ParseLevel(s)
}

// currentFilter is the filter the process logger was built with, as text ("" when it cannot say).
func currentFilter(log *slog.Logger) string {
	if h, ok := log.Handler().(levelSetter); ok {
		return h.Filter().String()
	}
	return ""
}
