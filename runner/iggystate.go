package runner

import (
	"fmt"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
)

// The runner's view of its Iggy connection. The client reports when a request or the heartbeat
// lost the connection (a server that stopped answering within [iggy] request_timeout, a reply
// that cannot be trusted, a closed socket) and when a new session is logged in. Until then the
// runner is not ready (/ready answers 503) and /stats shows why in last_error; the status stays
// what it was, since the client reconnects by itself and the connector resumes where it stopped.

// iggyOptions are the client options of this runner's connection, with its state reported here.
func (r *Runner) iggyOptions() iggyclient.Options {
	o := r.settings.Iggy.options(r.settings.Env, r.log)
	o.OnState = r.iggyState
	return o
}

// iggyState takes the client's report: a lost connection marks the runner not ready and records
// the reason as the last error (the client's WARN line names it too); a restored one makes it
// ready again.
func (r *Runner) iggyState(s iggyclient.State) {
	if s.Up {
		r.iggyDown.Store(false)
		r.status.touch()
		r.log.Info("iggy connection restored", "address", r.settings.Iggy.Address)
		return
	}
	r.iggyDown.Store(true)
	r.status.note(fmt.Sprintf("Iggy connection lost, reconnecting: %v", s.Err))
}

// note records msg as the last error without changing the status.
func (b *statusBoard) note(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastErr = &LastError{Message: msg, Timestamp: uint64(time.Now().UnixMicro())}
	b.changed()
}

// touch wakes the status's watchers without changing it (readiness changed).
func (b *statusBoard) touch() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.changed()
}
