package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// Log levels at run time (docs/runtime-changes.md):
//
//	GET|PUT /{sinks,sources}/{key}/log_level   one connector: its runner's filter, and its plugin's lines
//	GET|PUT /log_level                         the supervisor's own filter; a PUT also every connector
//
// A PUT body is a JSON string holding a RUST_LOG-style filter, or {"filter": ..., "persist": bool};
// a null filter is the configured one again. The change reaches the live runner at once (its PUT
// /log_level) and every runner started for the connector later in the same life loop (a crash
// restart); "persist": true keeps it in the connector's target-state file, so restarts and
// supervisor restarts keep it too (overrides.go). The supervisor's own filter is not persisted:
// RUST_LOG sets it at start.

// LevelSetter is a logger handler whose filter can change while it logs (logging.Handler).
type LevelSetter interface {
	SetFilter(logging.Filter)
	Filter() logging.Filter
}

// logLevelRoutes registers the per-connector routes under base.
func (s *Supervisor) logLevelRoutes(mux router, base string, kind config.ConnectorKind) {
	mux.HandleFunc("GET "+base+"/{key}/log_level", s.withKind(kind, s.handleConnectorLogLevel))
	mux.HandleFunc("PUT "+base+"/{key}/log_level", s.withBudget(s.env.RunnerCallLimit, s.withKind(kind, s.handleConnectorLogLevel)))
}

// globalLogLevelRoutes registers GET and PUT /log_level.
func (s *Supervisor) globalLogLevelRoutes(mux router) {
	mux.HandleFunc("GET /log_level", s.handleLogLevel)
	mux.HandleFunc("PUT /log_level", s.withBudget(2*s.env.RunnerCallLimit, s.handleLogLevel))
}

// configuredRunnerFilter is the filter a runner of this supervisor starts with when no override
// applies: RUST_LOG, else IGGY_CONNECTOR_LOG_LEVEL, else info (the runner's own rule).
func (s *Supervisor) configuredRunnerFilter() string {
	vars := config.EnvMap(s.environ)
	if v := strings.TrimSpace(vars["RUST_LOG"]); v != "" {
		return v
	}
	switch v := strings.ToLower(strings.TrimSpace(vars["IGGY_CONNECTOR_LOG_LEVEL"])); v {
	case "":
		return logging.DefaultFilter
	case "warning":
		return "warn"
	default:
		return v
	}
}

// connectorLevel is the connector's log level answer: its runner's when one runs, else what its
// next runner starts with.
func (s *Supervisor) connectorLevel(ctx context.Context, m *managed) (logging.LevelState, error) {
	m.mu.Lock()
	o := m.overrides
	m.mu.Unlock()
	st := logging.LevelState{Filter: s.configuredRunnerFilter(), Configured: s.configuredRunnerFilter(), Persisted: o.logPersisted}
	if o.logFilter != nil {
		st.Filter = *o.logFilter
	}
	body, err := s.tellRunnerJSON(ctx, m, http.MethodGet, "/log_level", nil)
	if err != nil || body == nil {
		return st, err
	}
	var runner logging.LevelState
	if err := json.Unmarshal(body, &runner); err != nil {
		return st, fmt.Errorf("runner GET /log_level: %w", err)
	}
	st.Filter, st.PluginFilter = runner.Filter, runner.PluginFilter
	return st, nil
}

// setConnectorLevel applies a change to one connector: its overrides, its target-state file when
// persisted (or when a persisted filter is reset), and its live runner.
func (s *Supervisor) setConnectorLevel(ctx context.Context, m *managed, c logging.LevelChange) error {
	m.mu.Lock()
	wasPersisted := m.overrides.logPersisted
	m.mu.Unlock()
	if c.Persist || (c.Filter == nil && wasPersisted) {
		saved := c.Filter
		if !c.Persist {
			saved = nil
		}
		if err := s.saveLogFilter(m, saved); err != nil {
			return internalError(err)
		}
	}
	m.mu.Lock()
	m.overrides.logFilter, m.overrides.logPersisted = c.Filter, c.Persist && c.Filter != nil
	m.mu.Unlock()
	filter := s.configuredRunnerFilter()
	if c.Filter != nil {
		filter = *c.Filter
	}
	body, _ := json.Marshal(filter) // the explicit filter: the runner's "configured" may be an override
	if _, err := s.tellRunnerJSON(ctx, m, http.MethodPut, "/log_level", body); err != nil {
		return runnerUnreachable(m, err)
	}
	return nil
}

// readLevelChange reads a PUT body, answering 415/413/400 (a bad filter) itself.
func readLevelChange(w http.ResponseWriter, r *http.Request) (logging.LevelChange, bool) {
	body, ok := readJSONBody(w, r)
	if !ok {
		return logging.LevelChange{}, false
	}
	c, err := logging.ParseLevelChange(body)
	if err != nil {
		writeAPIError(w, &apiError{status: http.StatusBadRequest, Code: "invalid_log_level", Reason: err.Error()})
		return logging.LevelChange{}, false
	}
	return c, true
}

func (s *Supervisor) handleConnectorLogLevel(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	if r.Method == http.MethodPut {
		c, ok := readLevelChange(w, r)
		if !ok {
			return
		}
		if err := s.setConnectorLevel(r.Context(), m, c); err != nil {
			writeAPIError(w, err.(*apiError))
			return
		}
		s.log.Info("connector log filter changed", "connector", m.label(), "filter", levelText(c), "persist", c.Persist)
	}
	st, err := s.connectorLevel(r.Context(), m)
	if err != nil {
		writeAPIError(w, runnerUnreachable(m, err))
		return
	}
	body, _ := json.Marshal(st)
	writeJSON(w, http.StatusOK, body)
}

func levelText(c logging.LevelChange) string {
	if c.Filter == nil {
		return "(configured)"
	}
	return *c.Filter
}

// ownLog is the supervisor's own log filter at run time.
type ownLog struct {
	setter LevelSetter // nil: fixed (a supervisor built without one, in tests)
	mu     sync.Mutex
	text   string // the filter set at run time; "": RUST_LOG's
}

// ownLevel is the supervisor's own filter: the configured one is RUST_LOG.
func (s *Supervisor) ownLevel() logging.LevelState {
	configured := strings.TrimSpace(config.EnvMap(s.environ)["RUST_LOG"])
	if configured == "" {
		configured = logging.DefaultFilter
	}
	st := logging.LevelState{Filter: configured, Configured: configured}
	s.own.mu.Lock()
	defer s.own.mu.Unlock()
	if s.own.text != "" {
		st.Filter = s.own.text
	}
	return st
}

// handleLogLevel answers GET and PUT /log_level: the supervisor's own filter, and with a PUT every
// connector's (in attach mode every replica's; fleet_runtime.go).
func (s *Supervisor) handleLogLevel(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		c, ok := readLevelChange(w, r)
		if !ok {
			return
		}
		if c.Persist && s.fleet != nil {
			writeAPIError(w, &apiError{status: http.StatusConflict, Code: "attach_mode",
				Reason: `attach mode ([fleet] enabled): "persist" is not served here, the orchestrator owns the runners' environment; set RUST_LOG there`})
			return
		}
		s.setOwnLevel(c)
		var failed []string
		if s.fleet != nil {
			failed = s.fleetSetLevelEverywhere(r.Context(), c)
		} else {
			failed = s.setLevelEverywhere(r.Context(), c)
		}
		if len(failed) > 0 {
			writeAPIError(w, &apiError{status: http.StatusBadGateway, Code: "runners_failed",
				Reason: "the supervisor's filter changed, but not every runner took it: " + strings.Join(failed, "; ")})
			return
		}
	}
	body, _ := json.Marshal(s.ownLevel())
	writeJSON(w, http.StatusOK, body)
}

// setOwnLevel changes the supervisor's own filter (null: RUST_LOG's again).
func (s *Supervisor) setOwnLevel(c logging.LevelChange) {
	if s.own.setter == nil {
		return
	}
	from := s.ownLevel().Filter
	f, text := c.Parsed(), ""
	if c.Filter == nil {
		var err error
		if f, err = logging.ParseFilter(s.ownLevel().Configured); err != nil {
			f = logging.MustParseFilter(logging.DefaultFilter) // as the logger started: lenient
		}
	} else {
		text = *c.Filter
	}
	s.own.mu.Lock()
	s.own.setter.SetFilter(f)
	s.own.text = text
	s.own.mu.Unlock()
	s.log.Warn("log filter changed", "from", from, "to", levelText(c), "persist", c.Persist)
}

// setLevelEverywhere applies a change to every connector at once; it returns what failed.
func (s *Supervisor) setLevelEverywhere(ctx context.Context, c logging.LevelChange) []string {
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for _, m := range s.ordered {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.setConnectorLevel(ctx, m, c); err != nil {
				mu.Lock()
				failed = append(failed, m.label()+": "+err.Error())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}
