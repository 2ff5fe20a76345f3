package supervisor

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/msgpackjson"
	"github.com/iggy-connectors-go/runtime/pkg/state"
)

// iggyDialTimeout bounds reaching Iggy for one offsets request.
const iggyDialTimeout = 3 * time.Second

// offsetRoutes registers GET, PUT and DELETE /{sinks|sources}/{key}/offsets.
func (s *Supervisor) offsetRoutes(mux *http.ServeMux, base string, kind config.ConnectorKind) {
	get, put, del := s.handleSinkOffsets, s.handlePutSinkOffsets, s.handleDeleteSinkOffsets
	if kind == config.KindSource {
		get, put, del = s.handleSourceOffsets, s.handlePutSourceOffsets, s.handleDeleteSourceOffsets
	}
	budget := s.slowBudget()
	mux.HandleFunc("GET "+base+"/{key}/offsets", s.withBudget(budget, s.withKind(kind, get)))
	mux.HandleFunc("PUT "+base+"/{key}/offsets", s.withBudget(budget, s.withKind(kind, put)))
	mux.HandleFunc("DELETE "+base+"/{key}/offsets", s.withBudget(budget, s.withKind(kind, del)))
}

// connectorStopped is the rule for rewriting offsets or state: the connector's current status is
// stopped and no runner process of it is alive, so nothing consumes or saves meanwhile. (A
// disabled connector is stopped; so is one stopped through the API.)
func connectorStopped(m *managed) bool {
	sn := m.snapshot()
	return sn.status == statusStopped && (sn.proc == nil || sn.proc.exited())
}

// whileStopped answers 409 unless the connector is stopped (connectorStopped). When it is, it
// holds the connector's operations lock (the one start and restart take) until unlock is called,
// so the connector cannot start between the check and the write.
func whileStopped(w http.ResponseWriter, m *managed) (unlock func(), ok bool) {
	m.ops.Lock()
	if connectorStopped(m) {
		return m.ops.Unlock, true
	}
	m.ops.Unlock()
	writeAPIError(w, &apiError{status: http.StatusConflict, Code: "connector_not_stopped",
		Reason: fmt.Sprintf("%s %q is %s: its offsets can only be changed while it is stopped", m.kind, m.key, m.snapshot().status)})
	return nil, false
}

func badOffsets(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, Code: "invalid_offsets", Reason: fmt.Sprintf(format, args...)}
}

// iggyError maps a failed Iggy call: 503 when the server cannot be reached, else 502 naming it.
func (s *Supervisor) iggyError(err error) *apiError {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, iggyclient.ErrClosed) {
		return &apiError{status: http.StatusServiceUnavailable, Code: "iggy_unavailable",
			Reason: fmt.Sprintf("Iggy at %s cannot be reached: %v", s.runtime.Iggy.Address, err)}
	}
	return &apiError{status: http.StatusBadGateway, Code: "iggy_error", Reason: fmt.Sprintf("Iggy at %s: %v", s.runtime.Iggy.Address, err)}
}

// dialIggy connects with the settings every runner gets ([iggy]).
func (s *Supervisor) dialIggy(ctx context.Context) (iggyclient.Admin, error) {
	token, err := s.runtime.Iggy.ResolveToken()
	if err != nil {
		return nil, fmt.Errorf("iggy.token: %w", err)
	}
	i := s.runtime.Iggy
	ctx, cancel := context.WithTimeout(ctx, iggyDialTimeout)
	defer cancel()
	return iggyclient.DialAdmin(ctx, iggyclient.Options{
		Address: i.Address, Username: i.Username, Password: i.Password, Token: token,
		TLSEnabled: i.TLS.Enabled, TLSCAFile: i.TLS.CAFile, TLSDomain: i.TLS.Domain,
		HeartbeatInterval: -1, Logger: s.log.With("component", "iggy"),
	})
}

// admin connects to Iggy, answering 503 or 502 when it cannot.
func (s *Supervisor) admin(w http.ResponseWriter, r *http.Request) (iggyclient.Admin, bool) {
	admin, err := s.dialIggy(r.Context())
	if err != nil {
		writeAPIError(w, s.iggyError(err))
		return nil, false
	}
	return admin, true
}

// adminWhileStopped is admin for a write: it answers 409 unless the connector is stopped and
// holds the connector's operations lock until release (whileStopped).
func (s *Supervisor) adminWhileStopped(w http.ResponseWriter, r *http.Request, m *managed) (admin iggyclient.Admin, release func(), ok bool) {
	unlock, ok := whileStopped(w, m)
	if !ok {
		return nil, nil, false
	}
	if admin, ok = s.admin(w, r); !ok {
		unlock()
		return nil, nil, false
	}
	return admin, func() { admin.Close(); unlock() }, true
}

// sinkTopic is one topic a sink reads, with its consumer group.
type sinkTopic struct{ stream, topic, group string }

func sinkTopics(cfg config.Connector) []sinkTopic {
	var out []sinkTopic
	for _, e := range cfg.Streams {
		group := e.ConsumerGroup
		if group == "" {
			group = config.DefaultConsumerGroup(cfg.Key)
		}
		for _, t := range e.Topics {
			out = append(out, sinkTopic{e.Stream, t, group})
		}
	}
	return out
}

// sinkOffset is one element of GET /sinks/{key}/offsets.
type sinkOffset struct {
	Stream        string  `json:"stream"`
	Topic         string  `json:"topic"`
	PartitionID   uint32  `json:"partition_id"`
	ConsumerGroup string  `json:"consumer_group"`
	StoredOffset  *uint64 `json:"stored_offset"`  // null: nothing stored, the next start reads from 0
	CurrentOffset *uint64 `json:"current_offset"` // null: the partition holds no message
	Lag           uint64  `json:"lag"`
}

// offsetLag is the number of messages the group has not consumed: those after the stored offset,
// or every offset 0..current when nothing is stored; 0 for an empty partition.
func offsetLag(stored *uint64, p iggyclient.PartitionInfo) (current *uint64, lag uint64) {
	if p.Messages == 0 && p.CurrentOffset == 0 {
		return nil, 0
	}
	cur := p.CurrentOffset
	switch {
	case stored == nil:
		return &cur, cur + 1
	case *stored < cur:
		return &cur, cur - *stored
	}
	return &cur, 0
}

// sinkConnector finds the sink of the path's key, whose config must have loaded.
func (s *Supervisor) sinkConnector(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) (*managed, config.Connector, bool) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return nil, config.Connector{}, false
	}
	sn := m.snapshot()
	if sn.placeholder {
		writeAPIError(w, &apiError{status: http.StatusConflict, Code: "invalid_configuration",
			Reason: fmt.Sprintf("%s %q: its config does not load, so its streams are unknown", kind, m.key)})
		return nil, config.Connector{}, false
	}
	return m, sn.cfg, true
}

func (s *Supervisor) handleSinkOffsets(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	_, cfg, ok := s.sinkConnector(w, r, kind)
	if !ok {
		return
	}
	admin, ok := s.admin(w, r)
	if !ok {
		return
	}
	defer admin.Close()
	out := struct {
		Offsets []sinkOffset `json:"offsets"`
	}{Offsets: []sinkOffset{}}
	for _, t := range sinkTopics(cfg) {
		parts, err := admin.Partitions(r.Context(), t.stream, t.topic)
		if err != nil {
			writeAPIError(w, s.iggyError(err))
			return
		}
		for _, p := range parts {
			o := sinkOffset{Stream: t.stream, Topic: t.topic, PartitionID: p.ID, ConsumerGroup: t.group}
			stored, has, err := admin.GroupOffset(r.Context(), t.stream, t.topic, t.group, p.ID)
			if err != nil {
				writeAPIError(w, s.iggyError(err))
				return
			}
			if has {
				o.StoredOffset = &stored
			}
			o.CurrentOffset, o.Lag = offsetLag(o.StoredOffset, p)
			out.Offsets = append(out.Offsets, o)
		}
	}
	body, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, body)
}

// offsetWrite is one element of PUT /sinks/{key}/offsets: the offset to store for the group, as
// GET shows stored_offset (the last consumed message: the next start reads from offset+1).
type offsetWrite struct {
	Stream      *string `json:"stream"`
	Topic       *string `json:"topic"`
	PartitionID *uint32 `json:"partition_id"`
	Offset      *uint64 `json:"offset"`
}

// decodeStrict decodes body into v, refusing unknown members, with errors naming the body.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: expected %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return err
	}
	return nil
}

func (s *Supervisor) handlePutSinkOffsets(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, cfg, ok := s.sinkConnector(w, r, kind)
	if !ok {
		return
	}
	body, ok := readJSONBody(w, r)
	if !ok {
		return
	}
	topics := sinkTopics(cfg)
	entries, bad := parseOffsetWrites(body, topics, m)
	if bad != nil {
		writeAPIError(w, bad)
		return
	}
	admin, release, ok := s.adminWhileStopped(w, r, m)
	if !ok {
		return
	}
	defer release()
	writes, bad := s.planOffsetWrites(r.Context(), admin, topics, entries)
	if bad != nil {
		writeAPIError(w, bad)
		return
	}
	for _, t := range topics {
		if offsets := writes[t]; offsets != nil {
			if err := admin.SetGroupOffsets(r.Context(), t.stream, t.topic, t.group, offsets); err != nil {
				writeAPIError(w, s.offsetWriteError(err))
				return
			}
		}
	}
	s.log.Info("consumer offsets set", "connector", m.label(), "entries", len(entries))
	w.WriteHeader(http.StatusNoContent)
}

// parseOffsetWrites reads a PUT body: every entry complete, on a topic the sink reads, each
// partition once (400 naming the entry otherwise).
func parseOffsetWrites(body []byte, topics []sinkTopic, m *managed) ([]offsetWrite, *apiError) {
	var req struct {
		Offsets []offsetWrite `json:"offsets"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return nil, badOffsets("Invalid offsets: %v", err)
	}
	if len(req.Offsets) == 0 {
		return nil, badOffsets("Invalid offsets: offsets: at least one entry is required")
	}
	type partitionKey struct {
		stream, topic string
		id            uint32
	}
	seen := map[partitionKey]int{}
	for i, o := range req.Offsets {
		for _, field := range []struct {
			name string
			set  bool
		}{{"stream", o.Stream != nil}, {"topic", o.Topic != nil}, {"partition_id", o.PartitionID != nil}, {"offset", o.Offset != nil}} {
			if !field.set {
				return nil, badOffsets("Invalid offsets: offsets[%d].%s: required", i, field.name)
			}
		}
		if !slices.ContainsFunc(topics, func(t sinkTopic) bool { return t.stream == *o.Stream && t.topic == *o.Topic }) {
			return nil, badOffsets("Invalid offsets: offsets[%d]: stream %q topic %q is not read by %s %q (it reads %s)",
				i, *o.Stream, *o.Topic, m.kind, m.key, describeTopics(topics))
		}
		k := partitionKey{*o.Stream, *o.Topic, *o.PartitionID}
		if j, dup := seen[k]; dup {
			return nil, badOffsets("Invalid offsets: offsets[%d]: the same partition as offsets[%d]", i, j)
		}
		seen[k] = i
	}
	return req.Offsets, nil
}

// planOffsetWrites checks every entry against its topic on Iggy (the partition exists, the offset
// is at most its last offset) before anything is written, and groups the writes by topic.
func (s *Supervisor) planOffsetWrites(ctx context.Context, admin iggyclient.Admin, topics []sinkTopic, entries []offsetWrite) (map[sinkTopic]map[uint32]uint64, *apiError) {
	writes := map[sinkTopic]map[uint32]uint64{}
	for _, t := range topics {
		var parts map[uint32]iggyclient.PartitionInfo
		for i, o := range entries {
			if *o.Stream != t.stream || *o.Topic != t.topic {
				continue
			}
			if parts == nil {
				list, err := admin.Partitions(ctx, t.stream, t.topic)
				if err != nil {
					return nil, s.iggyError(err)
				}
				parts = make(map[uint32]iggyclient.PartitionInfo, len(list))
				for _, p := range list {
					parts[p.ID] = p
				}
			}
			p, ok := parts[*o.PartitionID]
			if !ok {
				return nil, badOffsets("Invalid offsets: offsets[%d].partition_id: stream %q topic %q has no partition %d (it has %d)",
					i, t.stream, t.topic, *o.PartitionID, len(parts))
			}
			if cur, _ := offsetLag(nil, p); cur == nil || *o.Offset > *cur {
				last := "it holds no message"
				if cur != nil {
					last = fmt.Sprintf("its last offset is %d", *cur)
				}
				return nil, badOffsets("Invalid offsets: offsets[%d].offset: %d is beyond partition %d of stream %q topic %q (%s)",
					i, *o.Offset, p.ID, t.stream, t.topic, last)
			}
			if writes[t] == nil {
				writes[t] = map[uint32]uint64{}
			}
			writes[t][p.ID] = *o.Offset
		}
	}
	return writes, nil
}

// offsetWriteError maps a failed write: a partition another group member holds is a conflict.
func (s *Supervisor) offsetWriteError(err error) *apiError {
	if errors.Is(err, iggyclient.ErrPartitionOwned) {
		return &apiError{status: http.StatusConflict, Code: "partition_assigned",
			Reason: fmt.Sprintf("%v: another consumer (a replica of the connector?) is a member of the group", err)}
	}
	return s.iggyError(err)
}

func describeTopics(topics []sinkTopic) string {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = fmt.Sprintf("%s/%s", t.stream, t.topic)
	}
	return strings.Join(names, ", ")
}

func (s *Supervisor) handleDeleteSinkOffsets(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, cfg, ok := s.sinkConnector(w, r, kind)
	if !ok {
		return
	}
	admin, release, ok := s.adminWhileStopped(w, r, m)
	if !ok {
		return
	}
	defer release()
	for _, t := range sinkTopics(cfg) {
		parts, err := admin.Partitions(r.Context(), t.stream, t.topic)
		if err != nil {
			writeAPIError(w, s.iggyError(err))
			return
		}
		ids := make([]uint32, len(parts))
		for i, p := range parts {
			ids[i] = p.ID
		}
		if err := admin.DeleteGroupOffsets(r.Context(), t.stream, t.topic, t.group, ids); err != nil {
			writeAPIError(w, s.offsetWriteError(err))
			return
		}
	}
	s.log.Info("consumer offsets deleted", "connector", m.label())
	w.WriteHeader(http.StatusNoContent)
}

// sourceState is GET /sources/{key}/offsets: the state the next start loads.
type sourceState struct {
	State     *string         `json:"state"`      // standard base64
	StateJSON json.RawMessage `json:"state_json"` // the state as MessagePack decoded to JSON; null when it is not MessagePack
	UpdatedAt *string         `json:"updated_at"` // RFC 3339, when the state was written
}

func (s *Supervisor) handleSourceOffsets(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	data, at, err := state.Current(s.statePath, m.key)
	if err != nil {
		writeAPIError(w, &apiError{status: http.StatusInternalServerError, Code: "error", Reason: err.Error()})
		return
	}
	out := sourceState{StateJSON: json.RawMessage("null")}
	if data != nil {
		b64 := base64.StdEncoding.EncodeToString(data)
		stamp := at.UTC().Format(time.RFC3339Nano)
		out.State, out.UpdatedAt = &b64, &stamp
		if text, err := msgpackjson.ToJSON(data); err == nil {
			out.StateJSON = text
		}
	}
	body, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, body)
}

func (s *Supervisor) handlePutSourceOffsets(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	body, ok := readJSONBody(w, r)
	if !ok {
		return
	}
	var req struct {
		State     *string         `json:"state"`
		StateJSON json.RawMessage `json:"state_json"`
		UpdatedAt json.RawMessage `json:"updated_at"` // ignored: a GET answer may be sent back
	}
	if err := decodeStrict(body, &req); err != nil {
		writeAPIError(w, badOffsets("Invalid state: %v", err))
		return
	}
	// null is absent, so the GET answer (which has both) can be edited down to one of them.
	hasJSON := len(req.StateJSON) > 0 && string(req.StateJSON) != "null"
	if (req.State != nil) == hasJSON {
		writeAPIError(w, badOffsets("Invalid state: give exactly one of state (base64) and state_json"))
		return
	}
	var data []byte
	if req.State != nil {
		var err error
		if data, err = base64.StdEncoding.DecodeString(*req.State); err != nil {
			writeAPIError(w, badOffsets("Invalid state: state: not standard base64: %v", err))
			return
		}
	} else {
		var err error
		if data, err = msgpackjson.FromJSON(req.StateJSON); err != nil {
			writeAPIError(w, badOffsets("Invalid state: state_json: %v", err))
			return
		}
	}
	unlock, ok := whileStopped(w, m)
	if !ok {
		return
	}
	defer unlock()
	if err := state.Replace(s.statePath, m.key, data); err != nil {
		writeAPIError(w, &apiError{status: http.StatusInternalServerError, Code: "error", Reason: err.Error()})
		return
	}
	s.log.Info("source state set", "connector", m.label(), "bytes", len(data))
	w.WriteHeader(http.StatusNoContent)
}

func (s *Supervisor) handleDeleteSourceOffsets(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	unlock, ok := whileStopped(w, m)
	if !ok {
		return
	}
	defer unlock()
	if err := state.Delete(s.statePath, m.key); err != nil {
		writeAPIError(w, &apiError{status: http.StatusInternalServerError, Code: "error", Reason: err.Error()})
		return
	}
	s.log.Info("source state deleted", "connector", m.label())
	w.WriteHeader(http.StatusNoContent)
}
