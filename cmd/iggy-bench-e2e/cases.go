package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
)

const (
	batchSize = 1000
	stream    = "bench"
	sinkTopic = "data"
	// sinkTopic09 holds the same messages sent over 0.9, for whatever reads over 0.9. The dev
	// broker keeps a batch in the format it was sent in and converts it for the other protocol on
	// every poll (a checksum and a header per message), work a real server of either version
	// never does; so each protocol reads messages sent over its own.
	sinkTopic09 = "data-09"
	// textLen makes a record exactly 100 bytes, the random source's shape with payload_size 14.
	textLen = 14
)

// recordAvroSchema is the Avro schema of the records both directions carry.
const recordAvroSchema = `{"type":"record","name":"Record","namespace":"bench","fields":[` +
	`{"name":"id","type":"string"},{"name":"title","type":"string"},` +
	`{"name":"name","type":"string"},{"name":"text","type":"string"}]}`

// addFieldsTOML is one add_fields transform adding a static field.
const addFieldsTOML = `[transforms.add_fields]
enabled = true
[[transforms.add_fields.fields]]
key = "origin"
value.static = "bench"
`

type caseKind int

const (
	sinkCase caseKind = iota
	sourceCase
)

// baseline is what a case's runner is compared with (A in A B A B).
type baseline int

const (
	bareSDK08    baseline = iota // a bare loop of the official Go SDK v0.8.0 (the runner speaks 0.8)
	bareClient09                 // a bare loop of our own 0.9 client, pkg/iggyclient/v09 (the runner speaks 0.9)
	runner08                     // the same runner speaking 0.8 (B speaks 0.9)
	runnerNoTap                  // the same runner with no tap open (B has the case's tap client; tap.go)
)

// benchCase is one row of the table.
type benchCase struct {
	name, about  string
	kind         caseKind
	schema       string // the stream's schema: json, raw, proto, avro
	plugin       string // C plugin name under plugins/
	pluginConfig string // [plugin_config] body (sources get theirs from the message count)
	transforms   string // transform tables, or ""
	baseline     baseline
	tap          tapClient // runnerNoTap cases: the tap client B's runner has open
}

// protocol is the Iggy protocol the measured runner (B) speaks.
func (c benchCase) protocol() string {
	if c.baseline == bareSDK08 || c.baseline == runnerNoTap {
		return "0.8"
	}
	return "0.9"
}

func allCases() []benchCase {
	var cases []benchCase
	sink := func(name, about, schema, plugin, pluginConfig, transforms string) {
		cases = append(cases, benchCase{name: name, about: about, kind: sinkCase, schema: schema,
			plugin: plugin, pluginConfig: pluginConfig, transforms: transforms})
	}
	source := func(name, about, schema string) {
		cases = append(cases, benchCase{name: name, about: about, kind: sourceCase, schema: schema, plugin: "random_source"})
	}
	sink("sink-null-json", "json stream into the null sink, no transforms", "json", "null_sink", "", "")
	sink("sink-stdout-json", "json stream into the stdout sink, print_payload = false", "json", "stdout_sink", "print_payload = false", "")
	sink("sink-add-fields-json", "json stream, one add_fields, into the null sink", "json", "null_sink", "", addFieldsTOML)
	sink("sink-null-raw", "raw stream (the same bytes) into the null sink", "raw", "null_sink", "", "")
	source("source-random-json", "random source into a json stream, state on disk", "json")
	sink("sink-null-proto", "proto stream (Any of a StringValue) into the null sink", "proto", "null_sink", "", "")
	sink("sink-add-fields-proto", "proto stream, one add_fields, into the null sink", "proto", "null_sink", "", addFieldsTOML)
	source("source-random-proto", "random source into a proto stream, state on disk", "proto")
	sink("sink-null-avro", "avro stream into the null sink", "avro", "null_sink", "", "")
	sink("sink-add-fields-avro", "avro stream, one add_fields, into the null sink", "avro", "null_sink", "", addFieldsTOML)
	source("source-random-avro", "random source into an avro stream, state on disk", "avro")
	// Iggy 0.9: the runner against a bare loop of our own 0.9 client, and against itself on 0.8.
	over := func(b baseline, suffix, about string) {
		last := len(cases)
		sink("sink-null-json"+suffix, "json stream into the null sink, "+about, "json", "null_sink", "", "")
		sink("sink-add-fields-json"+suffix, "json stream, one add_fields, into the null sink, "+about, "json", "null_sink", "", addFieldsTOML)
		source("source-random-json"+suffix, "random source into a json stream, "+about, "json")
		for i := last; i < len(cases); i++ {
			cases[i].baseline = b
		}
	}
	over(bareClient09, "-0.9", "over 0.9 against a bare 0.9 client loop")
	over(runner08, "-0.9v0.8", "runner over 0.9 against runner over 0.8")
	// The live tap: the same runner without a tap (A) and with one open (B), both started paused
	// and measured from their resume, so the tap is open before the first batch.
	for _, tc := range []tapClient{tapFast, tapEvery, tapStalled} {
		sink("sink-null-json-"+tc.name, "json stream into the null sink, "+tc.about+" (A: no tap)", "json", "null_sink", "", "")
		cases[len(cases)-1].baseline, cases[len(cases)-1].tap = runnerNoTap, tc
	}
	return cases
}

// caseEnv runs one case's measurements on its broker.
type caseEnv struct {
	opts   options
	dir    string
	broker *broker
	c      benchCase
	batch  []iggcon.IggyMessage // the records as the stream's schema stores them
	bin    string               // the runner binaries measured: -bin, or -before's
	prefix string               // names this side's runs apart ("" or "old-")
}

func (e *caseEnv) prepare() error {
	if _, err := e.broker.cli.CreateStream(stream); err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	payloads, err := encodedRecords(e.c.schema, batchSize)
	if err != nil {
		return err
	}
	for _, p := range payloads {
		m, err := iggcon.NewIggyMessage(p)
		if err != nil {
			return err
		}
		e.batch = append(e.batch, m)
	}
	if e.c.kind != sinkCase {
		return nil
	}
	if err := e.broker.createTopic(stream, sinkTopic); err != nil {
		return err
	}
	if err := sendAll(e.broker.cli, sinkTopic, e.batch, e.opts.sinkMessages); err != nil {
		return err
	}
	if e.c.protocol() != "0.9" {
		return nil
	}
	if err := e.broker.createTopic(stream, sinkTopic09); err != nil {
		return err
	}
	return sendAll09(e.broker.addr, sinkTopic09, e.batch, e.opts.sinkMessages)
}

// sinkTopicOver is the topic a sink reading over protocol drains.
func sinkTopicOver(protocol string) string {
	if protocol == "0.9" {
		return sinkTopic09
	}
	return sinkTopic
}

func (e *caseEnv) close() {}

func (e *caseEnv) measureBare(round int) (sample, error) {
	switch e.c.baseline {
	case bareClient09:
		return e.measureBare09(round)
	case runner08:
		return e.measureRunnerOver("0.8", fmt.Sprintf("%sa%d", e.prefix, round))
	case runnerNoTap:
		return e.measureRunnerTapped(e.c.protocol(), fmt.Sprintf("%sa%d", e.prefix, round), tapClient{})
	}
	cli, err := e.broker.client()
	if err != nil {
		return sample{}, err
	}
	defer cli.Close()
	cpu0 := selfCPU()
	var elapsed time.Duration
	n := e.opts.sinkMessages
	if e.c.kind == sourceCase {
		n = e.opts.sourceMessages
		topic := fmt.Sprintf("bare-%d", round)
		if err := e.broker.createTopic(stream, topic); err != nil {
			return sample{}, err
		}
		cpu0 = selfCPU()
		start := time.Now()
		if err := sendAll(cli, topic, e.batch, n); err != nil {
			return sample{}, err
		}
		elapsed = time.Since(start)
		if err := e.broker.deleteTopic(stream, topic); err != nil {
			return sample{}, err
		}
	} else if elapsed, err = drainGroup(cli, fmt.Sprintf("bare-%d", round), n); err != nil {
		return sample{}, err
	}
	return sample{rate: float64(n) / elapsed.Seconds(), cpuPerMsg: (selfCPU() - cpu0) / time.Duration(n)}, nil
}

// drainGroup is the bare sink: what the runner does on the wire, without decoding or a plugin. A
// consumer group polls the next batch and stores its last offset after each batch.
func drainGroup(cli iggcon.Client, group string, n int) (time.Duration, error) {
	sid, tid, gid := ident(stream), ident(sinkTopic), ident(group)
	if _, err := cli.CreateConsumerGroup(sid, tid, group); err != nil {
		return 0, fmt.Errorf("create group %s: %w", group, err)
	}
	if err := cli.JoinConsumerGroup(sid, tid, gid); err != nil {
		return 0, fmt.Errorf("join group %s: %w", group, err)
	}
	consumer := iggcon.NewGroupConsumer(gid)
	start := time.Now()
	for read := 0; read < n; {
		polled, err := cli.PollMessages(sid, tid, consumer, iggcon.NextPollingStrategy(), batchSize, false, nil)
		if err != nil {
			return 0, fmt.Errorf("poll: %w", err)
		}
		if len(polled.Messages) == 0 {
			continue
		}
		read += len(polled.Messages)
		partition := polled.PartitionId
		last := polled.Messages[len(polled.Messages)-1].Header.Offset
		if err := cli.StoreConsumerOffset(consumer, sid, tid, last, &partition); err != nil {
			return 0, fmt.Errorf("store offset: %w", err)
		}
	}
	return time.Since(start), nil
}

// sendAll sends n messages to the topic's partition 0, cycling through batch.
func sendAll(cli iggcon.Client, topic string, batch []iggcon.IggyMessage, n int) error {
	sid, tid := ident(stream), ident(topic)
	for sent := 0; sent < n; sent += len(batch) {
		if err := cli.SendMessages(sid, tid, iggcon.PartitionId(0), batch[:min(len(batch), n-sent)]); err != nil {
			return fmt.Errorf("send to %s: %w", topic, err)
		}
	}
	return nil
}

// measureRunner starts a runner for the round and measures it from status running.
func (e *caseEnv) measureRunner(round int) (sample, error) {
	if e.c.baseline == runnerNoTap {
		return e.measureRunnerTapped(e.c.protocol(), e.prefix+strconv.Itoa(round), e.c.tap)
	}
	return e.measureRunnerOver(e.c.protocol(), e.prefix+strconv.Itoa(round))
}

// measureRunnerOver measures one runner speaking protocol; run names its directory, topic and group.
func (e *caseEnv) measureRunnerOver(protocol, run string) (sample, error) {
	return e.measureRunnerTapped(protocol, run, tapClient{})
}

// measureRunnerTapped measures one runner speaking protocol; run names its directory, topic and
// group. A tap case's runners (tc set, or the case's A side) start paused and are measured from
// their resume, B's once its tap client has the stream open.
func (e *caseEnv) measureRunnerTapped(protocol, run string, tc tapClient) (sample, error) {
	paused := e.c.baseline == runnerNoTap
	dir := filepath.Join(e.dir, "runner-"+run)
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o755); err != nil {
		return sample{}, err
	}
	topic, group := sinkTopicOver(protocol), "runner-"+run
	n := e.opts.sinkMessages
	if e.c.kind == sourceCase {
		topic, n = "runner-"+run, e.opts.sourceMessages
		if err := e.broker.createTopic(stream, topic); err != nil {
			return sample{}, err
		}
	}
	env := []string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + e.broker.addr,
		"IGGY_CONNECTORS_IGGY_USERNAME=" + username,
		"IGGY_CONNECTORS_IGGY_PASSWORD=" + password,
		"IGGY_CONNECTORS_IGGY_PROTOCOL=" + protocol,
		"IGGY_CONNECTORS_STATE_PATH=" + filepath.Join(dir, "state"),
		"IGGY_CONNECTOR_CONFIG=" + e.connectorTOML(topic, group, n),
	}
	env = append(env, e.opts.runnerEnv...)
	if paused {
		env = append(env, "IGGY_CONNECTOR_START_PAUSED=true")
	}
	if e.opts.profileDir != "" {
		env = append(env, fmt.Sprintf("IGGY_CONNECTOR_CPU_PROFILE=%s/%s-%s.pprof", e.opts.profileDir, e.c.name, run))
	}
	r, err := startRunner(e.bin, dir, env)
	if err != nil {
		return sample{}, err
	}
	want := "running"
	if paused {
		want = "paused"
	}
	if err := r.waitStatus(want); err != nil {
		_ = r.stop()
		return sample{}, err
	}
	if paused {
		client, err := tc.open(r)
		if err != nil {
			_ = r.stop()
			return sample{}, err
		}
		defer client.close()
		if err := r.resume(); err != nil {
			_ = r.stop()
			return sample{}, err
		}
	}
	start, cpu0 := time.Now(), r.cpu()
	var done func() (bool, error)
	if e.c.kind == sinkCase {
		done = func() (bool, error) {
			off, ok, err := e.broker.storedOffset(stream, topic, group)
			return ok && off >= uint64(n-1), err
		}
	} else {
		done = func() (bool, error) {
			count, err := e.broker.messageCount(stream, topic)
			return count >= uint64(n), err
		}
	}
	if err := r.waitUntil(fmt.Sprintf("%d messages", n), done); err != nil {
		_ = r.stop()
		return sample{}, err
	}
	elapsed := time.Since(start)
	res := sample{rate: float64(n) / elapsed.Seconds(), cpuPerMsg: (r.cpu() - cpu0) / time.Duration(n), peakRSS: r.peakRSS()}
	if err := r.stop(); err != nil {
		return sample{}, err
	}
	if e.c.kind == sourceCase {
		if err := e.broker.deleteTopic(stream, topic); err != nil {
			return sample{}, err
		}
	}
	return res, nil
}

// connectorTOML is the case's connector file.
func (e *caseEnv) connectorTOML(topic, group string, n int) string {
	c := e.c
	var b strings.Builder
	fmt.Fprintf(&b, "type = %q\nkey = \"bench\"\nenabled = true\nversion = 1\nname = \"bench %s\"\npath = %q\n\n",
		map[caseKind]string{sinkCase: "sink", sourceCase: "source"}[c.kind], c.name,
		filepath.Join(e.bin, "plugins", "libiggy_connector_"+c.plugin+".so"))
	fmt.Fprintf(&b, "[[streams]]\nstream = %q\nschema = %q\nbatch_length = %d\n", stream, c.schema, batchSize)
	if c.kind == sinkCase {
		fmt.Fprintf(&b, "topics = [%q]\npoll_interval = \"0\"\nconsumer_group = %q\n", topic, group)
	} else {
		fmt.Fprintf(&b, "topic = %q\nlinger_time = \"0\"\n", topic)
	}
	if c.schema == "avro" {
		fmt.Fprintf(&b, "avro_schema_json = '''%s'''\n", recordAvroSchema)
	}
	b.WriteString("\n" + c.transforms + "\n[plugin_config]\n")
	if c.kind == sourceCase {
		fmt.Fprintf(&b, "interval = \"0ms\"\nmax_count = %d\nmessages_range = [%d, %d]\npayload_size = %d\n", n, batchSize, batchSize+1, textLen)
	} else {
		b.WriteString(c.pluginConfig + "\n")
	}
	return b.String()
}

// encodedRecords returns n distinct 100-byte JSON records shaped like the random source's,
// stored as the schema stores them: json and raw as they are, proto as a google.protobuf.Any of a
// StringValue (what a proto stream's encoder writes), avro as one datum of recordAvroSchema.
func encodedRecords(schema string, n int) ([][]byte, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	encode := func(b []byte) ([]byte, error) { return b, nil } // json and raw
	if schema == "proto" || schema == "avro" {
		// What the stream's encoder writes for a JSON payload.
		parsed, err := codec.ParseSchema(schema)
		if err != nil {
			return nil, err
		}
		enc, err := codec.NewEncoder(parsed, codec.Options{"avro_schema_json": recordAvroSchema})
		if err != nil {
			return nil, err
		}
		encode = func(b []byte) ([]byte, error) {
			v, err := codec.ParseJSON(b)
			if err != nil {
				return nil, err
			}
			return enc.Encode(codec.JSONPayload(v))
		}
	} else if schema != "json" && schema != "raw" {
		return nil, fmt.Errorf("no records for schema %q", schema)
	}
	out := make([][]byte, 0, n)
	for range n {
		var id [16]byte
		for i := range id {
			id[i] = byte(rng.UintN(256))
		}
		id[6], id[8] = id[6]&0x0f|0x40, id[8]&0x3f|0x80
		text := make([]byte, textLen)
		for i := range text {
			text[i] = alnum[rng.IntN(len(alnum))]
		}
		rec := fmt.Sprintf(`{"id":"%x-%x-%x-%x-%x","title":"Hello","name":"World","text":"%s"}`,
			id[0:4], id[4:6], id[6:8], id[8:10], id[10:16], text)
		b, err := encode([]byte(rec))
		if err != nil {
			return nil, fmt.Errorf("encode a record as %s: %w", schema, err)
		}
		out = append(out, b)
	}
	return out, nil
}
