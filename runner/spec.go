package runner

import (
	"errors"
	"fmt"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

const (
	kindSink   = "sink"
	kindSource = "source"
)

// defaultBatchLength replaces a sink's batch_length of 0, which would poll nothing.
const defaultBatchLength = config.DefaultBatchLength

// offsetCommit says when a sink stores its consumer-group offset (docs/architecture.md, decision 1).
type offsetCommit int

const (
	commitAfterConsuming offsetCommit = iota // default: only after the plugin's consume returned 0
	commitAfterPolling                       // upstream: the server commits while serving the poll
)

// connectorSpec is the connector as the pumps use it: validated, with codecs and transforms built.
type connectorSpec struct {
	Kind       string // kindSink or kindSource
	Key, Name  string
	Path       string
	Enabled    bool
	ConfigJSON []byte // plugin_config as JSON text, "null" when absent (docs/architecture.md, decision 12)
	Verbose    bool
	Benchmark  bool
	Transforms []transform.Transform

	SinkTopics    []sinkTopic    // one per (stream entry, topic), in config order
	SourceStreams []sourceStream // every entry receives every batch (docs/architecture.md, decision 4)
}

type sinkTopic struct {
	Stream, Topic string
	Schema        postcard.Schema
	Decoder       codec.Decoder
	BatchLength   uint32
	PollInterval  time.Duration
	IdlePollMax   time.Duration // the idle back-off's bound (sink_idle.go); at or below PollInterval: fixed
	IdleAfter     time.Duration // how long without messages before the back-off starts (sink_idle.go)
	Group         string
	Commit        offsetCommit
}

type sourceStream struct {
	Stream, Topic string
	Encoder       codec.Encoder
	BatchLength   uint32
	Linger        time.Duration
}

// ErrUnsupported marks config that names a schema or transform this build does not implement yet.
var ErrUnsupported = errors.New("not supported yet")

// buildSpec validates c and builds its codecs and transforms. Every error names the connector and
// the offending key.
func buildSpec(c config.Connector) (*connectorSpec, error) {
	kind := string(c.Kind)
	if kind != kindSink && kind != kindSource {
		return nil, fmt.Errorf("connector %q: type %q: must be sink or source", c.Key, kind)
	}
	if err := config.ValidKey(c.Key); err != nil {
		return nil, fmt.Errorf("connector key %q: %w", c.Key, err)
	}
	where := func(format string, args ...any) error {
		return fmt.Errorf("%s %q: %s", kind, c.Key, fmt.Sprintf(format, args...))
	}
	if c.Path == "" {
		return nil, where("path: required")
	}
	s := &connectorSpec{
		Kind: kind, Key: c.Key, Name: c.Name, Path: c.Path, Enabled: c.Enabled,
		Verbose: c.Verbose, Benchmark: c.Benchmark,
	}
	if s.Name == "" {
		s.Name = c.Key
	}
	if err := c.CheckStart(); err != nil {
		return nil, err
	}
	s.ConfigJSON = c.PluginConfigJSON()

	ts, err := transform.Build(c.Transforms, c.TransformOrder)
	if err != nil {
		err = fmt.Errorf("%s %q: Failed to load transforms: %w", kind, c.Key, err)
		if errors.Is(err, transform.ErrNotSupported) {
			err = fmt.Errorf("%w (%w)", err, ErrUnsupported)
		}
		return nil, err
	}
	s.Transforms = ts

	for i, e := range c.Streams {
		at := fmt.Sprintf("streams[%d]", i)
		if e.Stream == "" {
			return nil, where("%s.stream: required", at)
		}
		schema, err := codec.ParseSchema(e.Schema)
		if err != nil {
			return nil, where("%s.schema: %v", at, err)
		}
		opts := codec.Options{}
		if e.AvroSchemaJSON != "" {
			opts["avro_schema_json"] = e.AvroSchemaJSON
		}
		if e.AvroSchemaPath != "" {
			opts["avro_schema_path"] = e.AvroSchemaPath
		}
		batch := e.BatchLength
		if batch == 0 && kind == kindSink {
			batch = defaultBatchLength
		}
		if kind == kindSink {
			dec, err := codec.NewDecoder(schema, opts)
			if err != nil {
				return nil, unsupportedOr(where("%s.schema %q: %v", at, e.Schema, err), err)
			}
			commit, err := parseOffsetCommit(e.OffsetCommit)
			if err != nil {
				return nil, where("%s.offset_commit: %v", at, err)
			}
			group := e.ConsumerGroup
			if group == "" {
				group = config.DefaultConsumerGroup(c.Key)
			}
			if len(e.Topics) == 0 {
				return nil, where("%s.topics: at least one topic is required", at)
			}
			for _, topic := range e.Topics {
				if topic == "" {
					return nil, where("%s.topics: empty topic name", at)
				}
				s.SinkTopics = append(s.SinkTopics, sinkTopic{
					Stream: e.Stream, Topic: topic, Schema: schema, Decoder: dec,
					BatchLength: batch, PollInterval: e.PollInterval, IdlePollMax: e.IdlePollMax, IdleAfter: e.IdleAfter, Group: group, Commit: commit,
				})
			}
			continue
		}
		enc, err := codec.NewEncoder(schema, opts)
		if err != nil {
			return nil, unsupportedOr(where("%s.schema %q: %v", at, e.Schema, err), err)
		}
		if e.Topic == "" {
			return nil, where("%s.topic: required", at)
		}
		s.SourceStreams = append(s.SourceStreams, sourceStream{
			Stream: e.Stream, Topic: e.Topic, Encoder: enc, BatchLength: batch, Linger: e.LingerTime,
		})
	}
	if err := checkDeadLetterTopic(c.ErrorHandling, s); err != nil {
		return nil, where("%v", err)
	}
	if kind == kindSink && len(s.SinkTopics) == 0 {
		return nil, where("streams: no stream configured")
	}
	if kind == kindSource && len(s.SourceStreams) == 0 {
		return nil, where("No streams configured for source")
	}
	return s, nil
}

func parseOffsetCommit(v string) (offsetCommit, error) {
	switch v {
	case "", "after_consuming":
		return commitAfterConsuming, nil
	case "after_polling":
		return commitAfterPolling, nil
	}
	return 0, fmt.Errorf("%q: must be after_consuming or after_polling", v)
}

// unsupportedOr marks err with ErrUnsupported when cause is codec.ErrUnsupportedSchema.
func unsupportedOr(err, cause error) error {
	if errors.Is(cause, codec.ErrUnsupportedSchema) {
		return fmt.Errorf("%w (%w)", err, ErrUnsupported)
	}
	return err
}

// checkDeadLetterTopic refuses a dead-letter topic the connector itself reads or writes: a sink's
// failed records would come back to it, a source's would mix with the good ones.
func checkDeadLetterTopic(eh *config.ErrorHandling, s *connectorSpec) error {
	if !eh.HasDeadLetterTopic() {
		return nil
	}
	same := func(stream, topic string) bool { return stream == eh.DeadLetterStream && topic == eh.DeadLetterTopic }
	for _, t := range s.SinkTopics {
		if same(t.Stream, t.Topic) {
			return fmt.Errorf("error_handling.dead_letter_topic: %s/%s is a topic this sink reads; its failed records would come back to it", t.Stream, t.Topic)
		}
	}
	for _, t := range s.SourceStreams {
		if same(t.Stream, t.Topic) {
			return fmt.Errorf("error_handling.dead_letter_topic: %s/%s is a topic this source writes; failed records would mix with the good ones", t.Stream, t.Topic)
		}
	}
	return nil
}
