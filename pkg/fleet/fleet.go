package fleet

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// DefaultTimeout bounds each runner's poll and each forwarded call: a slow or dead runner costs
// no more than this, whatever the fleet's size.
const DefaultTimeout = 500 * time.Millisecond

// StatusUnreachable is a replica's status once it stops answering.
const StatusUnreachable = "unreachable"

// graceRefreshes: a replica gone from discovery stays listed this many refresh periods.
const graceRefreshes = 3

// Options configure a Fleet ([fleet] of the runtime config).
type Options struct {
	Runners      []string      // fleet.runners
	DNS          []string      // fleet.dns
	Refresh      time.Duration // fleet.refresh
	RunnerAPIKey string        // fleet.runner_api_key
	// Scheme is fleet.scheme: how runners are called that name no scheme ("" is http).
	Scheme string
	// CAFile and ServerName are fleet.ca_file and fleet.server_name: the CAs and the name the
	// runners' certificates are verified against over https ("": the system's roots, each
	// endpoint's host).
	CAFile, ServerName string
	// Timeout bounds one runner's poll and one forwarded call; 0 is DefaultTimeout.
	Timeout time.Duration
	// MetricsPath is the runners' metrics route; "" is /metrics.
	MetricsPath string
	// Resolver answers fleet.dns; nil is the system's. Tests point it at their own DNS server.
	Resolver *net.Resolver
	Logger   *slog.Logger
}

// Replica is one runner as last seen.
type Replica struct {
	Endpoint string
	Kind     string // "sink" or "source"
	Key      string
	Status   string // the runner's connector status, or StatusUnreachable
	Role     string // "active" or "standby" for a source sharing a lease; else ""
	PID      int32
	LastSeen time.Time
	// LastError is the runner's, or why it is unreachable.
	LastError *metrics.LastError
	// Stats, Config (the GET /config version object) are the last read, kept while unreachable.
	Stats  metrics.ConnectorStats
	Config []byte
	// Families are its metrics, each series labelled with ReplicaLabel; nil while unreachable.
	Families []*dto.MetricFamily
	// Discovered: discovery still lists its endpoint.
	Discovered bool
}

// Reachable reports whether the replica answered the last poll.
func (r Replica) Reachable() bool { return r.Status != StatusUnreachable }

// Snapshot is the fleet as of one refresh. Replicas are those that answered at least once,
// sorted by kind (sources first), key and endpoint; Pending counts endpoints never reached yet.
type Snapshot struct {
	Taken    time.Time
	Replicas []Replica
	Pending  int
}

// Connector is one connector key with its replicas.
type Connector struct {
	Kind, Key string
	Replicas  []Replica
}

// Connectors groups the replicas of kind by key, in key order.
func (s *Snapshot) Connectors(kind string) []Connector {
	var out []Connector
	for _, r := range s.Replicas {
		if r.Kind != kind {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Key == r.Key {
			out[n-1].Replicas = append(out[n-1].Replicas, r)
			continue
		}
		out = append(out, Connector{Kind: kind, Key: r.Key, Replicas: []Replica{r}})
	}
	return out
}

// Connector finds the replicas of one connector.
func (s *Snapshot) Connector(kind, key string) (Connector, bool) {
	for _, c := range s.Connectors(kind) {
		if c.Key == key {
			return c, true
		}
	}
	return Connector{}, false
}

// entry is a replica with the bookkeeping of its discovery.
type entry struct {
	Replica
	goneSince time.Time // when discovery stopped listing it
	warned    bool      // its failure to answer was logged
}

// Fleet polls the discovered runners every refresh and keeps the last Snapshot.
type Fleet struct {
	opts   Options
	disc   *discoverer
	client *client
	log    *slog.Logger

	refreshMu  sync.Mutex // one refresh at a time
	refreshing atomic.Bool
	entries    map[string]*entry // by endpoint; refreshMu guards it
	snap       atomic.Pointer[Snapshot]
	kick       chan struct{}
}

// New checks the options; nothing is resolved or polled until Refresh or Run.
func New(o Options) (*Fleet, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MetricsPath == "" {
		o.MetricsPath = "/metrics"
	}
	if o.Refresh <= 0 {
		return nil, fmt.Errorf("fleet.refresh: %s: must be positive", o.Refresh)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Scheme == "" {
		o.Scheme = config.FleetSchemeHTTP
	}
	d, err := newDiscoverer(o.Runners, o.DNS, o.Scheme, o.Resolver)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := runnerTLS(o.CAFile, o.ServerName)
	if err != nil {
		return nil, err
	}
	// Polls are bounded by their context (Timeout); forwarded calls choose their own bound.
	transport := &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second,
		DialContext: (&net.Dialer{Timeout: o.Timeout}).DialContext, TLSClientConfig: tlsConfig}
	f := &Fleet{opts: o, disc: d, log: o.Logger, entries: map[string]*entry{}, kick: make(chan struct{}, 1),
		client: &client{http: &http.Client{Transport: transport, CheckRedirect: refuseRedirect}, apiKey: o.RunnerAPIKey, metricsPath: o.MetricsPath}}
	f.snap.Store(&Snapshot{})
	return f, nil
}

// Snapshot is the fleet as of the last finished refresh (empty before the first).
func (f *Fleet) Snapshot() *Snapshot { return f.snap.Load() }

// Stale reports whether the snapshot may be behind: a refresh is running, or the last one finished
// over two refresh periods ago.
func (f *Fleet) Stale() bool {
	return f.refreshing.Load() || time.Since(f.Snapshot().Taken) > 2*f.opts.Refresh
}

// Run refreshes every fleet.refresh (and when Kick asks) until ctx ends.
func (f *Fleet) Run(ctx context.Context) {
	t := time.NewTicker(f.opts.Refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-f.kick:
		}
		f.Refresh(ctx)
	}
}

// Kick asks Run for a refresh now, without waiting for it.
func (f *Fleet) Kick() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Refresh runs discovery and polls every known runner in parallel, each within the timeout, then
// publishes the new snapshot. It takes at most about twice the timeout (DNS, then the polls).
func (f *Fleet) Refresh(ctx context.Context) {
	f.refreshMu.Lock()
	defer f.refreshMu.Unlock()
	f.refreshing.Store(true)
	defer f.refreshing.Store(false)

	dctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	endpoints, errs := f.disc.discover(dctx)
	cancel()
	for _, err := range errs {
		f.log.Warn("fleet discovery: lookup failed; using its previous answer", "error", err)
	}
	now := time.Now()
	listed := make(map[string]bool, len(endpoints))
	for _, ep := range endpoints {
		listed[ep] = true
		if _, ok := f.entries[ep]; !ok {
			f.entries[ep] = &entry{Replica: Replica{Endpoint: ep}}
			f.log.Info("fleet: runner discovered", "endpoint", ep)
		}
	}
	grace := graceRefreshes * f.opts.Refresh
	for ep, e := range f.entries {
		e.Discovered = listed[ep]
		switch {
		case e.Discovered:
			e.goneSince = time.Time{}
		case e.goneSince.IsZero():
			e.goneSince = now
		case now.Sub(e.goneSince) >= grace:
			delete(f.entries, ep)
			f.log.Info("fleet: runner dropped, gone from discovery", "endpoint", ep, "grace", grace)
		}
	}
	var wg sync.WaitGroup
	for _, e := range f.entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
			defer cancel()
			r, err := f.client.poll(pctx, e.Endpoint)
			f.record(e, r, err, time.Now())
		}()
	}
	wg.Wait()
	f.snap.Store(f.snapshot(now))
}

// record applies one poll's outcome to its entry.
func (f *Fleet) record(e *entry, r reading, err error, now time.Time) {
	if err != nil {
		// Logged once per outage; a runner never reached (a wrong key, not a runner) once.
		if !e.warned {
			if e.Key != "" {
				f.log.Warn("fleet: runner unreachable", "endpoint", e.Endpoint, "connector", e.Kind+"/"+e.Key, "error", err)
			} else {
				f.log.Warn("fleet: runner not reached yet; not listed until it answers", "endpoint", e.Endpoint, "error", err)
			}
			e.warned = true
		}
		e.Status, e.Families = StatusUnreachable, nil
		e.LastError = &metrics.LastError{Message: err.Error(), Timestamp: uint64(now.UnixMicro())}
		return
	}
	e.warned = false
	e.Kind, e.Key = r.health.ConnectorType, r.health.Key
	e.Status, e.Role, e.PID = r.health.ConnectorStatus, r.health.Role, r.stats.PID
	if r.stats.Status != "" {
		e.Status = r.stats.Status
	}
	e.LastSeen, e.LastError = now, r.stats.LastError
	e.Stats, e.Config, e.Families = r.stats, r.config, r.families
}

func (f *Fleet) snapshot(taken time.Time) *Snapshot {
	s := &Snapshot{Taken: taken}
	for _, e := range f.entries {
		if e.Key == "" {
			s.Pending++
			continue
		}
		s.Replicas = append(s.Replicas, e.Replica)
	}
	slices.SortFunc(s.Replicas, func(a, b Replica) int {
		if a.Kind != b.Kind {
			if a.Kind == "source" {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Endpoint, b.Endpoint))
	})
	return s
}

// Call sends a bodyless request to one runner within timeout (a pause waits for the batch in
// flight to settle, so it may need longer than a poll); it answers the status and body.
func (f *Fleet) Call(ctx context.Context, timeout time.Duration, method, endpoint, path string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return f.client.do(ctx, method, endpoint, path, "")
}
