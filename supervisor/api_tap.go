package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/fleet"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// The live tap on the supervisor (docs/see-inside.md): GET /{sinks,sources}/{key}/tap. In spawn
// mode it relays the runner's own GET /tap over the runner's socket, event by event, flushed as
// it comes; in attach mode it merges the taps of every replica, each message naming its replica.

// tapRoutes registers the tap and logs routes of one connector kind (both modes).
func (s *Supervisor) tapRoutes(mux router, base string, kind config.ConnectorKind) {
	if s.fleet != nil {
		read := func(h fleetHandler) http.HandlerFunc { return s.fleetRead(s.withKind(kind, s.fleetConnector(h))) }
		mux.HandleFunc("GET "+base+"/{key}/tap", read(s.handleFleetTap))
		mux.HandleFunc("GET "+base+"/{key}/logs", read(s.handleFleetLogs)) // api_logs.go
		return
	}
	mux.HandleFunc("GET "+base+"/{key}/tap", s.withKind(kind, s.handleTap))
	mux.HandleFunc("GET "+base+"/{key}/logs", s.withKind(kind, s.handleLogs)) // api_logs.go
}

// tapQuery checks that the tap is on and reads the query, or answers 403 or 400.
func (s *Supervisor) tapQuery(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) (tap.Query, bool) {
	if !s.runtime.HTTP.Tap {
		writeAPIError(w, &apiError{status: http.StatusForbidden, Code: "tap_disabled",
			Reason: "the live tap is off: [http] tap = false (IGGY_CONNECTORS_HTTP_TAP)"})
		return tap.Query{}, false
	}
	q, err := tap.ParseQuery(r.URL.Query(), string(kind))
	if err != nil {
		writeAPIError(w, &apiError{status: http.StatusBadRequest, Code: "invalid_query", Reason: err.Error()})
		return tap.Query{}, false
	}
	return q, true
}

// streamsDone is closed when the supervisor shuts down: open streams end.
func (s *Supervisor) streamsDone() <-chan struct{} {
	s.streamsOnce.Do(func() { s.streamsEnd = make(chan struct{}) })
	return s.streamsEnd
}

// endStreams ends the open tap and logs streams (Shutdown).
func (s *Supervisor) endStreams() {
	s.streamsDone() // made, if no stream asked yet
	s.streamsClose.Do(func() { close(s.streamsEnd) })
}

// handleTap relays the connector's runner tap (spawn mode).
func (s *Supervisor) handleTap(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	q, ok := s.tapQuery(w, r, kind)
	if !ok {
		return
	}
	sn := m.snapshot()
	if !sn.proc.alive() {
		writeAPIError(w, &apiError{status: http.StatusServiceUnavailable, Code: "not_running",
			Reason: fmt.Sprintf("%s %q has no running runner (status %s); nothing to tap", kind, m.key, sn.status)})
		return
	}
	// HEAD is relayed as HEAD: the runner answers what a GET would start with and opens no tap.
	req, err := http.NewRequestWithContext(r.Context(), r.Method, runnerBaseURL+"/tap?"+q.Values().Encode(), nil)
	if err != nil {
		writeAPIError(w, internalError(err))
		return
	}
	resp, err := sn.proc.http.Do(req)
	if err != nil {
		writeAPIError(w, &apiError{status: http.StatusBadGateway, Code: "runner_unreachable",
			Reason: fmt.Sprintf("%s %q: the runner's tap: %v", kind, m.key, err)})
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		writeAPIError(w, runnerRefused(resp.StatusCode, strings.TrimSpace(string(body))))
		return
	}
	if r.Method == http.MethodHead {
		tap.WriteHead(w)
		return
	}
	events := make(chan streamEvent, 64)
	go pumpEvents(r.Context(), "", resp.Body, events)
	sw, err := tap.NewWriter(w, s.runtime.HTTP.Limits.WriteTimeout)
	if err != nil {
		return
	}
	keepAlive := time.NewTicker(tap.KeepAlive / 3)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-events:
			if ev.err != nil { // the runner went away without an end event: it stopped
				_ = sw.Event(tap.EventEnd, tap.EndJSON(tap.EndShutdown))
				return
			}
			if sw.Raw(ev.msg.Raw) != nil || ev.msg.Event == tap.EventEnd {
				return
			}
		case <-keepAlive.C:
			if sw.Silent() >= tap.KeepAlive && sw.KeepAlive() != nil {
				return
			}
		}
	}
}

// runnerRefused is the answer to a runner's refusal of a tap or logs request: its status (429, 403,
// 400) with its text, anything else a bad gateway.
func runnerRefused(status int, text string) *apiError {
	switch status {
	case http.StatusTooManyRequests:
		return &apiError{status: status, Code: "too_many_taps", Reason: text}
	case http.StatusForbidden:
		return &apiError{status: status, Code: "tap_disabled", Reason: text}
	case http.StatusBadRequest:
		return &apiError{status: status, Code: "invalid_query", Reason: text}
	}
	return &apiError{status: http.StatusBadGateway, Code: "runner_failed", Reason: fmt.Sprintf("runner answered %d: %s", status, text)}
}

// streamEvent is one event (or the end) of a runner's stream, named by its replica.
type streamEvent struct {
	replica string
	msg     tap.Message
	err     error // set once: the stream ended (io.EOF) or failed
}

// pumpEvents reads body's events into out until it ends or ctx does; it closes body.
func pumpEvents(ctx context.Context, replica string, body io.ReadCloser, out chan<- streamEvent) {
	defer body.Close()
	rd := tap.NewReader(body)
	for {
		m, err := rd.Next()
		select {
		case out <- streamEvent{replica: replica, msg: m, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// openReplicas starts path on every replica at once; it returns the streams that opened, by
// endpoint, and why the others did not.
func (s *Supervisor) openReplicas(ctx context.Context, replicas []fleet.Replica, path func(fleet.Replica) string) (map[string]*http.Response, map[string]error) {
	type opened struct {
		endpoint string
		resp     *http.Response
		err      error
	}
	results := make(chan opened, len(replicas))
	for _, rep := range replicas {
		go func() {
			resp, err := s.fleet.view.Open(ctx, s.env.FleetTimeout, rep.Endpoint, path(rep))
			results <- opened{rep.Endpoint, resp, err}
		}()
	}
	ok, failed := map[string]*http.Response{}, map[string]error{}
	for range replicas {
		o := <-results
		if o.err != nil {
			failed[o.endpoint] = o.err
		} else {
			ok[o.endpoint] = o.resp
		}
	}
	return ok, failed
}

// replicasFailed is the 502 of a merged route none of whose replicas could be reached.
func replicasFailed(what string, c fleetConnector, failed map[string]error) *apiError {
	var parts []string
	for _, rep := range c.replicas {
		if err, bad := failed[rep.Endpoint]; bad {
			parts = append(parts, fmt.Sprintf("%s: %v", rep.Endpoint, err))
		}
	}
	return &apiError{status: http.StatusBadGateway, Code: "replicas_failed",
		Reason: fmt.Sprintf("%s of %s %q: no replica answered: %s", what, c.kind, c.primary.Key, strings.Join(parts, "; "))}
}

// handleFleetTap merges the taps of every replica of the connector (attach mode). Each replica
// is asked for its share of the rate; the limit and [http] tap_max_duration apply to the merged
// stream. A replica that cannot be reached, or whose stream fails, is reported in an unreachable
// event; the stream ends when the limit is reached, the duration passed, every replica's stream
// ended, or the client left.
func (s *Supervisor) handleFleetTap(w http.ResponseWriter, r *http.Request, c fleetConnector) {
	q, ok := s.tapQuery(w, r, c.kind)
	if !ok {
		return
	}
	if r.Method == http.MethodHead { // the headers of the merged stream; no replica's tap is opened
		tap.WriteHead(w)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	per := q
	per.Rate = max(1, (q.Rate+len(c.replicas)-1)/len(c.replicas))
	path := "/tap?" + per.Values().Encode()
	streams, failed := s.openReplicas(ctx, c.replicas, func(fleet.Replica) string { return path })
	if len(streams) == 0 {
		writeAPIError(w, replicasFailed("the tap", c, failed))
		return
	}
	events := make(chan streamEvent, 64)
	for endpoint, resp := range streams {
		go pumpEvents(ctx, endpoint, resp.Body, events)
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
	var maxDur <-chan time.Time
	if d := s.runtime.HTTP.TapMaxDuration; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		maxDur = t.C
	}
	keepAlive := time.NewTicker(tap.KeepAlive / 3)
	defer keepAlive.Stop()
	open, sent, lastReason := len(streams), 0, tap.EndShutdown
	ended := map[string]bool{}
	end := func(reason string) { _ = sw.Event(tap.EventEnd, tap.EndJSON(reason)) }
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.streamsDone():
			end(tap.EndShutdown)
			return
		case <-maxDur:
			end(tap.EndMaxDuration)
			return
		case <-keepAlive.C:
			if sw.Silent() >= tap.KeepAlive && sw.KeepAlive() != nil {
				return
			}
		case ev := <-events:
			var werr error
			switch {
			case ev.err != nil:
				if ended[ev.replica] {
					break
				}
				ended[ev.replica] = true
				open--
				werr = sw.Event(tap.EventUnreachable, tap.UnreachableJSON(ev.replica, fmt.Errorf("its tap ended without an end event: %w", ev.err)))
			case ev.msg.Event == tap.EventMessage:
				var e tap.Event
				if err := json.Unmarshal(ev.msg.Data, &e); err != nil {
					werr = sw.Event(tap.EventUnreachable, tap.UnreachableJSON(ev.replica, fmt.Errorf("an event that does not parse: %w", err)))
					break
				}
				e.Replica = ev.replica
				data, _ := tap.Marshal(&e) // as the runner wrote it, replica added
				werr = sw.Event(tap.EventMessage, data)
				if sent++; werr == nil && q.Limit > 0 && sent >= q.Limit {
					end(tap.EndLimit)
					return
				}
			case ev.msg.Event == tap.EventDropped:
				var d struct{ Dropped uint64 }
				if json.Unmarshal(ev.msg.Data, &d) == nil && d.Dropped > 0 {
					werr = sw.Event(tap.EventDropped, tap.DroppedJSON(d.Dropped, ev.replica))
				}
			case ev.msg.Event == tap.EventEnd:
				ended[ev.replica] = true
				open--
				var e struct{ Reason string }
				if json.Unmarshal(ev.msg.Data, &e) == nil && e.Reason != "" {
					lastReason = e.Reason
				}
			}
			if werr != nil {
				return
			}
			if open == 0 {
				end(lastReason)
				return
			}
		}
	}
}
