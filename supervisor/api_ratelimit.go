package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Rate limits at run time (docs/runtime-changes.md): GET|PUT /{sinks,sources}/{key}/rate_limit.
// A PUT body is the connector's [rate_limit] section as JSON ({"messages_per_second": 100,
// "bytes_per_second": null}; {} for no limit) or null for the configured section. It reaches the
// live runner at once (its PUT /rate_limit) and every runner started for the connector later in
// the same life loop; an operator's restart returns to the configured section (overrides.go). To
// keep a limit for good, create a version with it.

// rateLimitAnswer is GET .../rate_limit: the limit in force, the configured one, and the time the
// connector waited for its limits (all its runners').
type rateLimitAnswer struct {
	Limit            json.RawMessage `json:"limit"`
	Configured       json.RawMessage `json:"configured"`
	ThrottledSeconds float64         `json:"throttled_seconds"`
}

func (s *Supervisor) rateLimitRoutes(mux router, base string, kind config.ConnectorKind) {
	mux.HandleFunc("GET "+base+"/{key}/rate_limit", s.withKind(kind, s.handleRateLimit))
	mux.HandleFunc("PUT "+base+"/{key}/rate_limit", s.withBudget(s.env.RunnerCallLimit, s.withKind(kind, s.handleRateLimit)))
}

func (s *Supervisor) handleRateLimit(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	if r.Method == http.MethodPut {
		body, ok := readJSONBody(w, r)
		if !ok {
			return
		}
		limit, reset, err := config.ParseRateLimitJSON(body)
		if err != nil {
			writeAPIError(w, &apiError{status: http.StatusBadRequest, Code: "invalid_rate_limit", Reason: err.Error()})
			return
		}
		m.mu.Lock()
		m.overrides.rate, m.overrides.rateSet = limit, !reset
		configured := m.cfg.RateLimit
		m.mu.Unlock()
		if reset {
			limit = configured
		}
		// The explicit limit: the runner's "configured" may be an earlier override.
		if _, err := s.tellRunnerJSON(r.Context(), m, http.MethodPut, "/rate_limit", config.RateLimitJSON(limit)); err != nil {
			writeAPIError(w, runnerUnreachable(m, err))
			return
		}
		s.log.Info("connector rate limit changed", "connector", m.label(), "limit", string(config.RateLimitJSON(limit)))
	}
	answer, err := s.connectorRateLimit(r.Context(), m)
	if err != nil {
		writeAPIError(w, runnerUnreachable(m, err))
		return
	}
	body, _ := json.Marshal(answer)
	writeJSON(w, http.StatusOK, body)
}

// connectorRateLimit is the connector's answer: its runner's limit when one runs, else what its
// next runner starts with; the configured section from the running config.
func (s *Supervisor) connectorRateLimit(ctx context.Context, m *managed) (rateLimitAnswer, error) {
	m.mu.Lock()
	configured, o := m.cfg.RateLimit, m.overrides
	m.mu.Unlock()
	limit := configured
	if o.rateSet {
		limit = o.rate
	}
	a := rateLimitAnswer{Limit: config.RateLimitJSON(limit), Configured: config.RateLimitJSON(configured)}
	if t := m.page.Stats(false).ThrottledSeconds; t != nil {
		a.ThrottledSeconds = *t
	}
	body, err := s.tellRunnerJSON(ctx, m, http.MethodGet, "/rate_limit", nil)
	if err != nil || body == nil {
		return a, err
	}
	var runner rateLimitAnswer
	if err := json.Unmarshal(body, &runner); err != nil {
		return a, fmt.Errorf("runner GET /rate_limit: %w", err)
	}
	a.Limit, a.ThrottledSeconds = runner.Limit, runner.ThrottledSeconds
	return a, nil
}
