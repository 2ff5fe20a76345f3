package logging_test

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

func TestParseFilterLevels(t *testing.T) {
	type probe struct {
		target string
		want   slog.Level
	}
	tests := []struct {
		filter string
		probes []probe
	}{
		{"", []probe{{"anything", slog.LevelInfo}}},
		{"info", []probe{{"iggy_connectors", slog.LevelInfo}}},
		{"WARN", []probe{{"iggy_connectors", slog.LevelWarn}}},
		{"trace", []probe{{"x", logging.LevelTrace}}},
		{"off", []probe{{"x", logging.LevelOff}}},
		{"3", []probe{{"x", slog.LevelInfo}}},
		{"5", []probe{{"x", logging.LevelTrace}}},
		{"0", []probe{{"x", logging.LevelOff}}},
		{"warn,connector=debug", []probe{
			{"connector", slog.LevelDebug},
			{"iggy_connectors", slog.LevelWarn},
		}},
		{"iggy_connector_runner=trace", []probe{
			{"iggy_connector_runner", logging.LevelTrace},
			{"iggy_connectors", slog.LevelInfo},
		}},
		// A directive covers every target it is a prefix of; the longest wins.
		{"iggy_connectors=debug,iggy_connectors::benchmark=off", []probe{
			{"iggy_connectors::runner", slog.LevelDebug},
			{"iggy_connectors::benchmark", logging.LevelOff},
			{"iggy_connectors", slog.LevelDebug},
			{"connector", slog.LevelInfo},
		}},
		{"iggy_connectors::benchmark=off,iggy_connectors=debug", []probe{
			{"iggy_connectors::benchmark", logging.LevelOff},
			{"iggy_connectors::runner", slog.LevelDebug},
		}},
		// A bare target enables everything for it.
		{"error,connector", []probe{
			{"connector", logging.LevelTrace},
			{"other", slog.LevelError},
		}},
		// Later directives win; spaces and empty directives are ignored.
		{" debug , connector=warn,, connector=error ,info", []probe{
			{"connector", slog.LevelError},
			{"x", slog.LevelInfo},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			f, err := logging.ParseFilter(tt.filter)
			if err != nil {
				t.Fatalf("ParseFilter(%q): %v", tt.filter, err)
			}
			for _, p := range tt.probes {
				if got := f.Level(p.target); got != p.want {
					t.Errorf("Level(%q) = %v, want %v", p.target, logging.LevelName(got), logging.LevelName(p.want))
				}
			}
		})
	}
}

func TestParseFilterRejects(t *testing.T) {
	tests := []string{
		"connector=",
		"connector=loud",
		"=debug",
		"iggy_connectors[sink]=debug",
		"iggy_connectors{key=x}",
		`"quoted"=info`,
	}
	for _, s := range tests {
		t.Run(s, func(t *testing.T) {
			_, err := logging.ParseFilter(s)
			if !errors.Is(err, logging.ErrBadFilter) {
				t.Fatalf("ParseFilter(%q) error = %v, want ErrBadFilter", s, err)
			}
		})
	}
}

func TestFilterMinLevelAndString(t *testing.T) {
	tests := []struct {
		filter string
		min    slog.Level
		text   string
	}{
		{"info", slog.LevelInfo, "info"},
		{"warn,connector=debug", slog.LevelDebug, "warn,connector=debug"},
		{"error,a=trace,abc=off", logging.LevelTrace, "error,abc=off,a=trace"},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			f := logging.MustParseFilter(tt.filter)
			if f.MinLevel() != tt.min {
				t.Errorf("MinLevel = %v, want %v", f.MinLevel(), tt.min)
			}
			if f.String() != tt.text {
				t.Errorf("String = %q, want %q", f.String(), tt.text)
			}
		})
	}
}
