package runner_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// Plugin schema numbers as the probe declares them (postcard order).
const (
	pluginSchemaRaw        = 1
	pluginSchemaProto      = 3
	pluginSchemaFlatBuffer = 4
	pluginSchemaAvro       = 5
)

// fbItem is a FlatBuffers table {name: string (slot 0), qty: int32 (slot 1)},
// built and read with the FlatBuffers library as a plugin's generated code would.
type fbItem struct {
	Name string `json:"name"`
	Qty  int32  `json:"qty"`
}

func (it fbItem) encode() []byte {
	b := flatbuffers.NewBuilder(64)
	name := b.CreateString(it.Name)
	b.StartObject(2)
	b.PrependUOffsetTSlot(0, name, 0)
	b.PrependInt32Slot(1, it.Qty, 0)
	b.Finish(b.EndObject())
	return b.FinishedBytes()
}

func decodeFBItem(t *testing.T, buf []byte) fbItem {
	t.Helper()
	if err := codec.VerifyFlatBuffer(buf); err != nil {
		t.Fatalf("not a FlatBuffer: %v", err)
	}
	tab := flatbuffers.Table{Bytes: buf, Pos: flatbuffers.GetUOffsetT(buf)}
	var it fbItem
	if o := flatbuffers.UOffsetT(tab.Offset(4)); o != 0 {
		it.Name = string(tab.ByteVector(tab.Pos + o))
	}
	if o := flatbuffers.UOffsetT(tab.Offset(6)); o != 0 {
		it.Qty = tab.GetInt32(tab.Pos + o)
	}
	return it
}

// Readers turn what the probe sink received into JSON text, compared with
// the expected JSON as values of the runtime's JSON model.
func receivedJSON(_ *testing.T, payload []byte) string { return string(payload) }

func receivedHex(_ *testing.T, payload []byte) string {
	return strconv.Quote(hex.EncodeToString(payload))
}

func receivedFBItem(t *testing.T, payload []byte) string {
	t.Helper()
	text, err := json.Marshal(decodeFBItem(t, payload))
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// receivedFBDescription reads the flat_buffer sink decoder's JSON and the
// table inside its raw_data_base64.
func receivedFBDescription(t *testing.T, payload []byte) string {
	t.Helper()
	var desc struct {
		BufferSize   int    `json:"buffer_size"`
		HasRootTable bool   `json:"has_root_table"`
		RawData      string `json:"raw_data_base64"`
	}
	if err := json.Unmarshal(payload, &desc); err != nil {
		t.Fatalf("sink got %s, not the flat_buffer description: %v", payload, err)
	}
	buf, err := base64.StdEncoding.DecodeString(desc.RawData)
	if err != nil || len(buf) != desc.BufferSize || !desc.HasRootTable {
		t.Fatalf("description %s does not describe its own %d bytes (%v)", payload, len(buf), err)
	}
	return receivedFBItem(t, buf)
}

// flatBufferConvertTOML is a complete [transforms.flat_buffer_convert] table;
// schemaFile must exist (its content is not used, as upstream).
func flatBufferConvertTOML(source, target, schemaFile string) string {
	return `[transforms.flat_buffer_convert]
enabled = true
source_format = "` + source + `"
target_format = "` + target + `"
include_paths = []
preserve_unknown_fields = false
schema_path = "` + schemaFile + `"

[transforms.flat_buffer_convert.conversion_options]
verify_buffers = true
pretty_json = false
include_metadata = false
buffer_size_hint = 1024
strict_mode = false
`
}

// schemaFixtures are the schema files and parsed schemas the plugin-schema tests share.
type schemaFixtures struct {
	orderProto, avroFile, fbsFile string
	orderSchema                   *codec.ProtoSchema
	avroSchema                    *codec.AvroSchema
}

func newSchemaFixtures(t *testing.T) schemaFixtures {
	t.Helper()
	dir := t.TempDir()
	fx := schemaFixtures{orderProto: writeOrderProto(t), avroFile: filepath.Join(dir, "order.avsc"), fbsFile: filepath.Join(dir, "item.fbs")}
	for path, content := range map[string]string{fx.avroFile: avroOrderSchema, fx.fbsFile: "table Item { name: string; qty: int; }\nroot_type Item;\n"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if fx.orderSchema, err = codec.LoadProtoSchema(fx.orderProto, nil, "shop.Order"); err != nil {
		t.Fatal(err)
	}
	if fx.avroSchema, err = codec.ParseAvroSchema(avroOrderSchema); err != nil {
		t.Fatal(err)
	}
	return fx
}

// A source plugin that declares proto, flat_buffer or avro as the schema
// of what it produces (not json): the runner takes its bytes as the SDK's
// try_into_payload does, encodes them for the source stream's schema (the
// same or another one, with or without a convert transform), and the sink
// plugin on that stream receives what the source plugin meant, field by
// field, under the sink stream's schema label.
func TestSourcePluginSchemasReachTheSink(t *testing.T) {
	fx := newSchemaFixtures(t)
	orderProto, avroFile, fbsFile := fx.orderProto, fx.avroFile, fx.fbsFile
	orderSchema, avroSchema := fx.orderSchema, fx.avroSchema
	var err error

	const orderURL = "type.googleapis.com/shop.Order"
	orders := []string{
		`{"id":18446744073709551615,"customer":"Zoë","status":"PAID","lines":[{"sku":"a-1","qty":2}],"counters":{"retries":-3},"total":19.5}`,
		`{"id":7,"customer":"","status":"NEW","lines":[],"counters":{},"total":0}`,
	}
	orderBytes := make([][]byte, len(orders))
	orderAnys := make([][]byte, len(orders))
	for i, o := range orders {
		if orderBytes[i], err = orderSchema.EncodeJSON(mustJSON(t, o), true); err != nil {
			t.Fatal(err)
		}
		orderAnys[i] = codec.AppendProtoAny(nil, orderURL, orderBytes[i])
	}
	avroOrders := []string{
		`{"id":1,"customer":"Zoë","total":19.5,"status":"PAID","tags":["gift","express"],"note":"ring twice"}`,
		`{"id":-2,"customer":"","total":0.0,"status":"NEW","tags":[],"note":null}`,
	}
	avroDatums := make([][]byte, len(avroOrders))
	for i, o := range avroOrders {
		if avroDatums[i], err = avroSchema.EncodeJSON(mustJSON(t, o)); err != nil {
			t.Fatal(err)
		}
	}
	items := []fbItem{{"bolt", 12}, {"Zoë's nut", 0}, {"", -3}}
	itemBuffers := make([][]byte, len(items))
	itemJSON := make([]string, len(items))
	for i, it := range items {
		itemBuffers[i] = it.encode()
		text, _ := json.Marshal(it)
		itemJSON[i] = string(text)
	}
	notAnAny := []byte{0xff, 0xff, 0xff} // a truncated varint: try_into_payload falls back to Raw

	// want: what the sink plugin should hold, as JSON, after read.
	anyAsJSON := make([]string, len(orders))
	for i := range orders {
		anyAsJSON[i] = fmt.Sprintf(`{"type_url":%q,"value":%q}`, orderURL, base64.StdEncoding.EncodeToString(orderBytes[i]))
	}
	tests := []struct {
		name         string
		pluginSchema int
		payloads     [][]byte
		// source connector: stream schema, extra stream keys, transforms
		sourceSchema, sourceExtra, sourceTransforms string
		// sink connector: stream schema, extra stream keys, transforms
		sinkSchema, sinkExtra, sinkTransforms string
		sinkLabel                             int
		read                                  func(*testing.T, []byte) string
		want                                  []string
	}{
		{
			name: "avro plugin to avro stream (no source schema: the datum passes through)", pluginSchema: pluginSchemaAvro, payloads: avroDatums,
			sourceSchema: "avro",
			sinkSchema:   "avro", sinkExtra: `avro_schema_path = "` + avroFile + `"`, sinkLabel: pluginSchemaAvro,
			read: receivedJSON, want: avroOrders,
		},
		{
			name: "avro plugin to json stream by avro_convert", pluginSchema: pluginSchemaAvro, payloads: avroDatums,
			sourceSchema: "json", sourceTransforms: testkit.AvroConvertTOML("avro", "json", `schema_path = "`+avroFile+`"`),
			sinkSchema: "json", sinkLabel: 0,
			read: receivedJSON, want: avroOrders,
		},
		{
			name: "flat_buffer plugin to flat_buffer stream", pluginSchema: pluginSchemaFlatBuffer, payloads: itemBuffers,
			sourceSchema: "flat_buffer",
			sinkSchema:   "flat_buffer", sinkLabel: pluginSchemaFlatBuffer,
			read: receivedFBDescription, want: itemJSON,
		},
		{
			name: "flat_buffer plugin to raw stream by flat_buffer_convert", pluginSchema: pluginSchemaFlatBuffer, payloads: itemBuffers,
			sourceSchema: "raw", sourceTransforms: flatBufferConvertTOML("flat_buffer", "raw", fbsFile),
			sinkSchema: "raw", sinkLabel: pluginSchemaRaw,
			read: receivedFBItem, want: itemJSON,
		},
		{
			name: "proto plugin to json stream by proto_convert with the schema", pluginSchema: pluginSchemaProto, payloads: orderAnys,
			sourceSchema: "json", sourceTransforms: testkit.ProtoConvertTOML("proto", "json", `schema_path = "`+orderProto+`"`+"\nmessage_type = \"shop.Order\"\n"),
			sinkSchema: "json", sinkLabel: 0,
			read: receivedJSON, want: orders,
		},
		{
			// The plugin's Any becomes JSON {type_url, value}, which the proto
			// encoder carries in a StringValue, as upstream; the sink unwraps it.
			name: "proto plugin to proto stream", pluginSchema: pluginSchemaProto, payloads: orderAnys,
			sourceSchema: "proto",
			sinkSchema:   "proto", sinkTransforms: testkit.ProtoConvertTOML("proto", "json", ""), sinkLabel: pluginSchemaProto,
			read: receivedJSON, want: anyAsJSON,
		},
		{
			name: "proto plugin bytes that are not an Any pass as raw", pluginSchema: pluginSchemaProto, payloads: [][]byte{notAnAny},
			sourceSchema: "raw",
			sinkSchema:   "raw", sinkLabel: pluginSchemaRaw,
			read: receivedHex, want: []string{strconv.Quote(hex.EncodeToString(notAnAny))},
		},
	}

	// One broker for all cases; each case has its own topic.
	topics := map[string]uint32{}
	for i := range tests {
		topics[fmt.Sprintf("t%d", i)] = 1
	}
	srv := testkit.StartBroker(t, testkit.WithStream("plug", topics))
	lib := probeLibrary(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := fmt.Sprintf("t%d", i)
			env := baseEnv(srv, t.TempDir())
			source := testkit.StartRunner(t, withConfig(env, probeSourceTOML(t, lib, "plug", topic, tt.sourceSchema, tt.sourceExtra,
				tt.pluginSchema, tt.payloads, tt.sourceTransforms)))
			out := filepath.Join(t.TempDir(), "received")
			sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(lib, "plug", topic, tt.sinkSchema, tt.sinkExtra, out, tt.sinkTransforms)))

			got := waitReceived(t, out, len(tt.want), source, sink)
			if len(got) != len(tt.want) {
				t.Fatalf("sink received %d messages, want %d", len(got), len(tt.want))
			}
			for j, w := range tt.want {
				if got[j].Offset != uint64(j) || got[j].Schema != tt.sinkLabel || !sameJSON(t, []byte(tt.read(t, got[j].Payload)), w) {
					t.Errorf("sink message %d = offset %d schema %d %s; want offset %d schema %d %s",
						j, got[j].Offset, got[j].Schema, tt.read(t, got[j].Payload), j, tt.sinkLabel, w)
				}
			}
			if e := source.Stats(t).Errors + sink.Stats(t).Errors; e != 0 {
				t.Errorf("errors = %d, want 0:\n%s\n%s", e, source.Logs(), sink.Logs())
			}
		})
	}
}

// A produced message that its declared schema, a convert transform or the
// stream encoder cannot take rejects its whole batch (NACK): nothing reaches
// the topic, the message and the batch count as errors, and the warning
// names the message and the cause.
func TestSourcePluginSchemaMismatchRejectsTheBatch(t *testing.T) {
	fx := newSchemaFixtures(t)
	goodDatum, err := fx.avroSchema.EncodeJSON(mustJSON(t, `{"id":1,"customer":"a","total":1.0,"status":"NEW","tags":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	order, err := fx.orderSchema.EncodeJSON(mustJSON(t, `{"id":5,"customer":"c"}`), true)
	if err != nil {
		t.Fatal(err)
	}
	const orderURL = "type.googleapis.com/shop.Order"
	goodAny := codec.AppendProtoAny(nil, orderURL, order)
	goodItem := fbItem{"bolt", 1}.encode()
	withSchema := `schema_path = "` + fx.orderProto + `"` + "\nmessage_type = \"shop.Order\"\n"

	tests := []struct {
		name                     string
		pluginSchema             int
		payloads                 [][]byte
		streamSchema, transforms string
		wantCause                []string
	}{
		{"avro datum with trailing bytes, avro_convert to json", pluginSchemaAvro,
			[][]byte{goodDatum, append(append([]byte{}, goodDatum...), 0)},
			"json", testkit.AvroConvertTOML("avro", "json", `schema_path = "`+fx.avroFile+`"`),
			[]string{"first error: message 1: transform avro_convert", "trailing bytes after the datum"}},
		{"Any holding a truncated shop.Order, proto_convert to json", pluginSchemaProto,
			[][]byte{goodAny, codec.AppendProtoAny(nil, orderURL, []byte{0x0a, 0x09, 'x'})},
			"json", testkit.ProtoConvertTOML("proto", "json", withSchema),
			[]string{"first error: message 1: transform proto_convert", "not a shop.Order message"}},
		// counters is shop.Order's map<string, int64> (field 5): an entry whose key comes again as a
		// varint is what protobuf-go's decoder panics on (FuzzProtoSchemaDecode's finding).
		{"Any holding a shop.Order protobuf-go panics on, proto_convert to json", pluginSchemaProto,
			[][]byte{goodAny, codec.AppendProtoAny(nil, orderURL, []byte{0x2a, 0x05, 0x0a, 0x01, 'a', 0x08, 0x00})},
			"json", testkit.ProtoConvertTOML("proto", "json", withSchema),
			[]string{"first error: message 1: transform proto_convert", "map field counters"}},
		{"3-byte FlatBuffer, flat_buffer_convert to json", pluginSchemaFlatBuffer,
			[][]byte{goodItem, {1, 2, 3}},
			"json", flatBufferConvertTOML("flat_buffer", "json", fx.fbsFile),
			[]string{"first error: message 1: transform flat_buffer_convert", "3 bytes, a FlatBuffer has at least 4"}},
		{"Any (JSON after decoding) to a raw stream", pluginSchemaProto,
			[][]byte{goodAny},
			"raw", "",
			[]string{"first error: message 0: stream", "encode as raw", "the raw encoder takes raw, got json"}},
	}
	topics := map[string]uint32{}
	for i := range tests {
		topics[fmt.Sprintf("t%d", i)] = 1
	}
	srv := testkit.StartBroker(t, testkit.WithStream("plug", topics))
	lib := probeLibrary(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := fmt.Sprintf("t%d", i)
			source := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), probeSourceTOML(t, lib, "plug", topic, tt.streamSchema, "",
				tt.pluginSchema, tt.payloads, tt.transforms)))
			source.WaitUntil(t, waitLong, "the rejected batch", func() bool { return strings.Contains(source.Logs(), "Rejected source batch") })
			source.WaitUntil(t, waitLong, "the endpoint", func() bool { _, err := source.Health(); return err == nil })
			if n := len(readTopic(t, srv, "plug", topic)); n != 0 {
				t.Errorf("topic holds %d messages, want 0 from a rejected batch", n)
			}
			if e := source.Stats(t).Errors; e != 2 {
				t.Errorf("errors = %d, want 2 (the message and its batch)", e)
			}
			for _, want := range tt.wantCause {
				if !strings.Contains(source.Logs(), want) {
					t.Errorf("logs do not mention %q:\n%s", want, source.Logs())
				}
			}
		})
	}
}
