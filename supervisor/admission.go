package supervisor

import (
	"fmt"
	"net/http"
	"strconv"
)

// Routes whose every request spawns a process (validate: the runner's --check; preview: its
// --dry-run) or logs in to Iggy (offsets) run a few at a time, so a burst of them cannot exhaust
// processes or Iggy sessions; beyond that they are answered at once with 429 and Retry-After.
const (
	maxValidations  = 2
	maxPreviews     = 2
	maxOffsetsCalls = 4
	// admissionRetryAfter is the Retry-After of a refused request, in seconds.
	admissionRetryAfter = 1
)

// gate admits at most cap(g) requests at a time.
type gate chan struct{}

func newGate(size int) gate { return make(gate, size) }

// admit runs h when a place is free, else answers 429 naming what is busy.
func (g gate) admit(what string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case g <- struct{}{}:
			defer func() { <-g }()
			h(w, r)
		default:
			w.Header().Set("Retry-After", strconv.Itoa(admissionRetryAfter))
			writeAPIError(w, &apiError{status: http.StatusTooManyRequests, Code: "too_many_requests",
				Reason: fmt.Sprintf("%d %s requests are running, the most at a time; retry after %d s", cap(g), what, admissionRetryAfter)})
		}
	}
}
