package testkit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// PluginPath is the path of example plugin name, built by BuildPlugins for this test process.
func PluginPath(tb testing.TB, name string) string {
	tb.Helper()
	return filepath.Join(BuildPlugins(tb), PluginLibrary(name))
}

// CopyPlugin copies example plugin name to dst (its directories created), mode 0644, and returns
// dst: a plugin file in a directory of the test's choosing.
func CopyPlugin(tb testing.TB, name, dst string) string {
	tb.Helper()
	data, err := os.ReadFile(PluginPath(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// MetricValue finds one sample in a Prometheus text exposition, e.g.
// MetricValue(text, `iggy_connector_messages_sent_total{connector_key="gen",connector_type="source"}`);
// ok is false when the series is absent or its value is not a number.
func MetricValue(text, series string) (value float64, ok bool) {
	for line := range strings.SplitSeq(text, "\n") {
		if rest, found := strings.CutPrefix(line, series+" "); found {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// RequireMetric is MetricValue for a series the test cannot go on without: it fails the test,
// showing the exposition, when the series is absent or not a number.
func RequireMetric(tb testing.TB, text, series string) float64 {
	tb.Helper()
	v, ok := MetricValue(text, series)
	if !ok {
		tb.Fatalf("metric series %s not found (or not a number) in:\n%s", series, text)
	}
	return v
}

// OrZero is *p, or 0 when p is nil: the JSON stats leave counters out until they have a value.
func OrZero(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}
