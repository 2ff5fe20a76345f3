package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/atomicfile"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// Run-time overrides of a connector (docs/runtime-changes.md): a log filter and a rate limit an
// operator set through the API while it runs. The supervisor hands them to every runner it starts
// for the connector within the same life loop, so a runner restarted after a crash keeps them; an
// operator's restart, start after a stop, or activation starts a new loop with the configured
// values again. A log filter set with "persist": true is kept in the connector's target-state
// file and survives those and supervisor restarts, until it is reset.
type runtimeOverrides struct {
	logFilter    *string           // RUST_LOG of new runners; nil: the configured filter
	logPersisted bool              // logFilter is in the target-state file
	rate         *config.RateLimit // [rate_limit] of new runners, when rateSet
	rateSet      bool
}

// dropRuntimeOverridesLocked forgets the overrides that do not outlive a life loop. Called with
// m.mu held, by launch.
func (m *managed) dropRuntimeOverridesLocked() {
	if !m.overrides.logPersisted {
		m.overrides.logFilter = nil
	}
	m.overrides.rate, m.overrides.rateSet = nil, false
}

// withOverrides is the connector config and the RUST_LOG ("" for none) a new runner gets.
func (m *managed) withOverrides(cfg config.Connector) (config.Connector, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.overrides
	if o.rateSet {
		cfg = cfg.Clone()
		cfg.RateLimit = o.rate
	}
	if o.logFilter != nil {
		return cfg, *o.logFilter
	}
	return cfg, ""
}

// runnerOverrides applies a connector's overrides to a runner's config and environment.
func (s *Supervisor) runnerOverrides(m *managed, cfg config.Connector) (config.Connector, []string) {
	cfg, filter := m.withOverrides(cfg)
	if filter == "" {
		return cfg, nil
	}
	return cfg, []string{"RUST_LOG=" + filter} // after the inherited one: the last wins
}

// targetFileMu serialises the read-modify-write of target-state files (the target and the
// persisted log filter share one file).
var targetFileMu sync.Mutex

// targetFileDoc reads a connector's target-state file; a missing file is a zero document.
func (s *Supervisor) targetFileDoc(kind config.ConnectorKind, key string) (targetFile, error) {
	var doc targetFile
	data, err := os.ReadFile(s.targetPath(kind, key))
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &doc)
	}
	return doc, err
}

// saveLogFilter keeps filter (nil: none) in the connector's target-state file, beside its target.
func (s *Supervisor) saveLogFilter(m *managed, filter *string) error {
	targetFileMu.Lock()
	defer targetFileMu.Unlock()
	doc, err := s.targetFileDoc(m.kind, m.key)
	if err != nil {
		return fmt.Errorf("read the target-state file of %s: %w", m.label(), err)
	}
	if doc.Target == "" {
		m.mu.Lock()
		doc.Target = m.target
		m.mu.Unlock()
	}
	doc.LogFilter, doc.UpdatedAt = filter, time.Now().UTC().Format(time.RFC3339)
	data, _ := json.Marshal(doc)
	if err := atomicfile.Write(s.targetPath(m.kind, m.key), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save the log filter of %s: %w", m.label(), err)
	}
	return nil
}

// loadPersistedLogFilter reads a persisted log filter at startup; one that no longer parses is
// logged and left out (the connector starts with the configured filter).
func (s *Supervisor) loadPersistedLogFilter(m *managed) {
	if config.ValidKey(m.key) != nil {
		return
	}
	doc, err := s.targetFileDoc(m.kind, m.key)
	if err != nil || doc.LogFilter == nil {
		return // an unreadable file is reported by loadTarget
	}
	if _, err := logging.ParseFilter(*doc.LogFilter); err != nil {
		s.log.Error("the persisted log filter does not parse; the connector starts with the configured one",
			"connector", m.label(), "file", s.targetPath(m.kind, m.key), "filter", *doc.LogFilter, "error", err)
		return
	}
	m.mu.Lock()
	m.overrides.logFilter, m.overrides.logPersisted = doc.LogFilter, true
	m.mu.Unlock()
}

// send makes one request with a JSON body to the runner's endpoint and returns the status and at
// most 1 MiB of the answer.
func (c *child) send(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, runnerBaseURL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("runner pid %d %s %s: %w", c.pid, method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("runner pid %d %s %s: %w", c.pid, method, path, err)
	}
	return resp.StatusCode, out, nil
}

// tellRunnerJSON sends a run-time change to the connector's live runner, if it has one: its
// answer's body (nil with no runner), or an error naming what went wrong.
func (s *Supervisor) tellRunnerJSON(ctx context.Context, m *managed, method, path string, body []byte) ([]byte, error) {
	c := m.snapshot().proc
	if !c.alive() {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.env.RunnerCallLimit)
	defer cancel()
	status, out, err := c.send(ctx, method, path, body)
	if err != nil {
		if c.exited() {
			return nil, nil // it died meanwhile: its successor starts with the override
		}
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("runner pid %d %s %s: status %d: %s", c.pid, method, path, status, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// runnerUnreachable answers 502 when a live runner did not take a change (it applies to its
// successors all the same).
func runnerUnreachable(m *managed, err error) *apiError {
	return &apiError{status: http.StatusBadGateway, Code: "runner_failed",
		Reason: fmt.Sprintf("the runner of %s %q did not take the change (its next runner will): %v", m.kind, m.key, err)}
}
