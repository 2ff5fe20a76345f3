package runner

import (
	"sync"
	"time"
)

// Status is the connector's lifecycle state, spelled as upstream's REST API spells it.
type Status string

// The lifecycle: starting -> running -> stopping -> stopped, or error (with a LastError) from any of them.
// A replica of a source on the iggy state backend waits in standby between starting and running
// while another replica holds the lease (standby.go).
const (
	StatusStarting Status = "starting"
	StatusRunning  Status = "running"
	StatusStopping Status = "stopping"
	StatusStopped  Status = "stopped"
	StatusError    Status = "error"
	// StatusPaused: an operator paused the connector (POST /pause, pause.go); the process serves on.
	StatusPaused Status = "paused"
	// StatusStandby: a source replica waiting for the lease (standby.go, state backend iggy).
	StatusStandby Status = "standby"
)

// LastError is the most recent error that put the connector into StatusError.
type LastError struct {
	Message   string `json:"message"`
	Timestamp uint64 `json:"timestamp"` // µs since the Unix epoch, as upstream
}

// statusBoard holds the connector status; every goroutine of the runner reads and writes it.
type statusBoard struct {
	mu      sync.Mutex
	status  Status
	lastErr *LastError
	// onChange, when set, receives every new status and last error (called with mu held, so
	// changes arrive in order).
	onChange func(Status, *LastError)
	// changes counts the sets; next is closed at the next one (a waiter's wake-up, watch).
	changes uint64
	next    chan struct{}
}

func newStatusBoard() *statusBoard {
	return &statusBoard{status: StatusStarting, next: make(chan struct{})}
}

// set moves to s. Moving to running or stopped clears the last error (upstream does the same).
// An error status is sticky against running: a later healthy batch does not hide a failure.
func (b *statusBoard) set(s Status) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == StatusError && s == StatusRunning {
		return
	}
	b.status = s
	if s == StatusRunning || s == StatusStopped {
		b.lastErr = nil
	}
	b.changed()
}

func (b *statusBoard) changed() {
	b.changes++
	close(b.next)
	b.next = make(chan struct{})
	if b.onChange != nil {
		b.onChange(b.status, b.lastErr)
	}
}

// setError moves to error and records msg.
func (b *statusBoard) setError(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.status = StatusError
	b.lastErr = &LastError{Message: msg, Timestamp: uint64(time.Now().UnixMicro())}
	b.changed()
}

// get returns the status and a copy of the last error (nil when none).
func (b *statusBoard) get() (Status, *LastError) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lastErr == nil {
		return b.status, nil
	}
	le := *b.lastErr
	return b.status, &le
}

// watch returns the status, how many times it was set so far and a channel closed at the next set.
func (b *statusBoard) watch() (st Status, changes uint64, next <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status, b.changes, b.next
}

// is reports whether the current status is one of ss.
func (b *statusBoard) is(ss ...Status) bool {
	st, _ := b.get()
	for _, s := range ss {
		if st == s {
			return true
		}
	}
	return false
}
