package tap

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// ServeOptions bound one tap stream.
type ServeOptions struct {
	Limit        int           // end after this many message events (Query.Limit); 0: no limit
	MaxDuration  time.Duration // end after this long ([http] tap_max_duration); 0: no limit
	WriteTimeout time.Duration // the budget of each write ([http] write_timeout)
	Secrets      Masker        // fields of JSON payloads whose values are masked
}

// Serve streams sub's samples to w as Server-Sent Events: a message event per sample, a dropped
// event with the count before the next message whenever samples were dropped, a keep-alive
// comment after KeepAlive of silence, and an end event when the limit is reached, the maximum
// duration passed or the hub closed. It returns the end reason, or "" when the client went away
// (ctx ended) or a write failed. The caller closes sub.
func Serve(ctx context.Context, w http.ResponseWriter, sub *Subscriber, o ServeOptions) string {
	sw, err := NewWriter(w, o.WriteTimeout)
	if err != nil {
		return ""
	}
	var maxDur <-chan time.Time
	if o.MaxDuration > 0 {
		t := time.NewTimer(o.MaxDuration)
		defer t.Stop()
		maxDur = t.C
	}
	keepAlive := time.NewTicker(KeepAlive / 3)
	defer keepAlive.Stop()
	sent := 0
	ok := true
	dropped := func() {
		if n := sub.TakeDropped(); n > 0 && ok {
			ok = sw.Event(EventDropped, DroppedJSON(n, "")) == nil
		}
	}
	end := func(reason string) string {
		dropped()
		if ok && sw.Event(EventEnd, EndJSON(reason)) == nil {
			return reason
		}
		return ""
	}
	for ok {
		select {
		case <-ctx.Done():
			return ""
		case <-maxDur:
			return end(EndMaxDuration)
		case <-sub.Done():
			// What was taken before the shutdown still goes out; nothing more comes.
			for {
				select {
				case s := <-sub.Samples():
					if !sw.sample(sub, s, o.Secrets, dropped, &ok) {
						return ""
					}
					if sent++; o.Limit > 0 && sent >= o.Limit {
						return end(EndLimit)
					}
					continue
				default:
				}
				return end(EndShutdown)
			}
		case s := <-sub.Samples():
			if !sw.sample(sub, s, o.Secrets, dropped, &ok) {
				return ""
			}
			if sent++; o.Limit > 0 && sent >= o.Limit {
				return end(EndLimit)
			}
			if len(sub.Samples()) == 0 {
				dropped() // caught up: tell what was lost at once
			}
		case <-keepAlive.C:
			if sw.Silent() >= KeepAlive {
				ok = sw.KeepAlive() == nil
			}
		}
	}
	return ""
}

// sample writes the dropped count so far, then the sample's message event.
func (s *Writer) sample(sub *Subscriber, smp *Sample, secrets Masker, dropped func(), ok *bool) bool {
	dropped()
	if *ok {
		*ok = s.Event(EventMessage, smp.EventJSON(secrets)) == nil
	}
	sub.Release(smp)
	return *ok
}

// DroppedJSON is the data of a dropped event; replica names the runner in a fleet merge ("": none).
func DroppedJSON(n uint64, replica string) []byte {
	b := append([]byte(`{"dropped":`), strconv.FormatUint(n, 10)...)
	if replica != "" {
		b = append(append(b, `,"replica":`...), quote(replica)...)
	}
	return append(b, '}')
}

// EndJSON is the data of an end event.
func EndJSON(reason string) []byte {
	return append(append([]byte(`{"reason":`), quote(reason)...), '}')
}

// UnreachableJSON is the data of a fleet merge's unreachable event.
func UnreachableJSON(replica string, err error) []byte {
	b, _ := encode(struct {
		Replica string `json:"replica"`
		Error   string `json:"error"`
	}{replica, err.Error()})
	return b
}
