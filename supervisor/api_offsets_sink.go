package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
)

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
	s.writeSinkOffsets(w, r, cfg)
}

// writeSinkOffsets answers GET /sinks/{key}/offsets for the sink configured by cfg: every
// partition of its topics with its group's stored offset and lag, read from Iggy.
func (s *Supervisor) writeSinkOffsets(w http.ResponseWriter, r *http.Request, cfg config.Connector) {
	admin, ok := connectIggy(w, r, s, iggyclient.DialAdmin)
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
	admin, release, ok := connectIggyWhileStopped(w, r, s, m, iggyclient.DialAdmin)
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
	admin, release, ok := connectIggyWhileStopped(w, r, s, m, iggyclient.DialAdmin)
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
