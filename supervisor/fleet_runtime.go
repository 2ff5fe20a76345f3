package supervisor

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// Run-time changes in attach mode (docs/runtime-changes.md): a connector's PUT .../log_level and
// PUT .../rate_limit go to every replica of it at once, and PUT /log_level to the supervisor and
// every replica of every connector; GET answers what the connector's primary replica says. The
// orchestrator owns the runners' environment, so nothing is persisted here ("persist": true
// answers 409) and a replica the orchestrator restarts comes back with its configured values.

// fleetRuntimeRoutes registers GET/PUT .../log_level and .../rate_limit under base.
func (s *Supervisor) fleetRuntimeRoutes(mux router, base string, kind config.ConnectorKind) {
	read := func(h fleetHandler) http.HandlerFunc { return s.fleetRead(s.withKind(kind, s.fleetConnector(h))) }
	write := func(h fleetHandler) http.HandlerFunc { return s.withBudget(s.env.FleetTimeout, read(h)) }
	mux.HandleFunc("GET "+base+"/{key}/log_level", read(s.fleetGet("/log_level")))
	mux.HandleFunc("PUT "+base+"/{key}/log_level", write(s.handleFleetLogLevel))
	mux.HandleFunc("GET "+base+"/{key}/rate_limit", read(s.fleetGet("/rate_limit")))
	mux.HandleFunc("PUT "+base+"/{key}/rate_limit", write(s.handleFleetRateLimit))
}

// fleetGet answers GET path as the connector's primary replica answers it.
func (s *Supervisor) fleetGet(path string) fleetHandler {
	return func(w http.ResponseWriter, r *http.Request, c fleetConnector) {
		status, body, err := s.fleet.view.Send(r.Context(), s.env.FleetTimeout, http.MethodGet, c.primary.Endpoint, path, nil)
		if err != nil || status != http.StatusOK {
			writeAPIError(w, &apiError{status: http.StatusBadGateway, Code: "replicas_failed",
				Reason: fmt.Sprintf("GET %s of %s %q from %s: status %d, %v: %.200s", path, c.kind, c.primary.Key, c.primary.Endpoint, status, err, body)})
			return
		}
		writeJSON(w, http.StatusOK, body)
	}
}

func (s *Supervisor) handleFleetLogLevel(w http.ResponseWriter, r *http.Request, c fleetConnector) {
	change, ok := readLevelChange(w, r)
	if !ok {
		return
	}
	if change.Persist {
		writeAPIError(w, &apiError{status: http.StatusConflict, Code: "attach_mode",
			Reason: `attach mode ([fleet] enabled): "persist" is not served here, the orchestrator owns the runners' environment; set RUST_LOG there`})
		return
	}
	s.fleetSendAll(w, r, c, "/log_level", levelBody(change))
}

func (s *Supervisor) handleFleetRateLimit(w http.ResponseWriter, r *http.Request, c fleetConnector) {
	body, ok := readJSONBody(w, r)
	if !ok {
		return
	}
	if _, _, err := config.ParseRateLimitJSON(body); err != nil {
		writeAPIError(w, &apiError{status: http.StatusBadRequest, Code: "invalid_rate_limit", Reason: err.Error()})
		return
	}
	s.fleetSendAll(w, r, c, "/rate_limit", body)
}

// levelBody is a change as the runners take it: the filter, or null for their configured one.
func levelBody(c logging.LevelChange) []byte {
	if c.Filter == nil {
		return []byte("null")
	}
	return []byte(fmt.Sprintf("%q", *c.Filter))
}

// fleetSendAll sends PUT path with body to every replica of the connector at once and answers
// the primary's new state, or 502 naming each replica that did not take it.
func (s *Supervisor) fleetSendAll(w http.ResponseWriter, r *http.Request, c fleetConnector, path string, body []byte) {
	answers := make([][]byte, len(c.replicas))
	failed := s.sendToReplicas(r.Context(), c, path, body, answers)
	if len(failed) > 0 {
		writeAPIError(w, &apiError{status: http.StatusBadGateway, Code: "replicas_failed",
			Reason: fmt.Sprintf("PUT %s reached %d of %d replicas of %s %q; not taken by: %s",
				path, len(c.replicas)-len(failed), len(c.replicas), c.kind, c.primary.Key, strings.Join(failed, "; "))})
		return
	}
	for i, rep := range c.replicas {
		if rep.Endpoint == c.primary.Endpoint {
			writeJSON(w, http.StatusOK, answers[i])
			return
		}
	}
	writeJSON(w, http.StatusOK, answers[0])
}

// sendToReplicas sends PUT path with body to every replica of c at once, keeping each answer in
// answers (when not nil); it returns what failed.
func (s *Supervisor) sendToReplicas(ctx context.Context, c fleetConnector, path string, body []byte, answers [][]byte) []string {
	failures := make([]string, len(c.replicas))
	var wg sync.WaitGroup
	for i, rep := range c.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, out, err := s.fleet.view.Send(context.WithoutCancel(ctx), s.env.FleetTimeout, http.MethodPut, rep.Endpoint, path, body)
			switch {
			case err != nil:
				failures[i] = fmt.Sprintf("%s: %v", rep.Endpoint, err)
			case status != http.StatusOK:
				failures[i] = fmt.Sprintf("%s: status %d: %.200s", rep.Endpoint, status, out)
			case answers != nil:
				answers[i] = out
			}
		}()
	}
	wg.Wait()
	var failed []string
	for _, f := range failures {
		if f != "" {
			failed = append(failed, f)
		}
	}
	return failed
}

// fleetSetLevelEverywhere sends a log level change to every replica of every connector.
func (s *Supervisor) fleetSetLevelEverywhere(ctx context.Context, change logging.LevelChange) []string {
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for _, kind := range []config.ConnectorKind{config.KindSource, config.KindSink} {
		for _, c := range s.fleetConnectors(kind) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if f := s.sendToReplicas(ctx, c, "/log_level", levelBody(change), nil); len(f) > 0 {
					mu.Lock()
					failed = append(failed, f...)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return failed
}
