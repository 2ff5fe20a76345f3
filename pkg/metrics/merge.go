package metrics

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Merged is a prometheus.Gatherer combining a local gatherer with the last
// families stored for each named source (a runner), merged by
// prometheus.Gatherers: a family whose type or help differs from the one
// already taken, and a series already present, are skipped and reported in
// the returned prometheus.MultiError, each error naming its source; the rest
// is still returned, so a handler with ContinueOnError serves it. Safe for
// concurrent use.
type Merged struct {
	local prometheus.Gatherer

	mu      sync.RWMutex
	sources map[string][]*dto.MetricFamily
}

// NewMerged returns a merged gatherer over local (nil: none).
func NewMerged(local prometheus.Gatherer) *Merged {
	return &Merged{local: local, sources: map[string][]*dto.MetricFamily{}}
}

// Set replaces the families of source. The families must not be changed
// afterwards; Gather shares them.
func (m *Merged) Set(source string, families []*dto.MetricFamily) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sources[source] = families
}

// Remove drops source and its families.
func (m *Merged) Remove(source string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sources, source)
}

// Gather implements prometheus.Gatherer: the local families take precedence,
// then each source's in source-name order; families come sorted by name (the
// writer puts them in upstream's order), series by label values.
func (m *Merged) Gather() ([]*dto.MetricFamily, error) {
	var gatherers prometheus.Gatherers
	if m.local != nil {
		gatherers = append(gatherers, marked("local", m.local.Gather))
	}
	m.mu.RLock()
	for _, name := range slices.Sorted(maps.Keys(m.sources)) {
		families := m.sources[name]
		gatherers = append(gatherers, marked(name, func() ([]*dto.MetricFamily, error) { return families, nil }))
	}
	m.mu.RUnlock()
	families, err := gatherers.Gather()
	return families, attributed(err)
}

// sourceMark is the first error every marked gatherer returns. Gatherers
// names neither the gatherer a conflict comes from nor the one a gatherer
// error came from, but it records a gatherer's own errors just before it
// merges that gatherer's families: a mark in the error list therefore begins
// the errors of its source.
type sourceMark struct{ source string }

func (sourceMark) Error() string { return "source mark" }

// ownError is an error the source's gatherer itself returned.
type ownError struct{ err error }

func (e ownError) Error() string { return e.err.Error() }

// marked wraps gather so that its errors begin with a mark naming source.
func marked(source string, gather func() ([]*dto.MetricFamily, error)) prometheus.GathererFunc {
	return func() ([]*dto.MetricFamily, error) {
		families, err := gather()
		errs := prometheus.MultiError{sourceMark{source}}
		var multi prometheus.MultiError
		if errors.As(err, &multi) {
			for _, e := range multi {
				errs = append(errs, ownError{e})
			}
		} else if err != nil {
			errs = append(errs, ownError{err})
		}
		return families, errs
	}
}

// attributed rewrites the errors of Gatherers.Gather, marks and all, as a
// MultiError naming the source of each (nil when there is none).
func attributed(err error) error {
	if err == nil {
		return nil
	}
	var in prometheus.MultiError
	if !errors.As(err, &in) {
		// Gatherers unwraps a list of one: with a single gatherer that is its mark alone.
		in = prometheus.MultiError{err}
	}
	var out prometheus.MultiError
	source := ""
	for _, e := range in {
		var mark sourceMark
		var own ownError
		switch {
		case errors.As(e, &mark):
			source = mark.source
		case errors.As(e, &own):
			out = append(out, fmt.Errorf("metrics from %q: %w", source, own.err))
		default: // a conflict Gatherers found
			out = append(out, fmt.Errorf("metrics from %q: %w", source, e))
		}
	}
	return out.MaybeUnwrap()
}
