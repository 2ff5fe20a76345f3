package config_test

import (
	"errors"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"1 s", time.Second},
		{"10s", 10 * time.Second},
		{"5ms", 5 * time.Millisecond},
		{"1m 30s", 90 * time.Second},
		{"1m30s", 90 * time.Second},
		{"1.5s", 1500 * time.Millisecond},
		{"500 ms", 500 * time.Millisecond},
		{"20ms", 20 * time.Millisecond},
		{"1000ms", time.Second},
		{"2M", 2 * time.Minute}, // lower-cased first, so M is minutes
		{"1h", time.Hour},
		{"1 hour 2 minutes", time.Hour + 2*time.Minute},
		{"3us", 3 * time.Microsecond},
		{"3µs", 3 * time.Microsecond},
		{"7ns", 7},
		{"1d", 24 * time.Hour},
		{"1w", 7 * 24 * time.Hour},
		{"1month", 2630016 * time.Second},
		{"1y", 31557600 * time.Second},
		{"0", 0},
		{"unlimited", 0},
		{"Disabled", 0},
		{"NONE", 0},
		{".5s", 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := config.ParseDuration(tt.in)
			if err != nil {
				t.Fatalf("ParseDuration(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseDuration(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseDurationRejects(t *testing.T) {
	for _, in := range []string{"", "10", "5 parsecs", "s", "1.2.3s", "-1s", "10s x", "99999999999y"} {
		t.Run(in, func(t *testing.T) {
			_, err := config.ParseDuration(in)
			if !errors.Is(err, config.ErrInvalidDuration) {
				t.Fatalf("ParseDuration(%q) error = %v, want ErrInvalidDuration", in, err)
			}
		})
	}
}

func TestFormatDurationRoundTrips(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999, time.Microsecond, 1500 * time.Millisecond, 90 * time.Second,
		25*time.Hour + 3*time.Nanosecond, time.Duration(1<<62 + 12345)} {
		text := config.FormatDuration(d)
		got, err := config.ParseDuration(text)
		if err != nil || got != d {
			t.Errorf("ParseDuration(FormatDuration(%d) = %q) = %v, %v", d, text, got, err)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1m 30s", "1.5s", "0", "10", "3µs", "1y 2months"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := config.ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v, negative", s, d)
		}
		back, err := config.ParseDuration(config.FormatDuration(d))
		if err != nil || back != d {
			t.Fatalf("round trip of %v via %q: %v, %v", d, config.FormatDuration(d), back, err)
		}
	})
}
