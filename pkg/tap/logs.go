package tap

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// LogsContentType is the media type of a logs answer without follow: one record per line.
const LogsContentType = "application/x-ndjson"

// HeaderLogsSeq names the last record a logs answer knows of (its ring's sequence number): a
// client that follows next with after=<that number> misses and repeats nothing. A fleet merge
// reads it; it is additive.
const HeaderLogsSeq = "Iggy-Logs-Seq"

// LogsQuery is what a logs client asks for: GET /logs?tail=N&level=warn&follow=true[&after=SEQ].
type LogsQuery struct {
	Tail   int        // the last N records (0: every record kept)
	Level  slog.Level // records at this level or above
	Follow bool       // stream the records as Server-Sent Events, and the new ones as they come
	After  *uint64    // instead of the tail: the records after this sequence number (HeaderLogsSeq)
}

// ParseLogsQuery reads a logs query; errors wrap ErrBadQuery and name the parameter.
func ParseLogsQuery(v url.Values) (LogsQuery, error) {
	q := LogsQuery{Level: logging.LevelTrace}
	var err error
	if q.Tail, err = intParam(v, "tail", 0, 1<<31-1); err != nil {
		return LogsQuery{}, err
	}
	if v.Has("level") {
		if q.Level, err = logging.ParseRecordLevel(v.Get("level")); err != nil {
			return LogsQuery{}, fmt.Errorf("%w: %w", ErrBadQuery, err)
		}
	}
	if v.Has("follow") {
		if q.Follow, err = strconv.ParseBool(v.Get("follow")); err != nil {
			return LogsQuery{}, fmt.Errorf("%w: follow %q: want true or false", ErrBadQuery, v.Get("follow"))
		}
	}
	if v.Has("after") {
		n, err := strconv.ParseUint(v.Get("after"), 10, 64)
		if err != nil {
			return LogsQuery{}, fmt.Errorf("%w: after %q: want a record sequence number (the %s header)", ErrBadQuery, v.Get("after"), HeaderLogsSeq)
		}
		q.After = &n
	}
	return q, nil
}

// Values is the query as URL parameters, for a proxy asking runners on the client's behalf.
func (q LogsQuery) Values() url.Values {
	v := url.Values{}
	if q.Tail > 0 {
		v.Set("tail", strconv.Itoa(q.Tail))
	}
	if q.Level > logging.LevelTrace {
		v.Set("level", logging.RecordLevel(q.Level))
	}
	if q.Follow {
		v.Set("follow", "true")
	}
	if q.After != nil {
		v.Set("after", strconv.FormatUint(*q.After, 10))
	}
	return v
}

// ServeLogs answers a logs query from ring: the records as JSON lines, or (Follow) as SSE log
// events followed by each new record until the client goes away or done is closed (the process
// is stopping; the stream then ends with an end event, reason shutdown). A HEAD request gets the
// headers alone (WriteHead when following): nothing is followed.
func ServeLogs(w http.ResponseWriter, r *http.Request, ring *logging.Ring, q LogsQuery, writeTimeout time.Duration, done <-chan struct{}) {
	ctx := r.Context()
	var first []logging.Entry
	var seq uint64
	if q.After != nil {
		first, seq = ring.After(*q.After, q.Level)
	} else {
		_, seq = ring.After(^uint64(0), q.Level)
		first = ring.Tail(q.Tail, q.Level)
		if len(first) > 0 {
			seq = max(seq, first[len(first)-1].Seq)
		}
	}
	w.Header().Set(HeaderLogsSeq, strconv.FormatUint(seq, 10))
	if !q.Follow {
		w.Header().Set("Content-Type", LogsContentType)
		w.Header().Set("Cache-Control", "no-store")
		buf := make([]byte, 0, 4096)
		for _, e := range first {
			buf = append(append(buf, e.JSON...), '\n')
		}
		_, _ = w.Write(buf)
		return
	}
	if r.Method == http.MethodHead {
		WriteHead(w)
		return
	}
	sw, err := NewWriter(w, writeTimeout)
	if err != nil {
		return
	}
	for _, e := range first {
		if sw.Event(EventLog, e.JSON) != nil {
			return
		}
	}
	keepAlive := time.NewTicker(KeepAlive / 3)
	defer keepAlive.Stop()
	for {
		changed := ring.Changed()
		var next []logging.Entry
		next, seq = ring.After(seq, q.Level)
		for _, e := range next {
			if sw.Event(EventLog, e.JSON) != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-done:
			_ = sw.Event(EventEnd, EndJSON(EndShutdown))
			return
		case <-changed:
		case <-keepAlive.C:
			if sw.Silent() >= KeepAlive && sw.KeepAlive() != nil {
				return
			}
		}
	}
}
