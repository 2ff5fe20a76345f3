package supervisor

import (
	"testing"
	"time"
)

func TestRestartBackoff(t *testing.T) {
	const s = time.Second
	b := restartBackoff{min: s / 2, max: 4 * s, stableAfter: 30 * s}
	cases := []struct {
		ran  time.Duration
		want time.Duration
	}{
		{ran: 0, want: s / 2},         // first crash
		{ran: s, want: s},             // crash loop: doubling
		{ran: s, want: 2 * s},         //
		{ran: s, want: 4 * s},         // capped
		{ran: s, want: 4 * s},         // stays capped
		{ran: 30 * s, want: s / 2},    // a stable run starts over
		{ran: 29 * s, want: s},        // just short of stable: keeps growing
		{ran: time.Hour, want: s / 2}, //
	}
	for i, c := range cases {
		if got := b.pause(c.ran); got != c.want {
			t.Errorf("restart %d after a run of %s: pause %s, want %s", i+1, c.ran, got, c.want)
		}
	}
}
