// Package backoff is the project's one capped, jittered exponential backoff, built on
// github.com/cenkalti/backoff/v5. Every retry and reconnect loop (the runner's dial, polls and
// plugin retries, the supervisor's restarts, the HTTP config provider, the OTLP exporters, the Iggy
// client) takes its delays from here and keeps its own rules (a reset after a stable run, a
// collector's throttling hint, a deadline) on top.
//
// Files: backoff.go (Policy and Backoff: the delay sequence, Next, Reset, Wait), sleep.go (Sleep:
// a wait that ends early with its context).
package backoff

import (
	"context"
	"time"

	cenkalti "github.com/cenkalti/backoff/v5"
)

// DefaultJitter is the spread a caller should use unless it has a rule of its own: each delay is
// randomised by ±20% (as Kafka clients do), so a fleet of processes that lost the same server does
// not come back in step.
const DefaultJitter = 0.2

// DefaultMultiplier is the growth per delay when Policy.Multiplier is zero: doubling.
const DefaultMultiplier = 2

// Policy describes a delay sequence: Min, then Min×Multiplier, Min×Multiplier², ... up to Max,
// where it stays; each delay is then randomised uniformly within ±Jitter of that value.
type Policy struct {
	// Min is the first delay, and the delay again after Reset. Zero or less means no wait at all.
	Min time.Duration
	// Max caps the growth. The cap applies before jitter, so a delay at the cap lies in
	// [Max×(1-Jitter), Max×(1+Jitter)] and averages Max. A Max below Min caps every delay after
	// the first (the library's rule, which the OTLP exporters' retry keeps).
	Max time.Duration
	// Multiplier is the growth per delay; 0 means DefaultMultiplier, and values below 1 mean 1
	// (a constant delay).
	Multiplier float64
	// Jitter is the random spread of each delay as a fraction, clamped to [0, 1]; 0 gives the
	// exact sequence, which tests rely on.
	Jitter float64
}

// Backoff hands out the delays of one Policy. It is not safe for concurrent use: each loop owns
// its own.
type Backoff struct {
	exp cenkalti.ExponentialBackOff
}

// New returns a Backoff at the start of p's sequence.
func New(p Policy) *Backoff {
	if p.Min < 0 {
		p.Min = 0
	}
	switch {
	case p.Multiplier == 0:
		p.Multiplier = DefaultMultiplier
	case p.Multiplier < 1:
		p.Multiplier = 1
	}
	p.Jitter = min(max(p.Jitter, 0), 1)
	b := &Backoff{exp: cenkalti.ExponentialBackOff{
		InitialInterval:     p.Min,
		RandomizationFactor: p.Jitter,
		Multiplier:          p.Multiplier,
		MaxInterval:         p.Max,
	}}
	b.exp.Reset()
	return b
}

// Next returns the next delay and advances the sequence.
func (b *Backoff) Next() time.Duration {
	if b.exp.InitialInterval == 0 {
		// The library reads a zero interval as "not started" and would never grow from it.
		return 0
	}
	return b.exp.NextBackOff()
}

// Reset starts the sequence over at Min.
func (b *Backoff) Reset() { b.exp.Reset() }

// Wait sleeps the next delay. It returns nil when the delay has passed, or the context's cause
// (context.Cause) as soon as ctx ends.
func (b *Backoff) Wait(ctx context.Context) error { return Sleep(ctx, b.Next()) }
