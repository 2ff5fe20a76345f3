package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/iggy-connectors-go/runtime/pkg/version"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
)

// restart stops the connector's runner and starts it again with the provider's active config
// (DESIGN decision 6). The new config and its plugin path are checked before anything is stopped,
// so a bad config leaves the running connector as it is. A restart already in progress makes this
// one a no-op, as upstream.
func (s *Supervisor) restart(ctx context.Context, m *managed) error {
	if !m.restarting.CompareAndSwap(false, true) {
		return nil
	}
	defer m.restarting.Store(false)
	if s.closing.Load() {
		return &apiError{status: http.StatusServiceUnavailable, Code: "error", Reason: errShuttingDown.Error()}
	}
	cfg, err := s.provider.Get(ctx, m.kind, m.key)
	if err != nil {
		if errors.Is(err, provider.ErrNotFound) {
			return notRunning(m.kind, m.key)
		}
		m.noteIdleError(err.Error())
		return invalidConfiguration(err.Error())
	}
	path, err := s.prepare(cfg)
	if err != nil {
		m.noteIdleError(err.Error())
		return invalidConfiguration(strings.TrimPrefix(err.Error(), config.ErrInvalidConnector.Error()+": "))
	}
	s.log.Info("restarting connector on request", "connector", m.label(), "version", cfg.Version)
	m.stopLoop()
	if !cfg.Enabled {
		m.mu.Lock()
		m.cfg, m.path, m.status, m.lastErr, m.placeholder = cfg, path, statusStopped, nil, false
		m.mu.Unlock()
		return nil
	}
	if err := <-m.launch(cfg, path); err != nil {
		if errors.Is(err, errShuttingDown) {
			return &apiError{status: http.StatusServiceUnavailable, Code: "error", Reason: err.Error()}
		}
		return invalidConfiguration(err.Error())
	}
	return nil
}

func (s *Supervisor) handleStats(w http.ResponseWriter, r *http.Request) {
	body, _ := json.Marshal(s.Stats(r.Context()))
	writeJSON(w, http.StatusOK, body)
}

// Stats is the /stats document: process figures summed over the supervisor and its runners, and
// one object per connector, read from its runner (or, when the runner does not answer, what the
// supervisor knows).
func (s *Supervisor) Stats(ctx context.Context) metrics.RuntimeStats {
	conns := make([]metrics.ConnectorStats, len(s.ordered))
	live := make([]bool, len(s.ordered))
	var wg sync.WaitGroup
	for i, m := range s.ordered {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[i], live[i] = s.connectorStats(ctx, m)
		}()
	}
	wg.Wait()

	out := metrics.RuntimeStats{
		ConnectorsRuntimeVersion: RuntimeVersion,
		ProcessID:                uint32(os.Getpid()),
		StartTime:                uint64(s.startTime.UnixMicro()),
		RunTime:                  uint64(max(0, time.Since(s.startTime).Microseconds())),
		Connectors:               conns,
	}
	if v, ok := version.Semver(RuntimeVersion); ok {
		out.ConnectorsRuntimeVersionSemver = &v
	}
	var cpu float64
	if p, err := s.sampler.Process(int32(os.Getpid())); err == nil {
		out.MemoryUsage += p.RSS
		cpu += p.CPUUsage
	}
	// Each runner measured itself for its own object (RSS, CPU since its previous /stats): summing
	// those avoids reading every runner's /proc files a second time.
	for i, c := range conns {
		if live[i] {
			out.MemoryUsage += c.MemoryUsage
			cpu += float64(c.CPUUsage)
		}
	}
	if h, err := s.sampler.Host(); err == nil {
		out.CPUUsage = metrics.Float32(min(cpu, float64(h.NumCPU)*100))
		out.TotalCPUUsage = metrics.Float32(h.TotalCPUUsage)
		out.TotalMemory, out.AvailableMemory = h.TotalMemory, h.AvailableMemory
	}
	s.updateRunning()
	out.SourcesTotal, out.SourcesRunning, out.SinksTotal, out.SinksRunning = s.runtimeMetrics.Counts()
	return out
}

// connectorStats reads one connector's object from its runner; live says whether it answered.
func (s *Supervisor) connectorStats(ctx context.Context, m *managed) (metrics.ConnectorStats, bool) {
	sn := m.snapshot()
	if sn.proc != nil && !sn.proc.exited() {
		cctx, cancel := context.WithTimeout(ctx, s.env.RunnerCallLimit)
		st, err := sn.proc.stats(cctx)
		cancel()
		if err == nil {
			m.noteStats(sn.proc, st)
			sn.carried.addTo(&st)
			st.PID = int32(sn.proc.pid)
			st.Restarts = sn.restarts
			st.Enabled = sn.cfg.Enabled
			return st, true
		}
	}
	var unanswered error
	if sn.proc != nil && !sn.proc.exited() {
		unanswered = fmt.Errorf("runner pid %d does not answer", sn.proc.pid)
	}
	st := metrics.ConnectorStats{
		Key: m.key, Name: sn.cfg.Name, ConnectorType: string(m.kind), Version: sn.version,
		Status: sn.status, Enabled: sn.cfg.Enabled, LastError: sn.lastErr, Restarts: sn.restarts,
	}
	if unanswered != nil {
		// Alive but silent (hung, stopped, overloaded): down for this answer.
		st.Status = statusError
		st.LastError = &metrics.LastError{Message: unanswered.Error(), Timestamp: uint64(time.Now().UnixMicro())}
		st.PID = int32(sn.proc.pid)
	}
	if v, ok := version.Semver(sn.version); ok {
		st.VersionSemver = &v
	}
	zero := func() *uint64 { v := uint64(0); return &v }
	if m.kind == config.KindSource {
		st.MessagesProduced, st.MessagesSent = zero(), zero()
	} else {
		st.MessagesConsumed, st.MessagesProcessed = zero(), zero()
	}
	st.MessagesFiltered = zero()
	sn.carried.addTo(&st)
	return st, false
}

// updateRunning sets the running gauges from the connectors' current statuses (counted, so they
// cannot drift as upstream's increments can).
func (s *Supervisor) updateRunning() {
	var sources, sinks uint32
	for _, m := range s.ordered {
		if m.snapshot().status != statusRunning {
			continue
		}
		if m.kind == config.KindSource {
			sources++
		} else {
			sinks++
		}
	}
	s.runtimeMetrics.SetRunning(sources, sinks)
}

func (s *Supervisor) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.refreshMetrics(r.Context())
	s.metricsHandler.ServeHTTP(w, r)
}

// refreshMetrics scrapes every runner in parallel. A runner that does not answer is marked down
// (iggy_connector_up 0) and its families left out; it never fails the scrape.
func (s *Supervisor) refreshMetrics(ctx context.Context) {
	var wg sync.WaitGroup
	for _, m := range s.ordered {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sn := m.snapshot()
			up := false
			if sn.proc != nil && !sn.proc.exited() {
				cctx, cancel := context.WithTimeout(ctx, s.env.RunnerCallLimit)
				families, err := sn.proc.metricFamilies(cctx)
				cancel()
				if err == nil {
					if sn.carried != (counts{}) {
						families = addCounters(families, sn.carried.families(m.key, string(m.kind)))
					}
					s.merged.Set(m.label(), families)
					up = true
				} else {
					s.log.Warn("runner metrics unavailable", "connector", m.label(), "error", err)
				}
			}
			if !up {
				// The counters of earlier runs stay visible while the runner is down.
				if sn.carried != (counts{}) {
					s.merged.Set(m.label(), sn.carried.families(m.key, string(m.kind)))
				} else {
					s.merged.Remove(m.label())
				}
			}
			s.runtimeMetrics.SetUp(m.key, string(m.kind), up)
		}()
	}
	wg.Wait()
	s.updateRunning()
}
