package runner

import (
	"fmt"
	"net/http"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// logsPath is the runner's logs route.
const logsPath = "/logs"

// logRing is the ring of the runner's own log records, bounded by [http] log_records and
// log_bytes, or nil when either is 0 (a runner the supervisor spawned: the supervisor keeps the
// records of the lines it relays).
func logRing(s Settings) *logging.Ring {
	h := s.Runtime.HTTP
	if h.LogRecords == 0 || h.LogBytes == 0 {
		return nil
	}
	return logging.NewRing(int(h.LogRecords), int(h.LogBytes))
}

// keepLogs makes ring the one GET /logs answers from (Main's, fed by the process logger).
func (r *Runner) keepLogs(ring *logging.Ring) {
	if ring != nil {
		r.logs = ring
	}
}

// stopFollowers ends the logs streams that follow (at shutdown, before the endpoint closes).
func (r *Runner) stopFollowers() { r.logsDoneOnce.Do(func() { close(r.logsDone) }) }

// handleLogs serves GET /logs?tail=N&level=warn&follow=true: the runner's recent log records
// (its own lines and its plugin's) as JSON lines, or followed as Server-Sent Events; HEAD gets
// the headers alone.
func (r *Runner) handleLogs(w http.ResponseWriter, req *http.Request) {
	q, err := tap.ParseLogsQuery(req.URL.Query())
	if err != nil {
		http.Error(w, fmt.Sprintf("%s %q: %v", r.spec.Kind, r.spec.Key, err), http.StatusBadRequest)
		return
	}
	tap.ServeLogs(w, req, r.logs, q, r.settings.HTTP.Limits.WriteTimeout, r.logsDone)
}
