package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// Header names of a dead-lettered record (docs/architecture.md, decision 14), all string headers.
const (
	dlqHeaderPrefix    = "iggy_dlq_"
	dlqHeaderKey       = "iggy_dlq_connector_key"
	dlqHeaderStage     = "iggy_dlq_stage"
	dlqHeaderError     = "iggy_dlq_error"
	dlqHeaderStream    = "iggy_dlq_stream"
	dlqHeaderTopic     = "iggy_dlq_topic"
	dlqHeaderPartition = "iggy_dlq_partition"
	dlqHeaderOffset    = "iggy_dlq_offset"
	dlqHeaderTimestamp = "iggy_dlq_timestamp"
	// dlqHeaderEmpty marks a record whose payload was empty: Iggy refuses empty payloads, so it
	// is dead-lettered with the one byte emptyPayloadStandIn instead of failing the connector.
	dlqHeaderEmpty = "iggy_dlq_payload_empty"
)

// emptyPayloadStandIn is the payload of a dead-lettered record whose own payload was empty.
var emptyPayloadStandIn = []byte{0}

// maxHeaderValue is the longest header value Iggy carries; a longer error text is cut.
const maxHeaderValue = 255

// deadLetter is one failed record on its way to the dead-letter topic.
type deadLetter struct {
	stage         string // a metrics.DeadLetter* stage
	err           error
	stream, topic string // where the record came from (sink) or was going (source)
	// partition and offset are set for a sink record (hasOffset); a source record has none yet.
	hasOffset bool
	partition uint32
	offset    uint64
	payload   []byte                   // as polled (sink) or as the plugin produced it (source)
	headers   []iggyclient.HeaderEntry // the record's user headers
	// What the tap's dead_lettered point shows besides: the payload's format, id and timestamp.
	schema    postcard.Schema
	id        postcard.Uint128
	timestamp uint64
}

// deadLetterWriter counts failed records and sends them to the dead-letter topic, if any.
type deadLetterWriter struct {
	r      *Runner
	client iggyclient.Client
	policy errorPolicy
}

func newDeadLetterWriter(r *Runner, client iggyclient.Client) *deadLetterWriter {
	return &deadLetterWriter{r: r, client: client, policy: r.errors}
}

// ensureTopic creates the dead-letter stream and topic when missing (one partition), so a
// connector with tolerance = "all" can always put its failed records somewhere.
func (d *deadLetterWriter) ensureTopic(ctx context.Context) error {
	if !d.policy.hasDeadLetterTopic() {
		return nil
	}
	if err := d.client.EnsureTopic(ctx, d.policy.dlqStream, d.policy.dlqTopic, 1); err != nil {
		return fmt.Errorf("%s %q: dead-letter stream %q topic %q: %w", d.r.spec.Kind, d.r.spec.Key, d.policy.dlqStream, d.policy.dlqTopic, err)
	}
	return nil
}

// send counts recs and writes them to the dead-letter topic in one request, retried with the
// policy's backoff. It fails only when the records cannot be written: the caller must then fail
// the connector rather than lose them. Without a dead-letter topic they are only counted (the
// caller logged them).
func (d *deadLetterWriter) send(ctx context.Context, recs []deadLetter) error {
	if len(recs) == 0 {
		return nil
	}
	if d.r.tap.Tapped(tap.MaskDeadLettered) {
		d.tapDeadLettered(recs)
	}
	if d.policy.hasDeadLetterTopic() {
		now := strconv.FormatInt(time.Now().UnixMicro(), 10)
		msgs := make([]iggyclient.OutMessage, len(recs))
		for i := range recs {
			msgs[i] = d.message(&recs[i], now)
		}
		if err := d.write(ctx, msgs); err != nil {
			return fmt.Errorf("%s %q: dead-lettering %d records to stream %q topic %q failed; nothing is skipped: %w",
				d.r.spec.Kind, d.r.spec.Key, len(recs), d.policy.dlqStream, d.policy.dlqTopic, err)
		}
	}
	for i := range recs {
		d.r.metrics.c.AddDeadLettered(recs[i].stage, 1)
	}
	return nil
}

func (d *deadLetterWriter) write(ctx context.Context, msgs []iggyclient.OutMessage) error {
	bo := d.policy.backoff()
	for attempt := 0; ; attempt++ {
		err := d.client.Send(ctx, d.policy.dlqStream, d.policy.dlqTopic, iggyclient.Partitioning{Kind: iggyclient.PartitionBalanced}, msgs)
		if err == nil {
			return nil
		}
		if errors.Is(err, iggyclient.ErrUnauthorized) || errors.Is(err, iggyclient.ErrInvalidMessage) || attempt >= d.policy.sendRetries {
			return err
		}
		d.r.log.Warn("dead-letter send failed; retrying", "stream", d.policy.dlqStream, "topic", d.policy.dlqTopic, "attempt", attempt+1, "error", err)
		if bo.Wait(ctx) != nil {
			return err
		}
	}
}

// message is the dead-lettered record: its payload and user headers (former iggy_dlq_* headers
// replaced) plus the iggy_dlq_* headers naming where and why it failed.
func (d *deadLetterWriter) message(rec *deadLetter, now string) iggyclient.OutMessage {
	hs := make([]iggyclient.HeaderEntry, 0, len(rec.headers)+8)
	for _, h := range rec.headers {
		if !strings.HasPrefix(string(h.Key), dlqHeaderPrefix) {
			hs = append(hs, h)
		}
	}
	add := func(key, value string) {
		hs = append(hs, iggyclient.HeaderEntry{KeyKind: iggywire.KindString, Key: []byte(key),
			Kind: iggywire.KindString, Value: []byte(cutText(value, maxHeaderValue))})
	}
	add(dlqHeaderKey, d.r.spec.Key)
	add(dlqHeaderStage, rec.stage)
	errText := "unknown error"
	if rec.err != nil && rec.err.Error() != "" {
		errText = rec.err.Error()
	}
	add(dlqHeaderError, errText)
	add(dlqHeaderStream, rec.stream)
	add(dlqHeaderTopic, rec.topic)
	if rec.hasOffset {
		add(dlqHeaderPartition, strconv.FormatUint(uint64(rec.partition), 10))
		add(dlqHeaderOffset, strconv.FormatUint(rec.offset, 10))
	}
	add(dlqHeaderTimestamp, now)
	payload := rec.payload
	if len(payload) == 0 {
		add(dlqHeaderEmpty, "true")
		payload = emptyPayloadStandIn
	}
	return iggyclient.OutMessage{Headers: hs, Payload: payload}
}

// cutText shortens s to at most n bytes, dropping a character the cut would split.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
