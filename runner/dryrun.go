package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/dryrun"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// DryRunMain is `iggy-connector-runner --dry-run [SAMPLES]`: DryRun over the connector of
// environ (read as a start reads it) and the samples of the file args names (standard input when
// there is none or it is "-"). Each outcome is one tap.Event JSON line on stdout, exit status
// runnerproc.ExitOK; a bad config or sample gives one dryrun.Problem JSON line each instead, exit
// runnerproc.ExitConfig. Nothing else is written to stdout.
func DryRunMain(ctx context.Context, environ, args []string, stdin io.Reader, stdout io.Writer) int {
	defer logging.RouteStdlib(slog.New(slog.DiscardHandler))()
	problem := func(p *dryrun.Problem) int {
		writeProblems(stdout, []*dryrun.Problem{p})
		return runnerproc.ExitConfig
	}
	samples := stdin
	switch {
	case len(args) > 1:
		return problem(&dryrun.Problem{Input: dryrun.InputSamples, Message: fmt.Sprintf("%s takes one samples file, got %d arguments", runnerproc.ArgDryRun, len(args))})
	case len(args) == 1 && args[0] != "-":
		f, err := os.Open(args[0])
		if err != nil {
			return problem(&dryrun.Problem{Input: dryrun.InputSamples, Message: err.Error()})
		}
		defer f.Close()
		samples = f
	}
	events, problems := DryRun(ctx, environ, samples)
	if len(problems) > 0 {
		writeProblems(stdout, problems)
		return runnerproc.ExitConfig
	}
	w := bufio.NewWriter(stdout)
	for i := range events {
		line, err := tap.Marshal(&events[i])
		if err != nil { // an Event always marshals: its payload is valid JSON
			return problem(&dryrun.Problem{Input: dryrun.InputSamples, Line: i + 1, Message: "render the output: " + err.Error()})
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return problem(&dryrun.Problem{Input: dryrun.InputSamples, Message: "write the output: " + err.Error()})
	}
	return runnerproc.ExitOK
}

func writeProblems(w io.Writer, problems []*dryrun.Problem) {
	for _, p := range problems {
		line, _ := json.Marshal(p)
		fmt.Fprintf(w, "%s\n", line)
	}
}

// DryRun runs the samples through the connector's own decode → transforms → encode path, as its
// runner would with the same config: a sink's sinkBatch.prepare, one sample at a time (a batch of
// one takes the same per-message paths as a polled batch), a source's sourceBatch.prepare. No Iggy,
// no plugin: the plugin path is not even checked (`--check` does that). It returns one event per
// sample, in order: tap.PointDelivered (sink) with what the plugin would receive;
// tap.PointSent (source), one per stream entry, with what would go to Iggy; dryrun.PointFiltered
// when a transform dropped it; dryrun.PointFailed when a stage failed on it, Error naming the stage
// as a dead-letter record would ("decode: ...", "transform: ...", "encode: ..."). Filtered and
// failed events show the sample as given. Bad config or samples give problems and no events.
func DryRun(ctx context.Context, environ []string, samples io.Reader) ([]tap.Event, []*dryrun.Problem) {
	loadCtx, cancel := context.WithTimeout(ctx, time.Minute)
	s, err := LoadSettings(loadCtx, environ)
	cancel()
	var (
		problems []*dryrun.Problem
		spec     *connectorSpec
	)
	if err == nil {
		spec, err = buildSpec(s.Connector)
	}
	if err != nil {
		p := problemOf(err, "") // no field: the config as a whole
		problems = append(problems, &dryrun.Problem{Input: dryrun.InputConfig, Field: p.Field, Message: p.Message})
	}
	list, bad := dryrun.ReadSamples(samples)
	problems = append(problems, bad...)
	if len(problems) == 0 && len(list) == 0 {
		problems = append(problems, &dryrun.Problem{Input: dryrun.InputSamples, Message: "no samples: give one JSON object per line, each with at least a \"payload\""})
	}
	if len(problems) > 0 {
		return nil, problems
	}
	secrets := s.masker()
	if spec.Kind == kindSink {
		return drySink(spec, list, secrets)
	}
	return drySource(spec, list, secrets), nil
}

// drySink runs each sample through the sinkBatch of the topic entry it names (the first entry
// when it names none).
func drySink(spec *connectorSpec, samples []dryrun.Sample, secrets tap.Masker) ([]tap.Event, []*dryrun.Problem) {
	batches := make([]*sinkBatch, len(spec.SinkTopics))
	var (
		events   []tap.Event
		problems []*dryrun.Problem
		next     uint64 // the offset of a sample that names none: one past the previous sample's
	)
	for i := range samples {
		sm := &samples[i]
		ti, p := sinkTopicOf(spec.SinkTopics, sm)
		if p != nil {
			problems = append(problems, p)
			continue
		}
		t := &spec.SinkTopics[ti]
		payload, err := sm.Payload(t.Schema)
		if err != nil {
			problems = append(problems, asProblem(err, sm.Line))
			continue
		}
		offset := next
		if sm.Offset != nil {
			offset = *sm.Offset
		}
		next = offset + 1
		in := iggyclient.InMessage{Offset: offset, Timestamp: sm.Timestamp, OriginTimestamp: sm.Timestamp, Payload: payload}
		if sm.ID != nil {
			in.ID = idToBytes(*sm.ID)
		}
		if sm.Headers != nil {
			in.Headers = appendHeadersToIggy(nil, *sm.Headers)
		}
		if batches[ti] == nil {
			batches[ti] = newSinkBatch(t.Decoder, spec.Transforms, 1)
		}
		b := batches[ti]
		var failStage string
		var failErr error
		_, filtered := b.prepare([]iggyclient.InMessage{in}, func(stage string, _ uint64, err error) { failStage, failErr = stage, err })
		switch {
		case len(b.records) == 1:
			smp := deliveredSample(t, sm.Partition, &b.records[0], b.schemas[0])
			events = append(events, smp.Event(secrets))
		case filtered == 1:
			events = append(events, inputEvent(dryrun.PointFiltered, t.Stream, t.Topic, offset, sm, sm.PayloadSchema(t.Schema), payload, secrets))
		default:
			e := inputEvent(dryrun.PointFailed, t.Stream, t.Topic, offset, sm, sm.PayloadSchema(t.Schema), payload, secrets)
			e.Error = failStage + ": " + errText(failErr)
			events = append(events, e)
		}
	}
	return events, problems
}

// sinkTopicOf is the index of the topic entry a sample names by its stream and topic (either may
// be left out), or a problem naming the topics the sink reads.
func sinkTopicOf(topics []sinkTopic, sm *dryrun.Sample) (int, *dryrun.Problem) {
	for i, t := range topics {
		if (sm.Stream == "" || sm.Stream == t.Stream) && (sm.Topic == "" || sm.Topic == t.Topic) {
			return i, nil
		}
	}
	read := make([]string, len(topics))
	for i, t := range topics {
		read[i] = t.Stream + "/" + t.Topic
	}
	field := "topic"
	if sm.Topic == "" {
		field = "stream"
	}
	return 0, &dryrun.Problem{Input: dryrun.InputSamples, Line: sm.Line, Field: field,
		Message: fmt.Sprintf("stream %q topic %q is not read by this sink (it reads %s); leave stream and topic out for the first", sm.Stream, sm.Topic, strings.Join(read, ", "))}
}

// drySource runs each sample, as one produced batch of one message, through the source's
// sourceBatch: its schema is the sample's (the plugin declares it), json when not given (raw for
// a base64 payload).
func drySource(spec *connectorSpec, samples []dryrun.Sample, secrets tap.Masker) []tap.Event {
	b := newSourceBatch(spec.Transforms, spec.SourceStreams)
	var events []tap.Event
	for i := range samples {
		sm := &samples[i]
		def := postcard.SchemaJSON
		if sm.IsBase64() {
			def = postcard.SchemaRaw
		}
		schema := sm.PayloadSchema(def)
		payload, _ := sm.Payload(schema) // only text can fail, and ParseSample checked a sample's own schema
		pm := postcard.ProducedMessages{Schema: schema, Messages: []postcard.ProducedMessage{{ID: sm.ID, Headers: sm.Headers, Payload: payload}}}
		if sm.Timestamp != 0 {
			ts := sm.Timestamp
			pm.Messages[0].Timestamp, pm.Messages[0].OriginTimestamp = &ts, &ts
		}
		res := b.prepare(&pm, func(string, error) {})
		switch {
		case res.decodeErrs+res.errs == 0 && res.filtered == 0:
			for si := range b.outs {
				smp := sentSample(&b.streams[si], &b.outs[si][0])
				events = append(events, smp.Event(secrets))
			}
		case res.decodeErrs+res.errs == 0:
			events = append(events, inputEvent(dryrun.PointFiltered, sm.Stream, sm.Topic, 0, sm, schema, payload, secrets))
		default:
			// Named as the dead-letter path names it (source_isolate.go).
			stage, entry, err := b.firstFailure(schema, &pm.Messages[0])
			if err == nil {
				stage, err = "prepare", res.firstErr
			}
			stream, topic := sm.Stream, sm.Topic
			if entry >= 0 {
				stream, topic = b.streams[entry].Stream, b.streams[entry].Topic
			}
			e := inputEvent(dryrun.PointFailed, stream, topic, 0, sm, schema, payload, secrets)
			e.Error = stage + ": " + errText(err)
			events = append(events, e)
		}
	}
	return events
}

// inputEvent shows a sample as given, at a point of a dry run's own (filtered, failed).
func inputEvent(point, stream, topic string, offset uint64, sm *dryrun.Sample, schema postcard.Schema, payload []byte, secrets tap.Masker) tap.Event {
	e := tap.Event{Point: point, Stream: stream, Topic: topic, Partition: sm.Partition, Offset: offset, ID: "0", Timestamp: sm.Timestamp}
	if sm.Offset != nil {
		e.Offset = *sm.Offset
	}
	if sm.ID != nil {
		e.ID = tap.ID(*sm.ID)
	}
	var hs postcard.HeaderMap
	if sm.Headers != nil {
		hs = *sm.Headers
	}
	e.SetHeaders(hs)
	e.SetPayload(schema, payload, secrets)
	return e
}

// asProblem is err as a sample problem of line.
func asProblem(err error, line int) *dryrun.Problem {
	var p *dryrun.Problem
	if errors.As(err, &p) {
		return p
	}
	return &dryrun.Problem{Input: dryrun.InputSamples, Line: line, Message: err.Error()}
}

func errText(err error) string {
	if err == nil {
		return "failed"
	}
	return err.Error()
}
