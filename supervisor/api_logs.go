package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/fleet"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// Connector logs on the supervisor (docs/see-inside.md): GET /{sinks,sources}/{key}/logs. In
// spawn mode the supervisor keeps one ring per connector, fed by the runner lines it relays and by
// its own lines about that connector, so the records survive runner restarts; in attach mode it
// merges the runners' own GET /logs by time, each record naming its replica.

// LogRings keeps each connector's recent log records for the logs routes (spawn mode). Its
// Handler, among the supervisor logger's handlers, adds the supervisor's own lines about a
// connector (those carrying the "connector" attribute) to that connector's ring.
type LogRings struct {
	rings   sync.Map // connector label ("sink/key") -> *logging.Ring
	secrets config.SecretKeys
}

// NewLogRings keeps records with secret-named fields masked by secrets (http.secret_keys).
func NewLogRings(secrets config.SecretKeys) *LogRings { return &LogRings{secrets: secrets} }

// ring makes (or finds) the ring of a connector.
func (l *LogRings) ring(label string, records, bytes uint32) *logging.Ring {
	r, _ := l.rings.LoadOrStore(label, logging.NewRing(int(records), int(bytes)))
	return r.(*logging.Ring)
}

// Handler routes the records it is handed to their connector's ring.
func (l *LogRings) Handler() slog.Handler { return &ringRouter{rings: l} }

// keyConnector is the attribute of the supervisor's lines that names a connector (its label).
const keyConnector = "connector"

// ringRouter is the supervisor logger's handler that keeps lines about a connector in its ring.
type ringRouter struct {
	rings *LogRings
	to    *logging.Ring // set once an attribute named the connector
	attrs []slog.Attr
}

func (h *ringRouter) Enabled(context.Context, slog.Level) bool { return true }

func (h *ringRouter) Handle(_ context.Context, r slog.Record) error {
	to := h.to
	attrs := append([]slog.Attr(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == keyConnector {
			to = h.rings.lookup(a.Value.String())
			return true
		}
		attrs = append(attrs, a)
		return true
	})
	if to != nil {
		to.Add(logging.NewRecord(r.Time, r.Level, r.Message, attrs, logging.OriginSupervisor, logging.TargetRuntime, h.rings.secrets))
	}
	return nil
}

func (h *ringRouter) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		if a.Key == keyConnector {
			c.to = h.rings.lookup(a.Value.String())
			continue
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

// WithGroup is not used by the supervisor's loggers; grouped attributes stay flat here.
func (h *ringRouter) WithGroup(string) slog.Handler { return h }

func (l *LogRings) lookup(label string) *logging.Ring {
	if r, ok := l.rings.Load(label); ok {
		return r.(*logging.Ring)
	}
	return nil
}

// keepLine adds one relayed runner line to the connector's ring.
func (m *managed) keepLine(l logging.Line) {
	m.logs.Add(logging.NewRecord(l.Time, l.Level, l.Message, l.Attrs, logging.OriginRunner, logging.TargetRunner, m.sup.logRings.secrets))
}

// logsQuery reads a logs query or answers 400.
func logsQuery(w http.ResponseWriter, r *http.Request) (tap.LogsQuery, bool) {
	q, err := tap.ParseLogsQuery(r.URL.Query())
	if err != nil {
		writeAPIError(w, &apiError{status: http.StatusBadRequest, Code: "invalid_query", Reason: err.Error()})
		return tap.LogsQuery{}, false
	}
	return q, true
}

// handleLogs answers from the connector's ring (spawn mode).
func (s *Supervisor) handleLogs(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	q, ok := logsQuery(w, r)
	if !ok {
		return
	}
	tap.ServeLogs(w, r, m.logs, q, s.runtime.HTTP.Limits.WriteTimeout, s.streamsDone())
}

// maxReplicaLogs bounds what one replica's GET /logs may answer.
const maxReplicaLogs = 64 << 20

// replicaLogs is what one replica answered to a logs query: its records (replica set), and the
// sequence number to follow from.
type replicaLogs struct {
	records []logging.Record
	seq     uint64
}

// fetchReplicaLogs reads one replica's records for q (not followed).
func (s *Supervisor) fetchReplicaLogs(resp *http.Response, replica string) (replicaLogs, error) {
	defer resp.Body.Close()
	var out replicaLogs
	out.seq, _ = strconv.ParseUint(resp.Header.Get(tap.HeaderLogsSeq), 10, 64)
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReplicaLogs))
	if err != nil {
		return out, err
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, maxReplicaLogs)
	for sc.Scan() {
		var rec logging.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return out, fmt.Errorf("a log line that does not parse: %w", err)
		}
		rec.Replica = replica
		out.records = append(out.records, rec)
	}
	return out, sc.Err()
}

// handleFleetLogs merges the replicas' logs by time (attach mode): the last tail records of them
// all; with follow, those as log events and then every new record of each replica as it comes.
// Replicas that do not answer are named in the Iggy-Fleet-Unreachable header (unreachable events
// when following); none answering is 502.
func (s *Supervisor) handleFleetLogs(w http.ResponseWriter, r *http.Request, c fleetConnector) {
	q, ok := logsQuery(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	first := q
	first.Follow, first.After = false, nil
	path := "/logs?" + first.Values().Encode()
	answers, failed := s.openReplicas(ctx, c.replicas, func(fleet.Replica) string { return path })
	seqs := map[string]uint64{}
	var merged []logging.Record
	for endpoint, resp := range answers {
		got, err := s.fetchReplicaLogs(resp, endpoint)
		if err != nil {
			failed[endpoint] = err
			continue
		}
		seqs[endpoint] = got.seq
		merged = append(merged, got.records...)
	}
	if len(seqs) == 0 {
		writeAPIError(w, replicasFailed("the logs", c, failed))
		return
	}
	slices.SortStableFunc(merged, func(a, b logging.Record) int { return strings.Compare(a.Time, b.Time) })
	if q.Tail > 0 && len(merged) > q.Tail {
		merged = merged[len(merged)-q.Tail:]
	}
	if !q.Follow {
		if len(failed) > 0 {
			var names []string
			for endpoint, err := range failed {
				names = append(names, endpoint+": "+err.Error())
			}
			slices.Sort(names)
			w.Header().Set(headerFleetUnreachable, strings.Join(names, "; "))
		}
		w.Header().Set("Content-Type", tap.LogsContentType)
		w.Header().Set("Cache-Control", "no-store")
		var buf bytes.Buffer
		for _, rec := range merged {
			buf.Write(rec.JSON())
			buf.WriteByte('\n')
		}
		_, _ = w.Write(buf.Bytes())
		return
	}
	if r.Method == http.MethodHead { // the headers of the stream, and no stream
		tap.WriteHead(w)
		return
	}
	sw, err := tap.NewWriter(w, s.runtime.HTTP.Limits.WriteTimeout)
	if err != nil {
		return
	}
	for _, rep := range c.replicas {
		if err, bad := failed[rep.Endpoint]; bad && sw.Event(tap.EventUnreachable, tap.UnreachableJSON(rep.Endpoint, err)) != nil {
			return
		}
	}
	for _, rec := range merged {
		if sw.Event(tap.EventLog, rec.JSON()) != nil {
			return
		}
	}
	// Follow each replica from the last record it answered, so nothing is missed or repeated.
	var following []fleet.Replica
	for _, rep := range c.replicas {
		if _, ok := seqs[rep.Endpoint]; ok {
			following = append(following, rep)
		}
	}
	streams, failed := s.openReplicas(ctx, following, func(rep fleet.Replica) string {
		next := q
		next.Tail, next.After, next.Follow = 0, new(uint64), true
		*next.After = seqs[rep.Endpoint]
		return "/logs?" + next.Values().Encode()
	})
	for _, rep := range following {
		if err, bad := failed[rep.Endpoint]; bad && sw.Event(tap.EventUnreachable, tap.UnreachableJSON(rep.Endpoint, err)) != nil {
			return
		}
	}
	events := make(chan streamEvent, 64)
	for endpoint, resp := range streams {
		go pumpEvents(ctx, endpoint, resp.Body, events)
	}
	keepAlive := time.NewTicker(tap.KeepAlive / 3)
	defer keepAlive.Stop()
	open := len(streams)
	for open > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-s.streamsDone():
			_ = sw.Event(tap.EventEnd, tap.EndJSON(tap.EndShutdown))
			return
		case <-keepAlive.C:
			if sw.Silent() >= tap.KeepAlive && sw.KeepAlive() != nil {
				return
			}
		case ev := <-events:
			var werr error
			switch {
			case ev.err != nil:
				open--
				werr = sw.Event(tap.EventUnreachable, tap.UnreachableJSON(ev.replica, fmt.Errorf("its logs stream ended: %w", ev.err)))
			case ev.msg.Event == tap.EventLog:
				var rec logging.Record
				if err := json.Unmarshal(ev.msg.Data, &rec); err != nil {
					break
				}
				rec.Replica = ev.replica
				werr = sw.Event(tap.EventLog, rec.JSON())
			}
			if werr != nil {
				return
			}
		}
	}
	_ = sw.Event(tap.EventEnd, tap.EndJSON(tap.EndShutdown))
}

// headerFleetUnreachable names, in a merged answer, the replicas that did not answer and why.
const headerFleetUnreachable = "Iggy-Fleet-Unreachable"
