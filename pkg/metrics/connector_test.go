package metrics_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// specFamily is one row of the family table of docs/http-api.md §4.3, as the
// spec writes it (HELP/TYPE name, help without the appended period).
type specFamily struct {
	name, typ, help string
	labels          []string
}

var specFamilies = []specFamily{
	{"iggy_connectors_sources_total", "gauge", "Total configured source connectors", nil},
	{"iggy_connectors_sources_running", "gauge", "Sources in Running status", nil},
	{"iggy_connectors_sinks_total", "gauge", "Total configured sink connectors", nil},
	{"iggy_connectors_sinks_running", "gauge", "Sinks in Running status", nil},
	{"iggy_connector_messages_produced", "counter", "Messages received from source plugin poll", []string{"connector_key", "connector_type"}},
	{"iggy_connector_messages_sent", "counter", "Messages sent to Iggy (source)", []string{"connector_key", "connector_type"}},
	{"iggy_connector_messages_consumed", "counter", "Messages consumed from Iggy (sink)", []string{"connector_key", "connector_type"}},
	{"iggy_connector_messages_processed", "counter", "Messages processed and sent to sink plugin", []string{"connector_key", "connector_type"}},
	{"iggy_connector_messages_filtered", "counter", "Messages intentionally dropped by transforms returning Ok(None)", []string{"connector_key", "connector_type"}},
	{"iggy_connector_errors", "counter", "Errors encountered", []string{"connector_key", "connector_type"}},
	{"iggy_connector_stage_duration_seconds", "histogram", "Per-batch processing stage duration in seconds", []string{"connector_key", "connector_type", "stage"}},
}

// specBuckets are the histogram bounds of §4.3, as le values.
var specBuckets = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 5}

// exercise moves every counter and stage of a sink and a source connector.
func exercise(sink, source *metrics.Connector) {
	sink.AddConsumed(800)
	sink.AddProcessed(795)
	sink.AddFiltered(3)
	sink.IncErrors()
	for _, s := range []string{metrics.StageDecode, metrics.StagePrepare, metrics.StageFFI, metrics.StageTotal} {
		sink.ObserveStage(s, 300*time.Microsecond)
	}
	source.AddProduced(1200)
	source.AddSent(1190)
	source.AddFiltered(10)
	source.AddErrors(2)
	for _, s := range []string{metrics.StageDecode, metrics.StagePrepare, metrics.StageIggySend, metrics.StageStateSave, metrics.StageTotal} {
		source.ObserveStage(s, 2*time.Millisecond)
	}
}

func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func get(t testing.TB, url string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestExpositionMatchesSpecFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.NewRuntime(reg).SetTotals(2, 1)
	exercise(metrics.NewConnector(reg, "pg_main", metrics.KindSink), metrics.NewConnector(reg, "gen", metrics.KindSource))

	resp, body := get(t, serve(t, metrics.Handler(reg, nil)), nil)
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/plain; charset=utf-8", ct)
	}
	text := string(body)
	if !strings.HasSuffix(text, "\n# EOF\n") {
		t.Errorf("body does not end with # EOF:\n%s", text)
	}

	// HELP and TYPE lines: the spec's names, help texts plus a period, types,
	// and the spec's family order.
	lastIndex := -1
	for _, f := range specFamilies {
		header := "# HELP " + f.name + " " + f.help + ".\n# TYPE " + f.name + " " + f.typ + "\n"
		i := strings.Index(text, header)
		if i < 0 {
			t.Errorf("family %s: missing header lines\n%s", f.name, header)
			continue
		}
		if i < lastIndex {
			t.Errorf("family %s is out of the spec's order", f.name)
		}
		lastIndex = i
	}

	// Samples: counter samples carry _total, labels are the spec's.
	families, err := testkit.ParseMetrics(bytes.NewReader(body), resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	for _, f := range specFamilies {
		sampleName := f.name
		if f.typ == "counter" {
			sampleName += "_total"
		}
		got := byName[sampleName]
		if got == nil || len(got.Metric) == 0 {
			t.Errorf("family %s: no samples named %s", f.name, sampleName)
			continue
		}
		for _, m := range got.Metric {
			var names []string
			for _, l := range m.Label {
				names = append(names, l.GetName())
			}
			if !slices.Equal(names, f.labels) {
				t.Errorf("family %s: labels %v, want %v", f.name, names, f.labels)
			}
		}
	}

	// Histogram buckets are the spec's bounds.
	for _, m := range byName["iggy_connector_stage_duration_seconds"].Metric {
		var bounds []float64
		for _, b := range m.GetHistogram().GetBucket() {
			if b.GetUpperBound() <= 5 {
				bounds = append(bounds, b.GetUpperBound())
			}
		}
		if !slices.Equal(bounds, specBuckets) {
			t.Fatalf("buckets %v, want %v", bounds, specBuckets)
		}
	}
}

func TestStagesAndTypesLabelValues(t *testing.T) {
	reg := prometheus.NewRegistry()
	exercise(metrics.NewConnector(reg, "pg_main", metrics.KindSink), metrics.NewConnector(reg, "gen", metrics.KindSource))
	want := map[string][]string{
		"sink":   {"decode", "ffi", "prepare", "total"},
		"source": {"decode", "iggy_send", "prepare", "state_save", "total"},
	}
	got := map[string][]string{}
	for _, s := range seriesOf(t, reg, metrics.FamilyStageDuration) {
		got[s["connector_type"]] = append(got[s["connector_type"]], s["stage"])
	}
	for kind, stages := range want {
		slices.Sort(got[kind])
		if !slices.Equal(got[kind], stages) {
			t.Errorf("%s stages = %v, want %v", kind, got[kind], stages)
		}
	}
}

// seriesOf returns the label sets of family in reg.
func seriesOf(t testing.TB, reg prometheus.Gatherer, family string) []map[string]string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			out = append(out, labels)
		}
	}
	return out
}

type seriesValue struct {
	labels map[string]string
	value  float64 // counter or gauge value
}

// seriesValues returns the series of a counter or gauge family in g.
func seriesValues(t testing.TB, g prometheus.Gatherer, family string) []seriesValue {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []seriesValue
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.Metric {
			s := seriesValue{labels: map[string]string{}, value: m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()}
			for _, l := range m.Label {
				s.labels[l.GetName()] = l.GetValue()
			}
			out = append(out, s)
		}
	}
	return out
}

// familiesWithSeries lists the connector families that have a series.
func familiesWithSeries(t testing.TB, reg prometheus.Gatherer) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		if len(f.Metric) > 0 {
			names = append(names, f.GetName())
		}
	}
	slices.Sort(names)
	return names
}

func TestSeriesCreationSideEffects(t *testing.T) {
	tests := []struct {
		name string
		kind string
		act  func(c *metrics.Connector)
		want []string
	}{
		{"a new connector has no series", metrics.KindSink, func(*metrics.Connector) {}, nil},
		{"sink snapshot creates its four counters", metrics.KindSink, func(c *metrics.Connector) { c.Snapshot() },
			[]string{metrics.FamilyErrors, metrics.FamilyMessagesConsumed, metrics.FamilyMessagesFiltered, metrics.FamilyMessagesProcessed}},
		{"source snapshot creates its four counters", metrics.KindSource, func(c *metrics.Connector) { c.Snapshot() },
			[]string{metrics.FamilyErrors, metrics.FamilyMessagesFiltered, metrics.FamilyMessagesProduced, metrics.FamilyMessagesSent}},
		{"starting forwarding creates errors", metrics.KindSource, func(c *metrics.Connector) { c.CreateErrorSeries() },
			[]string{metrics.FamilyErrors}},
		{"produced of zero creates its series", metrics.KindSource, func(c *metrics.Connector) { c.AddProduced(0) },
			[]string{metrics.FamilyMessagesProduced}},
		{"filtered and errors of zero create nothing", metrics.KindSink, func(c *metrics.Connector) { c.AddFiltered(0); c.AddErrors(0) }, nil},
		{"a stage observation creates one histogram series", metrics.KindSink, func(c *metrics.Connector) { c.ObserveStage(metrics.StageTotal, time.Millisecond) },
			[]string{metrics.FamilyStageDuration}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			tt.act(metrics.NewConnector(reg, "k", tt.kind))
			if got := familiesWithSeries(t, reg); !slices.Equal(got, tt.want) {
				t.Fatalf("families with series = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSnapshotCountsMatchMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	sink := metrics.NewConnector(reg, "pg_main", metrics.KindSink)
	source := metrics.NewConnector(reg, "gen", metrics.KindSource)
	exercise(sink, source)
	exercise(sink, source)

	s := sink.Snapshot()
	if *s.MessagesConsumed != 1600 || *s.MessagesProcessed != 1590 || *s.MessagesFiltered != 6 || s.Errors != 2 {
		t.Errorf("sink snapshot counts = %d/%d/%d/%d, want 1600/1590/6/2",
			*s.MessagesConsumed, *s.MessagesProcessed, *s.MessagesFiltered, s.Errors)
	}
	if s.MessagesProduced != nil || s.MessagesSent != nil {
		t.Error("sink snapshot carries source counters")
	}
	src := source.Snapshot()
	if *src.MessagesProduced != 2400 || *src.MessagesSent != 2380 || *src.MessagesFiltered != 20 || src.Errors != 4 {
		t.Errorf("source snapshot counts = %d/%d/%d/%d, want 2400/2380/20/4",
			*src.MessagesProduced, *src.MessagesSent, *src.MessagesFiltered, src.Errors)
	}
	if src.MessagesConsumed != nil || src.MessagesProcessed != nil {
		t.Error("source snapshot carries sink counters")
	}
}

func TestConnectorsShareOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := metrics.NewConnector(reg, "a", metrics.KindSink)
	b := metrics.NewConnector(reg, "b", metrics.KindSink)
	a.AddConsumed(1)
	b.AddConsumed(2)
	keys := map[string]bool{}
	for _, s := range seriesOf(t, reg, metrics.FamilyMessagesConsumed) {
		keys[s["connector_key"]] = true
	}
	if !keys["a"] || !keys["b"] || len(keys) != 2 {
		t.Fatalf("consumed series keys = %v, want a and b", keys)
	}
}

func TestInvalidKindIsRefused(t *testing.T) {
	if _, err := metrics.TryNewConnector(prometheus.NewRegistry(), "k", "pipe"); err == nil ||
		!strings.Contains(err.Error(), `"pipe"`) || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("TryNewConnector error = %v, want one naming the kind and the key", err)
	}
}

func TestStageBucketsAreInclusiveUpperBounds(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := metrics.NewConnector(reg, "k", metrics.KindSink)
	for _, d := range []time.Duration{50 * time.Microsecond, 51 * time.Microsecond, time.Second, 6 * time.Second} {
		c.ObserveStage(metrics.StageFFI, d)
	}
	families, _ := reg.Gather()
	h := families[0].Metric[0].GetHistogram()
	want := map[float64]uint64{0.00005: 1, 0.0001: 2, 1: 3, 5: 3}
	for _, b := range h.GetBucket() {
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("bucket le=%v has %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}
	if h.GetSampleCount() != 4 {
		t.Errorf("count = %d, want 4", h.GetSampleCount())
	}
}

func TestStatusAndLastError(t *testing.T) {
	tests := []struct {
		name          string
		steps         func(c *metrics.Connector)
		wantStatus    string
		wantLastError string // empty: none
	}{
		{"new connector is starting", func(*metrics.Connector) {}, "starting", ""},
		{"error sets last_error", func(c *metrics.Connector) { c.SetError("consume failed") }, "error", "consume failed"},
		{"stopping keeps last_error", func(c *metrics.Connector) { c.SetError("boom"); c.SetStatus("stopping") }, "stopping", "boom"},
		{"running clears last_error", func(c *metrics.Connector) { c.SetError("boom"); c.SetStatus("running") }, "running", ""},
		{"stopped clears last_error", func(c *metrics.Connector) { c.SetError("boom"); c.SetStatus("stopped") }, "stopped", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := metrics.NewConnector(nil, "k", metrics.KindSink)
			before := uint64(time.Now().UnixMicro())
			tt.steps(c)
			s := c.Snapshot()
			if s.Status != tt.wantStatus {
				t.Errorf("status = %q, want %q", s.Status, tt.wantStatus)
			}
			switch {
			case tt.wantLastError == "" && s.LastError != nil:
				t.Errorf("last_error = %+v, want none", s.LastError)
			case tt.wantLastError != "" && (s.LastError == nil || s.LastError.Message != tt.wantLastError || s.LastError.Timestamp < before):
				t.Errorf("last_error = %+v, want %q stamped after %d", s.LastError, tt.wantLastError, before)
			}
		})
	}
}

// jsonKeys returns the top-level keys of a JSON object in document order.
func jsonKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestSnapshotJSONShape(t *testing.T) {
	additive := []string{"pid", "restarts", "memory_usage", "cpu_usage", "start_time", "run_time"}
	tests := []struct {
		name    string
		kind    string
		version string
		failed  bool
		want    []string
	}{
		{"source", metrics.KindSource, "0.2.1", false, append([]string{"key", "name", "connector_type", "version", "version_semver", "status", "enabled",
			"messages_produced", "messages_sent", "messages_filtered", "errors"}, additive...)},
		{"sink with unparsable version and an error", metrics.KindSink, "unknown", true, append([]string{"key", "name", "connector_type", "version", "status", "enabled",
			"messages_consumed", "messages_processed", "messages_filtered", "errors", "pid", "last_error"}, additive[1:]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := metrics.NewConnector(nil, "gen", tt.kind)
			c.SetInfo("Generator", tt.version, true)
			if tt.failed {
				c.SetError("Failed to resolve plugin path")
			}
			data, err := json.Marshal(c.Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonKeys(t, data); !slices.Equal(got, tt.want) {
				t.Fatalf("keys = %v\nwant   %v\n%s", got, tt.want, data)
			}
		})
	}
}

// The process figures of a snapshot: memory and pid of this process, a CPU usage above 0 after
// a busy loop (0 at the first snapshot, which only takes the baseline), and start_time/run_time
// the wall time since the connector was created. run_time is checked against the wall clock read
// around the creation and the snapshot, not against the CPU burnt: /proc counts CPU in 10 ms
// ticks and this process has several threads, so 50 ms of CPU can take less than 50 ms of wall time.
func TestSnapshotProcessFigures(t *testing.T) {
	beforeCreate := time.Now().UnixMicro()
	c := metrics.NewConnector(nil, "k", metrics.KindSink)
	afterCreate := time.Now().UnixMicro()
	first := c.Snapshot()
	if first.CPUUsage != 0 || first.MemoryUsage == 0 {
		// Memory is set only when the process read succeeded, which is what stores the CPU baseline.
		t.Fatalf("first cpu_usage = %v, memory_usage = %d; want 0 and a successful read", first.CPUUsage, first.MemoryUsage)
	}
	burnCPU(t, 50*time.Millisecond)
	beforeSnapshot := time.Now().UnixMicro()
	second := c.Snapshot()
	afterSnapshot := time.Now().UnixMicro()
	if second.MemoryUsage == 0 || second.PID != int32(os.Getpid()) {
		t.Errorf("memory_usage = %d, pid = %d, want memory set and pid %d", second.MemoryUsage, second.PID, os.Getpid())
	}
	if second.CPUUsage <= 0 {
		t.Errorf("cpu_usage after a busy loop = %v, want > 0", second.CPUUsage)
	}
	if start := int64(second.StartTime); start < beforeCreate || start > afterCreate {
		t.Errorf("start_time = %dµs, want the creation, within [%d, %d]", start, beforeCreate, afterCreate)
	}
	// Whole microseconds on both sides, so these bounds are exact; the burn makes lo tens of ms.
	if run, lo, hi := int64(second.RunTime), beforeSnapshot-afterCreate, afterSnapshot-beforeCreate; run < lo || run > hi {
		t.Errorf("run_time = %dµs, want the wall time from creation to snapshot, within [%d, %d]", run, lo, hi)
	}
}

// burnCPU busy-loops until this process's CPU time as /proc reports it (what the Sampler reads, in
// clock ticks) has grown by at least d, so neither a loaded machine nor tick rounding can leave
// the measured delta at 0. It fails the test if that takes longer than a generous wall time.
func burnCPU(t *testing.T, d time.Duration) {
	t.Helper()
	read := func() float64 {
		p, err := metrics.ReadProcess(int32(os.Getpid()))
		if err != nil {
			t.Fatal(err)
		}
		return p.CPUSeconds
	}
	start := read()
	deadline := time.Now().Add(time.Minute)
	for read()-start < d.Seconds() {
		if time.Now().After(deadline) {
			t.Fatalf("this process got less than %s of CPU time in a minute", d)
		}
		busyFor(5 * time.Millisecond)
	}
}

// busyFor burns d of this process's CPU time (not wall time, so a loaded
// machine cannot starve the measurement).
func busyFor(d time.Duration) {
	start := cpuTime()
	x := 0
	for cpuTime()-start < d {
		for range 10000 {
			x++
		}
	}
	_ = strconv.Itoa(x)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestConcurrentCountingIsExact(t *testing.T) {
	c := metrics.NewConnector(prometheus.NewRegistry(), "pg_main", metrics.KindSink)
	const workers, batches = 8, 500
	done := make(chan struct{})
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for range batches {
				c.AddConsumed(10)
				c.ObserveStage(metrics.StageTotal, time.Microsecond)
			}
		}()
	}
	for range workers {
		<-done
	}
	if got := *c.Snapshot().MessagesConsumed; got != workers*batches*10 {
		t.Fatalf("consumed = %d, want %d", got, workers*batches*10)
	}
}
