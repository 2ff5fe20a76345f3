package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/version"
)

func (s *Supervisor) handleStats(w http.ResponseWriter, r *http.Request) {
	body, _ := json.Marshal(s.Stats(r.Context()))
	writeJSON(w, http.StatusOK, body)
}

// Stats is the /stats document: process figures summed over the supervisor and its runners (from
// the latest once-a-second sample), and one object per connector, composed from its stats page and
// what the supervisor knows. No runner is asked, so a hung or silent runner cannot slow it.
func (s *Supervisor) Stats(context.Context) metrics.RuntimeStats {
	figures := s.latestFigures()
	conns := make([]metrics.ConnectorStats, len(s.ordered))
	var memory uint64
	var cpu float64
	if p, ok := figures.procs[int32(os.Getpid())]; ok {
		memory, cpu = p.RSS, p.CPUUsage
	}
	for i, m := range s.ordered {
		var live bool
		conns[i], live = s.connectorStats(m, figures)
		if live {
			memory += conns[i].MemoryUsage
			cpu += float64(conns[i].CPUUsage)
		}
	}
	s.updateRunning()
	return s.runtimeStats(conns, memory, cpu, figures)
}

// runtimeStats is the /stats document around conns, in both modes: memory and cpu are the sums
// over the supervisor and the runners, the host figures from the latest sample, the connector
// counts from the runtime gauges.
func (s *Supervisor) runtimeStats(conns []metrics.ConnectorStats, memory uint64, cpu float64, figures processFigures) metrics.RuntimeStats {
	out := metrics.RuntimeStats{
		ConnectorsRuntimeVersion: RuntimeVersion,
		ProcessID:                uint32(os.Getpid()),
		MemoryUsage:              memory,
		StartTime:                uint64(s.startTime.UnixMicro()),
		RunTime:                  uint64(max(0, time.Since(s.startTime).Microseconds())),
		Connectors:               conns,
	}
	if v, ok := version.Semver(RuntimeVersion); ok {
		out.ConnectorsRuntimeVersionSemver = &v
	}
	if h := figures.host; figures.hostErr == nil {
		out.CPUUsage = metrics.Float32(min(cpu, float64(h.NumCPU)*100))
		out.TotalCPUUsage = metrics.Float32(h.TotalCPUUsage)
		out.TotalMemory, out.AvailableMemory = h.TotalMemory, h.AvailableMemory
	}
	out.SourcesTotal, out.SourcesRunning, out.SinksTotal, out.SinksRunning = s.runtimeMetrics.Counts()
	return out
}

// runnerAttached reports whether proc is a live runner process attached to the connector's page.
func runnerAttached(m *managed, proc *child) bool {
	return proc.alive() && m.page.RunnerPID() == int32(proc.pid)
}

// runnerAnswers reports whether the connector has a runner process that is attached to its page
// and beat within the runner timeout.
func (s *Supervisor) runnerAnswers(m *managed, proc *child, pagePID int32) bool {
	return proc.alive() && pagePID == int32(proc.pid) && m.page.HeartbeatAge() <= s.env.RunnerCallLimit
}

// connectorStats is one connector's object: counters from its page (they count on across runner
// restarts and survive crashes), status and last error as its live runner published them, else
// the supervisor's; live says whether a runner answers.
func (s *Supervisor) connectorStats(m *managed, figures processFigures) (metrics.ConnectorStats, bool) {
	sn := m.snapshot()
	alive := sn.proc.alive()
	attached := runnerAttached(m, sn.proc)
	// A read creates the counter series at 0, as a runner's own /stats does; a connector that
	// never had a runner keeps none.
	st := m.page.Stats(attached)
	st.Name, st.Enabled, st.Restarts = sn.cfg.Name, sn.cfg.Enabled, sn.restarts
	if attached && st.PID == int32(sn.proc.pid) && st.Status != "" {
		if !s.runnerAnswers(m, sn.proc, st.PID) {
			// Alive but silent (stopped, starved): down for this answer.
			st.Status = statusError
			st.LastError = &metrics.LastError{
				Message:   fmt.Sprintf("runner pid %d does not answer (no heartbeat for %s)", sn.proc.pid, m.page.HeartbeatAge().Round(time.Millisecond)),
				Timestamp: uint64(time.Now().UnixMicro()),
			}
			st.StartTime, st.RunTime = 0, 0
			return st, false
		}
		if p, ok := figures.procs[st.PID]; ok {
			st.MemoryUsage, st.CPUUsage = p.RSS, metrics.Float32(p.CPUUsage)
		}
		if st.LastError == nil {
			st.LastError = sn.lastErr // the supervisor's own note (a corrupt target file, say), as GET /sinks shows it
		}
		return st, true
	}
	// No runner attached: what the supervisor knows.
	st.Status, st.LastError, st.Version = sn.status, sn.lastErr, sn.version
	st.VersionSemver = nil
	if v, ok := version.Semver(sn.version); ok {
		st.VersionSemver = &v
	}
	st.PID, st.StartTime, st.RunTime = 0, 0, 0
	if alive {
		st.PID = int32(sn.proc.pid)
	}
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

// statusShown is the status /stats shows for the connector (connectorStats), read without creating
// counter series: its live runner's, error for a runner that does not answer (answers is
// runnerAnswers, as the up gauge has it), else the supervisor's.
func statusShown(m *managed, sn snapshot, answers bool) string {
	if !runnerAttached(m, sn.proc) {
		return sn.status
	}
	if !answers {
		return statusError
	}
	if status := m.page.Status(); status != "" && m.page.RunnerPID() == int32(sn.proc.pid) {
		return status
	}
	return sn.status
}

func (s *Supervisor) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.refreshMetrics()
	s.metricsHandler.ServeHTTP(w, r)
}

// refreshMetrics takes every connector's families from its stats page (what earlier runners
// counted included) and marks a connector up while its runner answers. No runner is asked.
func (s *Supervisor) refreshMetrics() {
	for _, m := range s.ordered {
		sn := m.snapshot()
		if families := m.page.Families(); len(families) > 0 {
			s.merged.Set(m.label(), families)
		} else {
			s.merged.Remove(m.label())
		}
		up := s.runnerAnswers(m, sn.proc, m.page.RunnerPID())
		s.runtimeMetrics.SetUp(m.key, string(m.kind), up)
		s.runtimeMetrics.SetState(m.key, string(m.kind), statusShown(m, sn, up))
	}
	s.refreshRestartLimits() // restartlimit.go
	s.updateRunning()
}
