package metrics_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// upstreamBody is an upstream-style body: OpenMetrics text, counters
// declared without _total, integral values without a fraction.
const upstreamBody = `# HELP iggy_connectors_sinks_running Sinks in Running status.
# TYPE iggy_connectors_sinks_running gauge
iggy_connectors_sinks_running 1
# HELP iggy_connector_messages_consumed Messages consumed from Iggy (sink).
# TYPE iggy_connector_messages_consumed counter
iggy_connector_messages_consumed_total{connector_key="pg_main",connector_type="sink"} 800
iggy_connector_messages_consumed_created{connector_key="pg_main",connector_type="sink"} 1767225600.5
# HELP iggy_connector_stage_duration_seconds Per-batch processing stage duration in seconds.
# TYPE iggy_connector_stage_duration_seconds histogram
iggy_connector_stage_duration_seconds_sum{connector_key="pg_main",connector_type="sink",stage="ffi"} 0.0042
iggy_connector_stage_duration_seconds_count{connector_key="pg_main",connector_type="sink",stage="ffi"} 8
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="0.00005"} 0
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="1.0"} 8 # {trace_id="abc"} 0.5
iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="ffi",le="+Inf"} 8
# EOF
`

const classicBody = `# HELP iggy_connector_messages_consumed_total Messages consumed from Iggy (sink).
# TYPE iggy_connector_messages_consumed_total counter
iggy_connector_messages_consumed_total{connector_key="pg_main",connector_type="sink"} 800
# HELP iggy_connectors_sinks_running Sinks in Running status.
# TYPE iggy_connectors_sinks_running gauge
iggy_connectors_sinks_running 1
`

func protobufBody(t *testing.T) []byte {
	t.Helper()
	reg := prometheus.NewRegistry()
	metrics.NewConnector(reg, "pg_main", metrics.KindSink).AddConsumed(800)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, f := range mustGather(t, reg) {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestParseFormats(t *testing.T) {
	tests := []struct {
		name        string
		body        []byte
		contentType string
	}{
		{"upstream OpenMetrics under text/plain", []byte(upstreamBody), "text/plain; charset=utf-8"},
		{"OpenMetrics media type", []byte(upstreamBody), "application/openmetrics-text; version=1.0.0; charset=utf-8"},
		{"classic text format", []byte(classicBody), "text/plain; version=0.0.4; charset=utf-8"},
		{"no content type", []byte(classicBody), ""},
		{"delimited protobuf", protobufBody(t), "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			families, err := testkit.ParseMetrics(bytes.NewReader(tt.body), tt.contentType)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			consumed := seriesValues(t, gathererOf(families), metrics.FamilyMessagesConsumed)
			if len(consumed) != 1 || consumed[0].value != 800 || consumed[0].labels["connector_key"] != "pg_main" {
				t.Fatalf("consumed = %+v, want pg_main at 800", consumed)
			}
			for _, f := range families {
				if f.GetName() == metrics.FamilyMessagesConsumed && f.GetType() != dto.MetricType_COUNTER {
					t.Fatalf("consumed family type %s, want COUNTER", f.GetType())
				}
				if strings.HasSuffix(f.GetName(), "_created") {
					t.Fatalf("_created sample became family %s", f.GetName())
				}
			}
		})
	}
}

func TestParseUpstreamHistogram(t *testing.T) {
	families, err := testkit.ParseMetrics(strings.NewReader(upstreamBody), "text/plain; charset=utf-8")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != metrics.FamilyStageDuration {
			continue
		}
		h := f.Metric[0].GetHistogram()
		if h.GetSampleCount() != 8 || h.GetSampleSum() != 0.0042 || len(h.GetBucket()) != 3 {
			t.Fatalf("histogram = %v, want count 8, sum 0.0042, buckets 0.00005, 1 and +Inf", h)
		}
		return
	}
	t.Fatal("no stage histogram parsed")
}

func TestParseRefusesBadInput(t *testing.T) {
	tests := []struct {
		name, body, contentType string
	}{
		{"garbage text", "this is { not metrics\n", "text/plain"},
		{"unterminated labels", "x{a=\"1\" 1\n", "text/plain"},
		{"garbage OpenMetrics", "# TYPE x counter\nx_total{ 1\n# EOF\n", "text/plain"},
		{"garbage protobuf", "\x05\xff\xff\xff\xff\xff", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testkit.ParseMetrics(strings.NewReader(tt.body), tt.contentType)
			if !errors.Is(err, testkit.ErrBadExposition) {
				t.Fatalf("Parse error = %v, want ErrBadExposition", err)
			}
		})
	}
}

func TestParseRefusesOversizedBody(t *testing.T) {
	endless := io.MultiReader(strings.NewReader("# HELP x "), endlessReader{})
	_, err := testkit.ParseMetrics(endless, "text/plain")
	if !errors.Is(err, testkit.ErrBadExposition) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Parse error = %v, want ErrBadExposition about the size", err)
	}
}

// endlessReader yields 'x' forever.
type endlessReader struct{}

func (endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// FuzzParse feeds arbitrary runner output to Parse: it must never panic,
// and whatever it accepts must encode as OpenMetrics that parses again
// into as many series.
func FuzzParse(f *testing.F) {
	f.Add([]byte(upstreamBody), "text/plain; charset=utf-8")
	f.Add([]byte(classicBody), "text/plain; version=0.0.4")
	f.Add([]byte(upstreamBody), "application/openmetrics-text; version=1.0.0")
	f.Add([]byte("# TYPE x unknown\nx 1\n# EOF\n"), "")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		families, err := testkit.ParseMetrics(bytes.NewReader(body), contentType)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := metrics.WriteOpenMetrics(&out, families); err != nil {
			return // a family expfmt refuses to encode is left out and reported
		}
		again, err := testkit.ParseMetrics(bytes.NewReader(out.Bytes()), metrics.TextContentType)
		if err != nil {
			t.Fatalf("re-parse of our own output: %v\n%s", err, out.Bytes())
		}
		if a, b := countSeries(families), countSeries(again); a != b {
			t.Fatalf("series before/after a round trip: %d/%d\n%s", a, b, out.Bytes())
		}
	})
}

func countSeries(families []*dto.MetricFamily) int {
	n := 0
	for _, f := range families {
		n += len(f.Metric)
	}
	return n
}

// OpenMetrics timestamps are seconds (floats); they come out as the text format's milliseconds,
// so our own OpenMetrics output (which writes them in seconds) parses again.
func TestParseOpenMetricsTimestamps(t *testing.T) {
	body := "# TYPE a unknown\na 0 0.0\n# TYPE b gauge\nb{l=\"x} 1.5\"} 2 1.5\nb{l=\"y\"} 3\n# EOF\n"
	families, err := testkit.ParseMetrics(strings.NewReader(body), "application/openmetrics-text; version=1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		for _, m := range f.Metric {
			if m.TimestampMs == nil {
				got = append(got, f.GetName()+" none")
				continue
			}
			got = append(got, fmt.Sprintf("%s %d", f.GetName(), m.GetTimestampMs()))
		}
	}
	slices.Sort(got) // the text parser hands families out in no set order
	want := []string{"a 0", "b 1500", "b none"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("timestamps = %v, want %v", got, want)
	}
}

// A family named like another family's series (x_bucket beside a histogram x) is left out and
// reported, so the output still parses.
func TestWriteOpenMetricsLeavesOutFamiliesNamedLikeSeries(t *testing.T) {
	body := "# TYPE iggy_connector_stage_duration_seconds_bucket unknown\niggy_connector_stage_duration_seconds_bucket 0\n# TYPE x counter\nx_total 1\n# TYPE y gauge\ny 3\n# EOF\n"
	families, err := testkit.ParseMetrics(strings.NewReader(body), "application/openmetrics-text; version=1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = metrics.WriteOpenMetrics(&out, families)
	if err == nil || !strings.Contains(err.Error(), "iggy_connector_stage_duration_seconds_bucket") {
		t.Fatalf("err = %v, want the clashing family reported", err)
	}
	again, err := testkit.ParseMetrics(bytes.NewReader(out.Bytes()), metrics.TextContentType)
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out.Bytes())
	}
	if !strings.Contains(out.String(), "\ny 3\n") || !strings.Contains(out.String(), "x_total 1") || len(again) == 0 {
		t.Fatalf("the other families are missing:\n%s", out.Bytes())
	}
}
