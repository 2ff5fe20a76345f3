package metrics

import (
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// throttleCells count the time a connector waited for its rate limit ([rate_limit], ours): a
// sink before it hands a batch to its plugin, a source before it sends one to Iggy. Shown in
// /stats as throttled_seconds and in /metrics as iggy_connector_throttled_seconds_total once the
// connector has a rate limit (ShowThrottled) or waited at all, so a connector without one keeps
// upstream's shapes.
type throttleCells struct {
	nanos atomic.Uint64 // waited, in nanoseconds
	shown atomic.Uint64 // 1 once the connector has a rate limit
}

// AddThrottled counts d spent waiting for the connector's rate limit.
func (c *Connector) AddThrottled(d time.Duration) {
	if d > 0 {
		c.c.throttle.nanos.Add(uint64(d))
	}
}

// ShowThrottled puts throttled_seconds (0) in /stats and the family in /metrics before the
// connector waited: it has a rate limit.
func (c *Connector) ShowThrottled() { c.c.throttle.shown.Store(1) }

// Throttled is the time the connector waited for its rate limit so far.
func (c *Connector) Throttled() time.Duration { return time.Duration(c.c.throttle.nanos.Load()) }

func (t *throttleCells) visible() (time.Duration, bool) {
	n := t.nanos.Load()
	return time.Duration(n), n > 0 || t.shown.Load() == 1
}

// seconds is /stats "throttled_seconds": nil while not shown.
func (t *throttleCells) seconds() *float64 {
	d, ok := t.visible()
	if !ok {
		return nil
	}
	s := d.Seconds()
	return &s
}

// family is iggy_connector_throttled_seconds_total of one connector, nil while not shown.
func (t *throttleCells) family(labels []*dto.LabelPair) *dto.MetricFamily {
	d, ok := t.visible()
	if !ok {
		return nil
	}
	name, help, typ, v := FamilyThrottled, helpThrottled, dto.MetricType_COUNTER, d.Seconds()
	return &dto.MetricFamily{Name: &name, Help: &help, Type: &typ,
		Metric: []*dto.Metric{{Label: labels, Counter: &dto.Counter{Value: &v}}}}
}
