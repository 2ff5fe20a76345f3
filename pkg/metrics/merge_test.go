package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// quietLogger swallows the warnings handlers log about skipped families.
var quietLogger = slog.New(slog.DiscardHandler)

// runnerRegistry is what one runner process registers: one connector.
func runnerRegistry(key, kind string, count uint64) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	c := metrics.NewConnector(reg, key, kind)
	if kind == metrics.KindSink {
		c.AddConsumed(count)
	} else {
		c.AddProduced(count)
	}
	c.ObserveStage(metrics.StageTotal, time.Millisecond)
	c.Snapshot()
	return reg
}

// upstreamStyleText serves OpenMetrics text under text/plain whatever the
// request asks, as upstream's runtime does.
func upstreamStyleText(reg prometheus.Gatherer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		families, err := reg.Gather()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_ = metrics.WriteOpenMetrics(w, families)
	})
}

func scrapeAll(t *testing.T, m *metrics.Merged, runners map[string]string) map[string]error {
	t.Helper()
	errs := map[string]error{}
	for name, url := range runners {
		families, err := testkit.ScrapeMetrics(context.Background(), http.DefaultClient, url)
		if err != nil {
			errs[name] = err
			continue
		}
		m.Set(name, families)
	}
	return errs
}

func TestMergeRunnersSkipsBrokenOnes(t *testing.T) {
	runners := map[string]string{
		"pg_main": serve(t, metrics.Handler(runnerRegistry("pg_main", metrics.KindSink, 800), nil)),
		"gen":     serve(t, upstreamStyleText(runnerRegistry("gen", metrics.KindSource, 1200))),
		"classic": serve(t, promhttp.HandlerFor(runnerRegistry("es", metrics.KindSink, 7), promhttp.HandlerOpts{})),
		"garbage": serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("iggy_connector_errors_total{connector_key=\"x\" 1\n}}} not metrics\n"))
		})),
		"failing": serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		})),
	}
	local := prometheus.NewRegistry()
	metrics.NewRuntime(local).SetTotals(1, 3)
	merged := metrics.NewMerged(local)
	errs := scrapeAll(t, merged, runners)

	if len(errs) != 2 || !errors.Is(errs["garbage"], testkit.ErrBadExposition) || !strings.Contains(errs["failing"].Error(), "500") {
		t.Fatalf("scrape errors = %v, want ErrBadExposition for garbage and status 500 for failing only", errs)
	}

	// The supervisor's /metrics: served from the merged gatherer.
	resp, body := get(t, serve(t, metrics.Handler(merged, quietLogger)), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("merged /metrics status %d", resp.StatusCode)
	}
	families, err := testkit.ParseMetrics(bytes.NewReader(body), resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("parse merged body: %v\n%s", err, body)
	}
	reg := gathererOf(families)
	want := map[string]float64{"pg_main": 800, "es": 7}
	for _, s := range seriesValues(t, reg, metrics.FamilyMessagesConsumed) {
		key := s.labels[metrics.LabelConnectorKey]
		if want[key] != s.value {
			t.Errorf("consumed{%s} = %v, want %v", key, s.value, want[key])
		}
		delete(want, key)
	}
	if len(want) != 0 {
		t.Errorf("consumed series missing for %v", want)
	}
	if got := seriesValues(t, reg, metrics.FamilyMessagesProduced); len(got) != 1 || got[0].value != 1200 {
		t.Errorf("produced series = %+v, want gen at 1200", got)
	}
	if got := seriesValues(t, reg, metrics.FamilySinksTotal); len(got) != 1 || got[0].value != 3 {
		t.Errorf("sinks_total = %+v, want 3", got)
	}
	if strings.Contains(string(body), `connector_key="x"`) {
		t.Error("families of the garbage runner were served")
	}
	if n := len(seriesOf(t, reg, metrics.FamilyStageDuration)); n != 3 {
		t.Errorf("stage histogram series = %d, want one per healthy runner (3)", n)
	}
}

// gathererOf wraps fixed families as a Gatherer.
func gathererOf(families []*dto.MetricFamily) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return families, nil })
}

func TestMergeReportsConflictsAndServesTheRest(t *testing.T) {
	// A runner whose errors family has another type, one with another help
	// text, and one repeating a series the first runner already has.
	wrongType := prometheus.NewRegistry()
	errorsAsGauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metrics.FamilyErrors, Help: "Errors encountered."}, []string{"connector_key"})
	errorsAsGauge.WithLabelValues("w").Set(1)
	extra := prometheus.NewGauge(prometheus.GaugeOpts{Name: "runner_extra", Help: "Kept."})
	wrongType.MustRegister(errorsAsGauge, extra)
	wrongHelp := prometheus.NewRegistry()
	wrongHelp.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: metrics.FamilyErrors, Help: "Something else."}))

	merged := metrics.NewMerged(runnerRegistry("pg_main", metrics.KindSink, 5))
	merged.Set("a-wrong-type", mustGather(t, wrongType))
	merged.Set("b-wrong-help", mustGather(t, wrongHelp))
	merged.Set("c-duplicate", mustGather(t, runnerRegistry("pg_main", metrics.KindSink, 9)))

	families, err := merged.Gather()
	var multi prometheus.MultiError
	if !errors.As(err, &multi) {
		t.Fatalf("Gather error = %v, want a MultiError", err)
	}
	text := err.Error()
	for _, want := range []string{`"a-wrong-type"`, `"b-wrong-help"`, `"c-duplicate"`, metrics.FamilyErrors, metrics.FamilyMessagesConsumed} {
		if !strings.Contains(text, want) {
			t.Errorf("Gather error does not mention %s:\n%s", want, text)
		}
	}
	reg := gathererOf(families)
	if got := seriesValues(t, reg, "runner_extra"); len(got) != 1 {
		t.Errorf("runner_extra of the conflicting runner: %d series, want 1 (only the conflicting family is skipped)", len(got))
	}
	if got := seriesValues(t, reg, metrics.FamilyMessagesConsumed); len(got) != 1 || got[0].value != 5 {
		t.Errorf("consumed = %+v, want the first runner's 5 only", got)
	}
	for _, s := range seriesValues(t, reg, metrics.FamilyErrors) {
		if s.labels[metrics.LabelConnectorKey] != "pg_main" {
			t.Errorf("errors series from a conflicting runner served: %v", s.labels)
		}
	}

	// The handler still answers 200 with the rest.
	resp, _ := get(t, serve(t, metrics.Handler(merged, quietLogger)), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200 despite the conflicts", resp.StatusCode)
	}
}

func TestMergedRemoveDropsRunner(t *testing.T) {
	merged := metrics.NewMerged(nil)
	merged.Set("gen", mustGather(t, runnerRegistry("gen", metrics.KindSource, 1)))
	merged.Remove("gen")
	families, err := merged.Gather()
	if err != nil || len(families) != 0 {
		t.Fatalf("after Remove: %d families, err %v; want none", len(families), err)
	}
}

func mustGather(t testing.TB, g prometheus.Gatherer) []*dto.MetricFamily {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// A Merged with no source besides its local gatherer gathers without an error.
func TestMergedLocalOnly(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.NewRuntime(reg)
	m := metrics.NewMerged(reg)
	if families, err := m.Gather(); err != nil || len(families) == 0 {
		t.Fatalf("Gather = %d families, %v", len(families), err)
	}
}
