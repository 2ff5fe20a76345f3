package supervisor

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/fleet"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

func (s *Supervisor) handleFleetStats(w http.ResponseWriter, _ *http.Request) {
	body, _ := json.Marshal(s.fleetStats())
	writeJSON(w, http.StatusOK, body)
}

// fleetStats is /stats in attach mode: per connector the counters summed over its replicas (an
// unreachable one's last counters included, so totals never drop), process figures summed over
// the reachable runners plus the supervisor, *_running counting connectors, not replicas.
func (s *Supervisor) fleetStats() metrics.RuntimeStats {
	figures := s.latestFigures()
	var memory uint64
	var cpu float64
	if p, ok := figures.procs[int32(os.Getpid())]; ok {
		memory, cpu = p.RSS, p.CPUUsage
	}
	var conns []metrics.ConnectorStats
	for _, kind := range []config.ConnectorKind{config.KindSource, config.KindSink} {
		for _, c := range s.fleetConnectors(kind) {
			st := connectorOverReplicas(c)
			memory += st.MemoryUsage
			cpu += float64(st.CPUUsage)
			conns = append(conns, st)
		}
	}
	if conns == nil {
		conns = []metrics.ConnectorStats{}
	}
	s.setFleetCounts()
	return s.runtimeStats(conns, memory, cpu, figures)
}

// connectorOverReplicas is one connector's /stats object: the replicas' counters summed, status,
// pid, error, version and times from its primary replica, memory and CPU of the reachable ones.
func connectorOverReplicas(c fleetConnector) metrics.ConnectorStats {
	each := make([]metrics.ConnectorStats, len(c.replicas))
	for i, r := range c.replicas {
		each[i] = r.Stats
		if !r.Reachable() {
			each[i].MemoryUsage, each[i].CPUUsage = 0, 0
		}
	}
	st := metrics.SumReplicas(each)
	p := c.primary
	st.Key, st.ConnectorType, st.Status, st.PID = p.Key, p.Kind, p.Status, p.PID
	st.Name, st.Version, st.VersionSemver, st.Enabled = p.Stats.Name, p.Stats.Version, p.Stats.VersionSemver, p.Stats.Enabled
	st.StartTime, st.RunTime, st.LastError = p.Stats.StartTime, p.Stats.RunTime, p.LastError
	if !p.Reachable() {
		st.PID, st.StartTime, st.RunTime = 0, 0, 0
	}
	return st
}

// setFleetCounts sets the runtime gauges from the snapshot: connectors total and running (a
// connector runs when its primary replica does), and each connector's up and state.
func (s *Supervisor) setFleetCounts() {
	var totals, running [2]uint32 // sources, sinks
	s.fleet.countsMu.Lock()
	defer s.fleet.countsMu.Unlock()
	seen := map[string]bool{}
	for i, kind := range []config.ConnectorKind{config.KindSource, config.KindSink} {
		for _, c := range s.fleetConnectors(kind) {
			seen[labelOf(kind, c.primary.Key)] = true
			totals[i]++
			if c.primary.Status == statusRunning {
				running[i]++
			}
			s.runtimeMetrics.SetUp(c.primary.Key, string(kind), c.primary.Reachable())
			s.runtimeMetrics.SetState(c.primary.Key, string(kind), c.primary.Status)
		}
	}
	for label := range s.fleet.counted {
		if !seen[label] {
			kind, key, _ := strings.Cut(label, "/")
			s.runtimeMetrics.Forget(key, kind)
		}
	}
	s.fleet.counted = seen
	s.runtimeMetrics.SetTotals(totals[0], totals[1])
	s.runtimeMetrics.SetRunning(running[0], running[1])
}

func (s *Supervisor) handleFleetMetrics(w http.ResponseWriter, r *http.Request) {
	s.refreshFleetMetrics(s.fleet.view.Snapshot())
	s.metricsHandler.ServeHTTP(w, r)
}

// refreshFleetMetrics puts every reachable replica's families (labelled with their replica) in
// the merged gatherer and drops the others'.
func (s *Supervisor) refreshFleetMetrics(snap *fleet.Snapshot) {
	s.fleet.mergedMu.Lock()
	defer s.fleet.mergedMu.Unlock()
	keep := map[string]bool{}
	for _, r := range snap.Replicas {
		if r.Reachable() && len(r.Families) > 0 {
			s.merged.Set(r.Endpoint, r.Families)
			keep[r.Endpoint] = true
		}
	}
	for ep := range s.fleet.merged {
		if !keep[ep] {
			s.merged.Remove(ep)
		}
	}
	s.fleet.merged = keep
	s.setFleetCounts()
}
