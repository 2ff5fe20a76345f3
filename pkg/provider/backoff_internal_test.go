package provider

import (
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// The retry delays must stay inside upstream's bounds: at least half the
// initial backoff, at most min(max, initial*multiplier^n), and grow with n.
func TestBackoffBounds(t *testing.T) {
	h := &HTTP{retry: config.Retry{Enabled: true, MaxAttempts: 8, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second, BackoffMultiplier: 2}}
	var previousMean time.Duration
	for n := uint32(0); n < 8; n++ {
		upper := min(2*time.Second, 100*time.Millisecond<<n)
		var sum time.Duration
		const samples = 2000
		for i := 0; i < samples; i++ {
			d := h.backoff(n)
			if d < 50*time.Millisecond || d > upper {
				t.Fatalf("backoff(%d) = %v, outside [50ms, %v]", n, d, upper)
			}
			sum += d
		}
		mean := sum / samples
		if n > 0 && upper > 100*time.Millisecond<<(n-1) && mean <= previousMean {
			t.Fatalf("backoff(%d) mean %v does not grow from %v", n, mean, previousMean)
		}
		previousMean = mean
	}
}
