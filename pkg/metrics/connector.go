package metrics

import (
	"errors"
	"fmt"
	"github.com/iggy-connectors-go/runtime/pkg/version"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Connector status values (http-api.md §5.2).
const (
	StatusStarting = "starting"
	StatusRunning  = "running"
	StatusStopping = "stopping"
	StatusStopped  = "stopped"
	StatusError    = "error"
)

// ErrInvalidKind is returned for a connector kind other than "sink" or "source".
var ErrInvalidKind = errors.New(`connector kind must be "sink" or "source"`)

// connectorVecs are the labelled families shared by every Connector of one
// registry, as upstream keeps them in one registry for all connectors.
type connectorVecs struct {
	produced, sent, consumed, processed, filtered, errors *prometheus.CounterVec
	stages                                                *prometheus.HistogramVec
}

func newConnectorVecs() *connectorVecs {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help},
			[]string{LabelConnectorKey, LabelConnectorType})
	}
	return &connectorVecs{
		produced:  counter(FamilyMessagesProduced, helpMessagesProduced),
		sent:      counter(FamilyMessagesSent, helpMessagesSent),
		consumed:  counter(FamilyMessagesConsumed, helpMessagesConsumed),
		processed: counter(FamilyMessagesProcessed, helpMessagesProcessed),
		filtered:  counter(FamilyMessagesFiltered, helpMessagesFiltered),
		errors:    counter(FamilyErrors, helpErrors),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: FamilyStageDuration, Help: helpStageDuration, Buckets: StageBuckets,
		}, []string{LabelConnectorKey, LabelConnectorType, LabelStage}),
	}
}

// register registers every family, reusing families that an earlier
// Connector already registered in reg.
func (v *connectorVecs) register(reg prometheus.Registerer) error {
	for _, p := range []**prometheus.CounterVec{&v.produced, &v.sent, &v.consumed, &v.processed, &v.filtered, &v.errors} {
		if err := registerOrReuse(reg, p); err != nil {
			return err
		}
	}
	return registerOrReuse(reg, &v.stages)
}

func registerOrReuse[C prometheus.Collector](reg prometheus.Registerer, c *C) error {
	err := reg.Register(*c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		existing, ok := already.ExistingCollector.(C)
		if !ok {
			return fmt.Errorf("register metric family: a different collector of type %T holds the name", already.ExistingCollector)
		}
		*c = existing
		return nil
	}
	if err != nil {
		return fmt.Errorf("register metric family: %w", err)
	}
	return nil
}

// lazyCounter is a pre-curried series created on first use, because upstream
// creates a series only when it is first incremented or read (§4.3.3).
type lazyCounter struct {
	once sync.Once
	vec  *prometheus.CounterVec
	c    prometheus.Counter
	key  string
	kind string
}

func (l *lazyCounter) get() prometheus.Counter {
	l.once.Do(func() { l.c = l.vec.WithLabelValues(l.key, l.kind) })
	return l.c
}

func (l *lazyCounter) value() uint64 {
	var m dto.Metric
	if err := l.get().Write(&m); err != nil {
		return 0
	}
	return uint64(m.GetCounter().GetValue())
}

type lazyObserver struct {
	once  sync.Once
	vec   *prometheus.HistogramVec
	o     prometheus.Observer
	key   string
	kind  string
	stage string
}

func (l *lazyObserver) get() prometheus.Observer {
	l.once.Do(func() { l.o = l.vec.WithLabelValues(l.key, l.kind, l.stage) })
	return l.o
}

var knownStages = [...]string{StageDecode, StagePrepare, StageFFI, StageIggySend, StageStateSave, StageTotal}

// Connector is one connector's metric series plus the identity and status
// its /stats object reports. The counting methods are safe for concurrent
// use and cheap enough for the hot path: each series is resolved once.
type Connector struct {
	key, kind string
	vecs      *connectorVecs

	produced, sent, consumed, processed, filtered, errors lazyCounter
	stages                                                [len(knownStages)]lazyObserver

	startTime time.Time
	process   *Sampler

	mu        sync.Mutex
	name      string
	version   string
	enabled   bool
	status    string
	lastError *LastError
}

// NewConnector registers (or reuses) the connector families in reg and
// returns the series of connector key of kind "sink" or "source". A nil reg
// keeps the families unregistered. It panics on an invalid kind or a name
// clash in reg, as prometheus.MustRegister does; TryNewConnector returns
// those as errors.
func NewConnector(reg prometheus.Registerer, key, kind string) *Connector {
	c, err := TryNewConnector(reg, key, kind)
	if err != nil {
		panic(err)
	}
	return c
}

// TryNewConnector is NewConnector returning errors instead of panicking.
func TryNewConnector(reg prometheus.Registerer, key, kind string) (*Connector, error) {
	if kind != KindSink && kind != KindSource {
		return nil, fmt.Errorf("connector %q: kind %q: %w", key, kind, ErrInvalidKind)
	}
	vecs := newConnectorVecs()
	if reg != nil {
		if err := vecs.register(reg); err != nil {
			return nil, fmt.Errorf("connector %q: %w", key, err)
		}
	}
	c := &Connector{
		key: key, kind: kind, vecs: vecs,
		startTime: time.Now(),
		process:   NewSampler(),
		name:      key,
		version:   "unknown",
		enabled:   true,
		status:    StatusStarting,
	}
	for _, p := range []struct {
		l   *lazyCounter
		vec *prometheus.CounterVec
	}{
		{&c.produced, vecs.produced}, {&c.sent, vecs.sent}, {&c.consumed, vecs.consumed},
		{&c.processed, vecs.processed}, {&c.filtered, vecs.filtered}, {&c.errors, vecs.errors},
	} {
		p.l.vec, p.l.key, p.l.kind = p.vec, key, kind
	}
	for i, stage := range knownStages {
		c.stages[i].vec, c.stages[i].key, c.stages[i].kind, c.stages[i].stage = vecs.stages, key, kind, stage
	}
	return c, nil
}

// Key returns the connector key.
func (c *Connector) Key() string { return c.key }

// Kind returns "sink" or "source".
func (c *Connector) Kind() string { return c.kind }

// AddProduced counts messages a source plugin handed over (before decoding).
// The series is created even for n = 0, as upstream does.
func (c *Connector) AddProduced(n uint64) { c.produced.get().Add(float64(n)) }

// AddSent counts messages a source sent to Iggy.
func (c *Connector) AddSent(n uint64) { c.sent.get().Add(float64(n)) }

// AddConsumed counts messages a sink took from Iggy (one flushed batch).
func (c *Connector) AddConsumed(n uint64) { c.consumed.get().Add(float64(n)) }

// AddProcessed counts messages handed to the sink plugin.
func (c *Connector) AddProcessed(n uint64) { c.processed.get().Add(float64(n)) }

// AddFiltered counts messages a transform dropped; n = 0 creates no series.
func (c *Connector) AddFiltered(n uint64) {
	if n > 0 {
		c.filtered.get().Add(float64(n))
	}
}

// IncErrors counts one error.
func (c *Connector) IncErrors() { c.errors.get().Inc() }

// AddErrors counts n errors at once (per-batch sums); n = 0 creates no series.
func (c *Connector) AddErrors(n uint64) {
	if n > 0 {
		c.errors.get().Add(float64(n))
	}
}

// CreateErrorSeries creates the errors series at 0 if absent: upstream does
// so whenever a source starts forwarding (§4.3.3).
func (c *Connector) CreateErrorSeries() { c.errors.get() }

// ObserveStage records one batch stage duration. Stage names outside the
// Stage* constants are recorded too, on a slower path.
func (c *Connector) ObserveStage(stage string, d time.Duration) {
	for i := range knownStages {
		if knownStages[i] == stage {
			c.stages[i].get().Observe(d.Seconds())
			return
		}
	}
	c.vecs.stages.WithLabelValues(c.key, c.kind, stage).Observe(d.Seconds())
}

// SetInfo sets the display name, the version the plugin reports
// ("unknown" when it could not be loaded) and the enabled flag.
func (c *Connector) SetInfo(name, version string, enabled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.name, c.version, c.enabled = name, version, enabled
}

// SetStatus moves the connector to status; running and stopped clear the
// last error, the other statuses keep it (http-api.md §5.2).
func (c *Connector) SetStatus(status string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = status
	if status == StatusRunning || status == StatusStopped {
		c.lastError = nil
	}
}

// SetError moves the connector to status error with message as last_error.
func (c *Connector) SetError(message string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = StatusError
	c.lastError = &LastError{Message: message, Timestamp: uint64(time.Now().UnixMicro())}
}

// Status returns the current status and last error (nil when none).
func (c *Connector) Status() (string, *LastError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastError == nil {
		return c.status, nil
	}
	le := *c.lastError
	return c.status, &le
}

// Snapshot returns the connector's /stats object. Like upstream it creates
// the kind's counter series at 0 when absent (§4.3.3). Process figures are
// this process's: the runner hosts exactly one connector. cpu_usage is the
// share since the previous Snapshot (0 on the first call).
func (c *Connector) Snapshot() ConnectorStats {
	c.mu.Lock()
	s := ConnectorStats{
		Key: c.key, Name: c.name, ConnectorType: c.kind, Version: c.version,
		Status: c.status, Enabled: c.enabled,
	}
	if c.lastError != nil {
		le := *c.lastError
		s.LastError = &le
	}
	c.mu.Unlock()

	if v, ok := version.Semver(s.Version); ok {
		s.VersionSemver = &v
	}
	if c.kind == KindSource {
		s.MessagesProduced = ptr(c.produced.value())
		s.MessagesSent = ptr(c.sent.value())
	} else {
		s.MessagesConsumed = ptr(c.consumed.value())
		s.MessagesProcessed = ptr(c.processed.value())
	}
	s.MessagesFiltered = ptr(c.filtered.value())
	s.Errors = c.errors.value()

	s.PID = int32(os.Getpid())
	now := time.Now()
	s.StartTime = uint64(c.startTime.UnixMicro())
	s.RunTime = uint64(max(now.Sub(c.startTime).Microseconds(), 0))
	if p, err := c.process.Process(s.PID); err == nil {
		s.MemoryUsage = p.RSS
		s.CPUUsage = Float32(p.CPUUsage)
	}
	return s
}

func ptr[T any](v T) *T { return &v }
