package supervisor

import (
	"os"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// sampleEvery is how often the process figures of the supervisor and every runner are read.
const sampleEvery = time.Second

// processFigures are the latest sample: memory and CPU per pid (the supervisor's own included),
// and the host's figures.
type processFigures struct {
	procs   map[int32]metrics.ProcessStats
	host    metrics.HostStats
	hostErr error
}

// sampleLoop samples every sampleEvery until Shutdown, so /stats never reads /proc itself: its
// memory and CPU figures are at most one interval old, CPU shares are over the last interval.
func (s *Supervisor) sampleLoop() {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stopSampling:
			return
		case <-t.C:
			s.sampleProcesses()
		}
	}
}

// sampleProcesses reads the figures of the supervisor and of every live runner in one pass.
func (s *Supervisor) sampleProcesses() {
	pids := []int32{int32(os.Getpid())}
	for _, m := range s.ordered {
		if c := m.snapshot().proc; c.alive() {
			pids = append(pids, int32(c.pid))
		}
	}
	f := processFigures{procs: s.sampler.Processes(pids)}
	f.host, f.hostErr = s.sampler.Host()
	s.figuresMu.Lock()
	s.figures = f
	s.figuresMu.Unlock()
}

func (s *Supervisor) latestFigures() processFigures {
	s.figuresMu.Lock()
	defer s.figuresMu.Unlock()
	return s.figures
}

// connectorProcesses are the latest figures of every connector whose runner is live, for the
// memory and CPU families of /metrics.
func (s *Supervisor) connectorProcesses() []metrics.ConnectorProcess {
	figures := s.latestFigures()
	var out []metrics.ConnectorProcess
	for _, m := range s.ordered {
		c := m.snapshot().proc
		if !c.alive() {
			continue
		}
		if p, ok := figures.procs[int32(c.pid)]; ok {
			out = append(out, metrics.ConnectorProcess{Key: m.key, Kind: string(m.kind), Process: p})
		}
	}
	return out
}
