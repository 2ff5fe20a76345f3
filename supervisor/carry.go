package supervisor

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// counts are a connector's message counters. Each runner process starts them at zero; the
// supervisor carries the totals of finished runs over, so /stats and /metrics never go backwards
// across restarts (upstream's counters survive a connector restart inside its one process).
type counts struct {
	Produced, Sent, Consumed, Processed, Filtered, Errors uint64
}

func countsOf(s metrics.ConnectorStats) counts {
	return counts{Produced: u(s.MessagesProduced), Sent: u(s.MessagesSent), Consumed: u(s.MessagesConsumed),
		Processed: u(s.MessagesProcessed), Filtered: u(s.MessagesFiltered), Errors: s.Errors}
}

func u(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func (c counts) plus(o counts) counts {
	return counts{c.Produced + o.Produced, c.Sent + o.Sent, c.Consumed + o.Consumed,
		c.Processed + o.Processed, c.Filtered + o.Filtered, c.Errors + o.Errors}
}

// addTo adds c to the counters s carries (the kind decides which ones it has).
func (c counts) addTo(s *metrics.ConnectorStats) {
	add := func(p **uint64, v uint64) {
		if *p != nil {
			n := **p + v
			*p = &n
		}
	}
	add(&s.MessagesProduced, c.Produced)
	add(&s.MessagesSent, c.Sent)
	add(&s.MessagesConsumed, c.Consumed)
	add(&s.MessagesProcessed, c.Processed)
	add(&s.MessagesFiltered, c.Filtered)
	s.Errors += c.Errors
}

// families renders c as the connector's counter families, named, labelled and described exactly
// as a runner exposes them (built by pkg/metrics itself).
func (c counts) families(key, kind string) []*dto.MetricFamily {
	reg := prometheus.NewRegistry()
	mc := metrics.NewConnector(reg, key, kind)
	mc.Snapshot() // creates the zero series, as a /stats read does in a runner
	if kind == metrics.KindSource {
		mc.AddProduced(c.Produced)
		mc.AddSent(c.Sent)
	} else {
		mc.AddConsumed(c.Consumed)
		mc.AddProcessed(c.Processed)
	}
	mc.AddFiltered(c.Filtered)
	mc.AddErrors(c.Errors)
	fams, _ := reg.Gather() // an in-memory registry of plain counters cannot fail
	return fams
}

// addCounters adds the counter samples of carried into the matching series of scraped (same
// family, same labels), appending series and families scraped lacks. scraped is modified.
func addCounters(scraped, carried []*dto.MetricFamily) []*dto.MetricFamily {
	byName := make(map[string]*dto.MetricFamily, len(scraped))
	for _, f := range scraped {
		byName[f.GetName()] = f
	}
	for _, cf := range carried {
		if cf.GetType() != dto.MetricType_COUNTER {
			continue
		}
		sf, ok := byName[cf.GetName()]
		if !ok {
			scraped = append(scraped, cf)
			continue
		}
		if sf.GetType() != dto.MetricType_COUNTER {
			continue
		}
		for _, cm := range cf.Metric {
			if v := cm.GetCounter().GetValue(); v != 0 {
				if sm := sameSeries(sf, cm); sm != nil && sm.Counter != nil {
					total := sm.GetCounter().GetValue() + v
					sm.Counter.Value = &total
				} else if sm == nil {
					sf.Metric = append(sf.Metric, cm)
				}
			}
		}
	}
	return scraped
}

func sameSeries(f *dto.MetricFamily, m *dto.Metric) *dto.Metric {
	for _, cand := range f.Metric {
		if sameLabels(cand.Label, m.Label) {
			return cand
		}
	}
	return nil
}

func sameLabels(a, b []*dto.LabelPair) bool {
	if len(a) != len(b) {
		return false
	}
	for _, la := range a {
		found := false
		for _, lb := range b {
			if la.GetName() == lb.GetName() {
				found = la.GetValue() == lb.GetValue()
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
