package runner

import (
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// The [error_handling] keys that are set win over the runner's IGGY_CONNECTOR_* settings; the
// others, and a connector without the section, keep them.
func TestErrorPolicy(t *testing.T) {
	env := Env{ConsumeRetries: 5, SendRetries: 3, RetryBackoffMin: 100 * time.Millisecond, RetryBackoffMax: 5 * time.Second}
	two, ms, tenSec := uint32(2), time.Millisecond, 10*time.Second
	for _, tc := range []struct {
		name string
		eh   *config.ErrorHandling
		want errorPolicy
	}{
		{"absent", nil, errorPolicy{consumeRetries: 5, sendRetries: 3, backoffMin: 100 * ms, backoffMax: 5 * time.Second}},
		{"tolerance only", &config.ErrorHandling{Tolerance: config.ToleranceAll},
			errorPolicy{tolerateAll: true, consumeRetries: 5, sendRetries: 3, backoffMin: 100 * ms, backoffMax: 5 * time.Second}},
		{"everything", &config.ErrorHandling{Tolerance: config.ToleranceAll, MaxRetries: &two, RetryBackoff: &ms, MaxRetryBackoff: &ms,
			DeadLetterStream: "dlq", DeadLetterTopic: "t"},
			errorPolicy{tolerateAll: true, consumeRetries: 2, sendRetries: 2, backoffMin: ms, backoffMax: ms, dlqStream: "dlq", dlqTopic: "t"}},
		{"backoff above the runner's cap raises it", &config.ErrorHandling{Tolerance: config.ToleranceNone, RetryBackoff: &tenSec},
			errorPolicy{consumeRetries: 5, sendRetries: 3, backoffMin: tenSec, backoffMax: tenSec}},
	} {
		if got := newErrorPolicy(tc.eh, env); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
