package supervisor

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/fleet"
	"github.com/iggy-connectors-go/runtime/pkg/httpguard"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// attached is the attach mode's state (docs/architecture.md, decision 21): the fleet view and its refresh loop.
type attached struct {
	view *fleet.Fleet
	stop context.CancelFunc
	done chan struct{}

	mergedMu sync.Mutex
	merged   map[string]bool // replica endpoints whose families are in Supervisor.merged

	countsMu sync.Mutex
	counted  map[string]bool // connector labels with runtime series (setFleetCounts)
}

// newAttached prepares a supervisor in attach mode ([fleet] enabled): no runner binary, state
// directory, socket directory or provider; only the fleet view, the API and the runtime gauges.
func newAttached(o Options, e Env, guard *httpguard.Guard) (*Supervisor, error) {
	f := o.Runtime.Fleet
	log := o.Logger
	view, err := fleet.New(fleet.Options{
		Runners: f.Runners, DNS: f.DNS, Refresh: f.Refresh, RunnerAPIKey: f.RunnerAPIKey,
		Scheme: f.Scheme, CAFile: f.CAFile, ServerName: f.ServerName,
		Timeout: e.FleetTimeout, Resolver: o.Resolver, Logger: log.With("component", "fleet"),
	})
	if err != nil {
		return nil, err
	}
	s := &Supervisor{
		env: e, runtime: o.Runtime, environ: o.Environ, log: log, runnerLog: log, guard: guard,
		connectors:   map[config.ConnectorKind]map[string]*managed{},
		registry:     prometheus.NewRegistry(),
		sampler:      metrics.NewSampler(),
		stopSampling: make(chan struct{}),
		fleet:        &attached{view: view},
		offsetsCalls: newGate(maxOffsetsCalls),
	}
	s.runtimeMetrics = metrics.NewRuntime(s.registry)
	s.merged = metrics.NewMerged(s.registry)
	s.metricsHandler = metrics.Handler(s.merged, log)
	return s, nil
}

// startAttached takes a first look at the fleet (bounded by the per-runner timeout, so a dead
// runner does not hold startup up), starts the refresh loop and binds the API.
func (s *Supervisor) startAttached(ctx context.Context) error {
	s.startTime = time.Now()
	view := s.fleet.view
	view.Refresh(ctx)
	snap := view.Snapshot()
	s.log.Info("attach mode: the orchestrator runs the connectors; this supervisor only serves their API",
		"runners", len(snap.Replicas), "not_yet_reached", snap.Pending)
	loopCtx, cancel := context.WithCancel(context.Background())
	s.fleet.stop, s.fleet.done = cancel, make(chan struct{})
	go func() {
		defer close(s.fleet.done)
		view.Run(loopCtx)
	}()
	s.sampleProcesses()
	go s.sampleLoop()
	if s.runtime.HTTP.Enabled {
		if err := s.serveAPI(); err != nil {
			s.Shutdown()
			return err
		}
	}
	return nil
}

// stopAttached ends the refresh loop (Shutdown).
func (s *Supervisor) stopAttached() {
	if s.fleet != nil && s.fleet.stop != nil {
		s.fleet.stop()
		<-s.fleet.done
	}
}
