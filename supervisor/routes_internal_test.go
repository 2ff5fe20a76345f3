package supervisor

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Both modes serve the same routes (method and pattern), so a client, the console and the command
// line work against either: attach mode answers each one, or answers 409 where the orchestrator
// owns what the route would change.
func TestSpawnAndFleetModesListTheSameRoutes(t *testing.T) {
	spawn, fleet := routeTables(t)
	if missing := difference(spawn.patterns, fleet.patterns); len(missing) > 0 {
		t.Errorf("routes of the spawn mode (supervisor/api.go) missing in attach mode (supervisor/fleet_api.go):\n  %s", strings.Join(missing, "\n  "))
	}
	if extra := difference(fleet.patterns, spawn.patterns); len(extra) > 0 {
		t.Errorf("routes of attach mode (supervisor/fleet_api.go) missing in the spawn mode (supervisor/api.go):\n  %s", strings.Join(extra, "\n  "))
	}
	for _, pattern := range fleet.patterns {
		method, path, _ := strings.Cut(pattern, " ")
		req := httptest.NewRequest(method, requestPath(path), nil)
		ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
		rec := httptest.NewRecorder()
		fleet.ServeHTTP(rec, req.WithContext(ctx))
		cancel()
		body := rec.Body.String()
		switch {
		case rec.Code == http.StatusMethodNotAllowed || rec.Code == http.StatusNotFound && strings.HasPrefix(body, "404 page not found"):
			t.Errorf("attach mode: %s %s: the mux's own %d: the route is not served", method, req.URL.Path, rec.Code)
		case rec.Code == http.StatusConflict && !strings.Contains(body, `"attach_mode"`):
			t.Errorf("attach mode: %s %s: 409 without code attach_mode: %s", method, req.URL.Path, body)
		case rec.Code == http.StatusConflict:
			t.Logf("attach mode: %-45s 409 attach_mode", pattern)
		default:
			t.Logf("attach mode: %-45s served (%d for connector key %q)", pattern, rec.Code, "nokey")
		}
	}
}

// routeTables builds the route tables of a spawn-mode and an attach-mode supervisor (neither is
// started).
func routeTables(t *testing.T) (spawn, fleet *routeTable) {
	t.Helper()
	exe, err := os.Executable() // any executable passes for the runner binary: none is started
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	rt := config.DefaultRuntime()
	rt.State.Path = t.TempDir()
	rt.HTTP.Metrics.Enabled = true // its route too
	s, err := New(Options{Runtime: rt, Logger: log, Environ: []string{"IGGY_SUPERVISOR_RUNNER_PATH=" + exe}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown) // never started: this removes its runtime directory
	if spawn, err = s.routes(); err != nil {
		t.Fatal(err)
	}
	rt.Fleet.Enabled = true
	rt.Fleet.Runners = []string{"127.0.0.1:9"}
	a, err := New(Options{Runtime: rt, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Shutdown)
	if fleet, err = a.fleetRoutes(); err != nil {
		t.Fatal(err)
	}
	return spawn, fleet
}

// difference lists the patterns of a that b lacks.
func difference(a, b []string) []string {
	var out []string
	for _, p := range a {
		if !slices.Contains(b, p) {
			out = append(out, p)
		}
	}
	return out
}

// requestPath is a path a pattern matches: wildcards filled with an unknown key or a version.
func requestPath(pattern string) string {
	r := strings.NewReplacer("{$}", "", "{key}", "nokey", "{version}", "1")
	return r.Replace(pattern)
}
