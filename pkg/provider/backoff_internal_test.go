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
	const retries, samples = 8, 2000
	var sums [retries]time.Duration
	for range samples {
		delays := h.retryDelays()
		for n := range retries {
			upper := min(2*time.Second, 100*time.Millisecond<<n)
			d := delays.next()
			if d < 50*time.Millisecond || d > upper {
				t.Fatalf("delay before retry %d = %v, outside [50ms, %v]", n, d, upper)
			}
			sums[n] += d
		}
	}
	for n := 1; n < retries; n++ {
		upper, previousUpper := min(2*time.Second, 100*time.Millisecond<<n), min(2*time.Second, 100*time.Millisecond<<(n-1))
		if mean, previousMean := sums[n]/samples, sums[n-1]/samples; upper > previousUpper && mean <= previousMean {
			t.Fatalf("delay before retry %d: mean %v does not grow from %v", n, mean, previousMean)
		}
	}
}
