package runner_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

const orderProtoFile = `syntax = "proto3";
package shop;
message Order {
  enum Status { NEW = 0; PAID = 1; }
  message Line { string sku = 1; uint32 qty = 2; }
  uint64 id = 1;
  string customer = 2;
  Status status = 3;
  repeated Line lines = 4;
  map<string, int64> counters = 5;
  double total = 6;
}
`

// writeOrderProto writes the schema into a fresh directory and returns its path.
func writeOrderProto(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "order.proto")
	if err := os.WriteFile(path, []byte(orderProtoFile), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// JSON from a source plugin becomes a binary shop.Order (proto_convert with
// the .proto file), travels in a google.protobuf.Any on a proto stream, and
// reaches the sink plugin as the same JSON, field by field.
func TestProtoRoundTripThroughRunners(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"proto": 1}))
	env := baseEnv(srv, t.TempDir())
	lib := probeLibrary(t)
	withSchema := `schema_path = "` + writeOrderProto(t) + `"` + "\nmessage_type = \"shop.Order\"\n"
	sent := []string{
		`{"id":18446744073709551615,"customer":"Zoë","status":"PAID","lines":[{"sku":"a-1","qty":2},{"sku":"b","qty":1}],"counters":{"retries":-3},"total":19.5}`,
		`{"id":7,"customer":"","status":"NEW","lines":[],"counters":{},"total":0}`,
		`{"id":8,"status":1}`, // enum by number; absent fields come back as defaults
	}
	want := []string{sent[0], sent[1], `{"id":8,"customer":"","status":"PAID","lines":[],"counters":{},"total":0}`}

	source := testkit.StartRunner(t, withConfig(env, probeSourceTOML(t, lib, "fmt", "proto", "proto", "", 0,
		jsonLines(sent...), testkit.ProtoConvertTOML("json", "proto", withSchema))))
	out := filepath.Join(t.TempDir(), "received")
	sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(lib, "fmt", "proto", "proto", "", out,
		testkit.ProtoConvertTOML("proto", "json", withSchema))))

	got := waitReceived(t, out, len(want), source, sink)
	for i, w := range want {
		if got[i].Schema != 3 || got[i].Offset != uint64(i) || !sameJSON(t, got[i].Payload, w) {
			t.Errorf("sink message %d = offset %d schema %d %s; want offset %d schema 3 (proto) %s",
				i, got[i].Offset, got[i].Schema, got[i].Payload, i, w)
		}
	}
	// In the topic: Any{BytesValue{an encoded shop.Order}}, readable by the protobuf library.
	topic := readTopic(t, srv, "fmt", "proto")
	var a anypb.Any
	var wrapped wrapperspb.BytesValue
	if err := proto.Unmarshal(topic[0].Payload, &a); err != nil || a.UnmarshalTo(&wrapped) != nil {
		t.Fatalf("topic message 0 is not an Any holding a BytesValue: %v (type %q)", err, a.TypeUrl)
	}
	schema, err := codec.LoadProtoSchema(writeOrderProto(t), nil, "shop.Order")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := schema.DecodeJSON(wrapped.Value, true); err != nil || !sameJSONValue(t, v, want[0]) {
		t.Errorf("topic message 0 holds %v, %v; want %s", v, err, want[0])
	}
	if e := source.Stats(t).Errors + sink.Stats(t).Errors; e != 0 {
		t.Errorf("errors = %d, want 0", e)
	}
}

// Without a schema, the proto stream carries JSON in an Any holding a real
// StringValue, and the sink plugin gets upstream's {"type_url", "value"}.
func TestProtoAnyWrapperWithoutSchema(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"proto": 1}))
	env := baseEnv(srv, t.TempDir())
	lib := probeLibrary(t)
	sent := `{"a":1,"b":["x"]}`
	source := testkit.StartRunner(t, withConfig(env, probeSourceTOML(t, lib, "fmt", "proto", "proto", "", 0, jsonLines(sent), "")))
	out := filepath.Join(t.TempDir(), "received")
	sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(lib, "fmt", "proto", "proto", "", out, "")))

	got := waitReceived(t, out, 1, source, sink)
	var anyJSON struct {
		TypeURL string `json:"type_url"`
		Value   string `json:"value"`
	}
	if err := json.Unmarshal(got[0].Payload, &anyJSON); err != nil || anyJSON.TypeURL != codec.ProtoStringValueURL {
		t.Fatalf("sink got %s (%v), want {type_url: %s, value}", got[0].Payload, err, codec.ProtoStringValueURL)
	}
	value, err := base64.StdEncoding.DecodeString(anyJSON.Value)
	var text wrapperspb.StringValue
	if err != nil || proto.Unmarshal(value, &text) != nil || text.Value != sent {
		t.Errorf("Any value %q is not StringValue(%s): %v", anyJSON.Value, sent, err)
	}
}

// Messages that are not an Any, or whose content does not match the
// schema, are dropped with an error naming the offset and counted.
func TestProtoSinkCountsAndSkipsMismatchedMessages(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"proto": 1}))
	env := append(baseEnv(srv, t.TempDir()), "IGGY_CONNECTOR_LOG_LEVEL=debug")
	path := writeOrderProto(t)
	schema, err := codec.LoadProtoSchema(path, nil, "shop.Order")
	if err != nil {
		t.Fatal(err)
	}
	order, err := schema.EncodeJSON(mustJSON(t, `{"id":5,"customer":"c"}`), true)
	if err != nil {
		t.Fatal(err)
	}
	wrap := func(message []byte) []byte {
		return codec.AppendProtoAny(nil, codec.ProtoBytesValueURL, codec.AppendProtoWrapper(nil, message))
	}
	sendRaw(t, srv, "fmt", "proto", [][]byte{
		wrap(order),
		[]byte(`{"id":5}`),            // offset 1: not an Any
		wrap([]byte{0x0a, 0x09, 'x'}), // offset 2: a truncated Order
		wrap(order),
	})
	out := filepath.Join(t.TempDir(), "received")
	sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(probeLibrary(t), "fmt", "proto", "proto", "", out,
		testkit.ProtoConvertTOML("proto", "json", `schema_path = "`+path+`"`+"\nmessage_type = \"shop.Order\"\n"))))
	expectMiddleTwoSkipped(t, sink, out, "offset=1", "not a google.protobuf.Any", "offset=2", "not a shop.Order message")
}

// A .proto file that does not exist or does not compile stops the runner
// at start with a message naming the file and the problem.
func TestProtoSchemaFileProblemsStopTheRunner(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"proto": 1}))
	env := baseEnv(srv, t.TempDir())
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.proto")
	if err := os.WriteFile(broken, []byte("syntax = \"proto3\";\nmessage Order { uint64 id = 1 }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.proto")
	lib := probeLibrary(t)
	tests := []struct {
		name, config string
		mention      []string
	}{
		{"sink, missing file", probeSinkTOML(lib, "fmt", "proto", "proto", "", filepath.Join(dir, "out"),
			testkit.ProtoConvertTOML("proto", "json", `schema_path = "`+missing+`"`)),
			[]string{"probe_sink", "proto_convert", missing, "no such file or directory"}},
		{"source, file that does not compile", probeSourceTOML(t, lib, "fmt", "proto", "proto", "", 0, nil,
			testkit.ProtoConvertTOML("json", "proto", `schema_path = "`+broken+`"`)),
			[]string{"probe_source", "proto_convert", broken, "broken.proto:2:"}},
		{"unknown message type", probeSinkTOML(lib, "fmt", "proto", "proto", "", filepath.Join(dir, "out"),
			testkit.ProtoConvertTOML("proto", "json", `schema_path = "`+writeOrderProto(t)+`"`+"\nmessage_type = \"shop.Basket\"")),
			[]string{"probe_sink", "message type", "shop.Basket", "not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testkit.StartRunner(t, withConfig(env, tt.config))
			code, err := r.Wait(waitLong)
			if err != nil || code == 0 {
				t.Fatalf("runner exit %d, %v; want a non-zero exit", code, err)
			}
			for _, m := range tt.mention {
				if !strings.Contains(r.Logs(), m) {
					t.Errorf("output does not mention %q:\n%s", m, r.Logs())
				}
			}
		})
	}
}

// sameJSON compares a JSON document with the expected text as values of the
// runtime's JSON model (number kinds and key order included).
func sameJSON(t *testing.T, got []byte, want string) bool {
	t.Helper()
	v, err := codec.ParseJSON(got)
	if err != nil {
		return false
	}
	return sameJSONValue(t, v, want)
}

func sameJSONValue(t *testing.T, v any, want string) bool {
	t.Helper()
	a, err := codec.MarshalJSON(v)
	if err != nil {
		return false
	}
	b, err := codec.MarshalJSON(mustJSON(t, want))
	return err == nil && string(a) == string(b)
}

// A payload on which protobuf-go's decoder panics (FuzzProtoSchemaDecode's finding: a
// map<string, int64> entry whose key comes again with another wire type), wrapped in an Any
// between good messages, costs that message only: the runner keeps running, the good messages
// reach the plugin, each bad one is counted as an error and logged with its offset, and the
// batch's offset is stored, so a restarted runner does not meet the bad message again.
func TestProtoSinkSurvivesAPayloadThatPanicsTheProtobufDecoder(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"proto": 1}))
	env := append(baseEnv(srv, t.TempDir()), "IGGY_CONNECTOR_LOG_LEVEL=debug") // every drop logged, not one a second
	schemaPath, err := filepath.Abs("../pkg/codec/testdata/proto/fuzz.proto")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := codec.LoadProtoSchema(schemaPath, nil, "fuzz.Node")
	if err != nil {
		t.Fatal(err)
	}
	good, err := schema.EncodeJSON(mustJSON(t, `{"id":5,"name":"n","counters":{"a":-1}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	// The fuzzer's input, as kept in pkg/codec/testdata/fuzz/FuzzProtoSchemaDecode/af65fc96e78106af.
	panicking := []byte("000\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x0100100000000100000000%00000010000000000002\x010b\x0e\n\x01000\b\x80\xf2\xd6\xca02\x010")
	if _, err := schema.DecodeJSON(panicking, false); err == nil {
		t.Fatal("the fuzzer's input decodes; it no longer tests anything")
	}
	wrap := func(message []byte) []byte {
		return codec.AppendProtoAny(nil, codec.ProtoBytesValueURL, codec.AppendProtoWrapper(nil, message))
	}
	sendRaw(t, srv, "fmt", "proto", [][]byte{wrap(good), wrap(panicking), wrap(good), wrap(panicking)})

	out := filepath.Join(t.TempDir(), "received")
	sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(probeLibrary(t), "fmt", "proto", "proto", "", out,
		testkit.ProtoConvertTOML("proto", "json", `schema_path = "`+schemaPath+`"`+"\nmessage_type = \"fuzz.Node\"\n"))))
	got := waitReceived(t, out, 2, sink)
	sink.WaitUntil(t, waitLong, "two errors", func() bool { return sink.Stats(t).Errors == 2 })
	if len(got) != 2 || got[0].Offset != 0 || got[1].Offset != 2 || !sameJSON(t, got[0].Payload, `{"id":5,"delta":0,"small":0,"stamp":0,
		"score":0,"ratio":0,"ok":false,"name":"n","blob":"","kind":"UNKNOWN","children":[],"counters":{"a":-1}}`) {
		t.Errorf("the plugin received %+v; want the good messages at offsets 0 and 2", got)
	}
	for _, offset := range []string{"1", "3"} {
		if !slices.ContainsFunc(strings.Split(sink.Logs(), "\n"), func(l string) bool {
			return strings.Contains(l, "sink message dropped") && strings.Contains(l, "connector_key=probe_sink") &&
				strings.Contains(l, "offset="+offset) && strings.Contains(l, "map field counters")
		}) {
			t.Errorf("no drop line naming the connector, offset %s and the map field:\n%s", offset, sink.Logs())
		}
	}
	cli := testkit.LoggedInClient(t, srv)
	stream, _ := iggcon.NewIdentifier("fmt")
	topic, _ := iggcon.NewIdentifier("proto")
	group, _ := iggcon.NewIdentifier(config.DefaultConsumerGroup("probe_sink"))
	partition := uint32(0)
	sink.WaitUntil(t, waitLong, "offset 3 stored for the group", func() bool {
		off, err := cli.GetConsumerOffset(iggcon.NewGroupConsumer(group), stream, topic, &partition)
		return err == nil && off != nil && off.StoredOffset == 3
	})
	if h, err := sink.Health(); err != nil || h.ConnectorStatus != "running" {
		t.Errorf("after the bad messages: health %+v, %v; want the connector running", h, err)
	}
}
