package runner

import (
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// errorPolicy is the connector's [error_handling] section (docs/architecture.md, decision 14) over the runner's own
// retry settings: a key the section leaves out keeps the IGGY_CONNECTOR_* value, so a connector
// without the section behaves exactly as before.
type errorPolicy struct {
	tolerateAll bool // tolerance = "all": failed records are isolated and dead-lettered
	// consumeRetries and sendRetries: retries of a failed plugin consume / Iggy send.
	consumeRetries, sendRetries int
	backoffMin, backoffMax      time.Duration
	// dlqStream and dlqTopic are where failed records go; empty: they are logged, counted, skipped.
	dlqStream, dlqTopic string
}

func newErrorPolicy(eh *config.ErrorHandling, e Env) errorPolicy {
	p := errorPolicy{consumeRetries: e.ConsumeRetries, sendRetries: e.SendRetries,
		backoffMin: e.RetryBackoffMin, backoffMax: e.RetryBackoffMax}
	if eh == nil {
		return p
	}
	p.tolerateAll = eh.Tolerance == config.ToleranceAll
	if eh.MaxRetries != nil {
		p.consumeRetries, p.sendRetries = int(*eh.MaxRetries), int(*eh.MaxRetries)
	}
	if eh.RetryBackoff != nil {
		p.backoffMin = *eh.RetryBackoff
	}
	if eh.MaxRetryBackoff != nil {
		p.backoffMax = *eh.MaxRetryBackoff
	}
	p.backoffMax = max(p.backoffMax, p.backoffMin) // a retry_backoff above the runner's cap raises it
	p.dlqStream, p.dlqTopic = eh.DeadLetterStream, eh.DeadLetterTopic
	return p
}

func (p errorPolicy) hasDeadLetterTopic() bool { return p.dlqTopic != "" }

// backoff is the pause between retries of one failed consume or send: jittered, so runners that
// failed against the same server do not retry in step.
func (p errorPolicy) backoff() *backoff.Backoff {
	return backoff.New(backoff.Policy{Min: p.backoffMin, Max: p.backoffMax, Jitter: backoff.DefaultJitter})
}
