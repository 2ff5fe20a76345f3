package metrics_test

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

func TestFloat32JSONLikeSerde(t *testing.T) {
	tests := []struct {
		in   float32
		want string
	}{
		{0, "0.0"},
		{2.5, "2.5"},
		{3.25, "3.25"},
		{100, "100.0"},
		{200, "200.0"},
		{11.5, "11.5"},
		{0.1, "0.1"},
		{0.00001, "0.00001"},
		{0.000001, "0.000001"},
		{1e-7, "1e-7"},
		{1.5e-7, "1.5e-7"},
		{1234567, "1234567.0"},
		{1e12, "1000000000000.0"},
		{1e13, "1e13"},
		{-2.5, "-2.5"},
		{float32(math.NaN()), "null"},
		{float32(math.Inf(1)), "null"},
	}
	for _, tt := range tests {
		got, err := json.Marshal(metrics.Float32(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("Float32(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestRuntimeStatsJSONShape(t *testing.T) {
	semver := uint32(5000)
	stats := metrics.RuntimeStats{
		ConnectorsRuntimeVersion: "0.5.0-edge.4", ConnectorsRuntimeVersionSemver: &semver,
		Connectors: []metrics.ConnectorStats{},
	}
	data, err := json.Marshal(stats)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"connectors_runtime_version", "connectors_runtime_version_semver", "process_id", "cpu_usage",
		"total_cpu_usage", "memory_usage", "total_memory", "available_memory", "run_time", "start_time",
		"sources_total", "sources_running", "sinks_total", "sinks_running", "connectors"}
	if got := jsonKeys(t, data); !slices.Equal(got, want) {
		t.Fatalf("keys = %v\nwant   %v", got, want)
	}
	stats.ConnectorsRuntimeVersionSemver = nil
	data, _ = json.Marshal(stats)
	if got := jsonKeys(t, data); slices.Contains(got, "connectors_runtime_version_semver") {
		t.Fatal("connectors_runtime_version_semver present although not computable")
	}
}
