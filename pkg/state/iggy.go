package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
)

// ErrBadRecord is returned for a message in a state topic that is not a state record.
var ErrBadRecord = errors.New("not a source state record")

// stateRecordV1 starts every state message: the format version, then the state bytes (an Iggy
// message cannot be empty, so "no state" is the version byte alone).
const stateRecordV1 = 1

// StateTopicSpec is the topic a source's state (and its lease) lives in: one partition, and a
// size limit so it cannot grow without bound. 2 GiB is two segments of the largest size an Iggy
// server allows, so size retention (which deletes the oldest sealed segments) always keeps the
// segment holding the newest state. No expiry: a source idle for long must not lose its state.
var StateTopicSpec = iggyclient.TopicSpec{Partitions: 1, MaxTopicSize: 2 << 30}

// TopicName is the state topic of source connector key in the state stream.
func TopicName(key string) string { return "source_" + key }

// IggyBackend keeps each source's state as messages in a topic of its own (TopicName) in
// Stream: a save sends the new state and returns once the server confirmed it, an open reads the
// newest message. When the topic holds nothing yet, a state file of the key in Dir (the file
// backend's) is taken and written to the topic: a source moves from "file" to "iggy" without
// starting over.
type IggyBackend struct {
	Client iggyclient.Client
	Stream string
	Dir    string       // where a file-backend state may be migrated from; "" for none
	Log    *slog.Logger // nil: slog.Default()
}

// Open implements Backend. It creates the stream and topic when missing.
func (b IggyBackend) Open(ctx context.Context, key string) (Saver, []byte, error) {
	if err := checkKey(key); err != nil {
		return nil, nil, err
	}
	topic := TopicName(key)
	if err := b.Client.EnsureTopicWith(ctx, b.Stream, topic, StateTopicSpec); err != nil {
		return nil, nil, fmt.Errorf("open source state in stream %q topic %q: %w", b.Stream, topic, err)
	}
	s := &iggySaver{client: b.Client, stream: b.Stream, topic: topic}
	data, _, found, err := b.newest(ctx, topic)
	if err != nil || found {
		s.latest = data
		return s, data, err
	}
	data, _, err = b.fileState(key)
	if err != nil || data == nil {
		return s, nil, err
	}
	if err := s.Save(ctx, data); err != nil {
		return nil, nil, fmt.Errorf("migrate source state %q to stream %q topic %q: %w", Path(b.Dir, key), b.Stream, topic, err)
	}
	b.logger().Info("source state migrated from its file to Iggy", "file", Path(b.Dir, key), "stream", b.Stream, "topic", topic, "state_bytes", len(data))
	return s, data, nil
}

// Load implements Backend: the newest state in the topic, else the state file a first Open
// would migrate.
func (b IggyBackend) Load(ctx context.Context, key string) ([]byte, error) {
	data, _, err := b.Current(ctx, key)
	return data, err
}

// Current is Load with the time the state was saved: the server's timestamp of the newest
// record, or the modification time of the state file a first Open would migrate (the offsets
// API shows it). The time is zero when there is no state.
func (b IggyBackend) Current(ctx context.Context, key string) ([]byte, time.Time, error) {
	if err := checkKey(key); err != nil {
		return nil, time.Time{}, err
	}
	data, at, found, err := b.newest(ctx, TopicName(key))
	if errors.Is(err, iggyclient.ErrNotFound) {
		found, err = false, nil // no state topic yet
	}
	if err != nil || found {
		return data, at, err
	}
	return b.fileState(key)
}

// newest reads the last record of the state topic and the time the server stored it; found is
// false for an empty topic, and a "no state" record gives no time.
func (b IggyBackend) newest(ctx context.Context, topic string) (data []byte, at time.Time, found bool, err error) {
	batch, err := b.Client.PollPartition(ctx, iggyclient.PartitionPoll{Stream: b.Stream, Topic: topic, From: iggyclient.PollLast, Count: 1})
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("load source state from stream %q topic %q: %w", b.Stream, topic, err)
	}
	if len(batch.Messages) == 0 {
		return nil, time.Time{}, false, nil
	}
	m := batch.Messages[len(batch.Messages)-1]
	if len(m.Payload) == 0 || m.Payload[0] != stateRecordV1 {
		return nil, time.Time{}, false, fmt.Errorf("load source state from stream %q topic %q offset %d: %w", b.Stream, topic, m.Offset, ErrBadRecord)
	}
	if data = nonEmpty(append([]byte(nil), m.Payload[1:]...)); data != nil {
		at = time.UnixMicro(int64(m.Timestamp)) // Iggy stamps messages in µs since the epoch
	}
	return data, at, true, nil
}

// fileState is the file backend's state of key in Dir (Current) and its file's modification
// time; a missing Dir holds none.
func (b IggyBackend) fileState(key string) ([]byte, time.Time, error) {
	if b.Dir == "" {
		return nil, time.Time{}, nil
	}
	if _, err := os.Stat(b.Dir); errors.Is(err, fs.ErrNotExist) {
		return nil, time.Time{}, nil
	}
	return Current(b.Dir, key)
}

func (b IggyBackend) logger() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.Default()
}

// iggySaver sends each state to the source's state topic.
type iggySaver struct {
	client        iggyclient.Client
	stream, topic string
	msg           [1]iggyclient.OutMessage
	buf           []byte
	latest        []byte // the newest state the server confirmed (or Open found)
}

// Save implements Saver: it returns once the server has confirmed the message. A send the
// client retries after a lost reply may store the same state twice, which reads back the same.
func (s *iggySaver) Save(ctx context.Context, data []byte) error {
	s.buf = append(append(s.buf[:0], stateRecordV1), data...)
	s.msg[0].Payload = s.buf
	if err := s.client.Send(ctx, s.stream, s.topic, iggyclient.Partitioning{Kind: iggyclient.PartitionByID}, s.msg[:]); err != nil {
		return fmt.Errorf("save source state to stream %q topic %q: %w", s.stream, s.topic, err)
	}
	s.latest = append(s.latest[:0], data...)
	return nil
}

// Latest implements Saver.
func (s *iggySaver) Latest() []byte { return nonEmpty(append([]byte(nil), s.latest...)) }

// Close implements Saver; every save is already on the server.
func (s *iggySaver) Close() error { return nil }
