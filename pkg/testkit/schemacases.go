package testkit

// Messages of every stream schema, with and without transforms, for the tests that compare a
// running connector with a dry run of its config (the preview, the tap's delivered and sent
// points, what a plugin or Iggy receives).

import (
	"encoding/binary"
	"fmt"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// AvroOrderSchema is the record schema of the avro cases' orders.
const AvroOrderSchema = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"customer","type":"string"},{"name":"note","type":["null","string"],"default":null}]}`

// caseOrders are the orders every schema encodes: HTML characters, a non-ASCII name, a null.
var caseOrders = []string{`{"id":1,"customer":"Zoë","note":"<ring> & twice"}`, `{"id":-2,"customer":"","note":null}`}

// SinkCase is a sink reading one stream schema, with the transforms of its connector file, and
// payloads in that schema as they sit in Iggy (the last ones often undecodable, on purpose).
type SinkCase struct {
	Name        string // the schema, "+transforms" when it has some
	Schema      string // the [[streams]] schema
	StreamExtra string // more keys of the [[streams]] entry
	Transforms  string // TOML tables appended to the connector file
	Payloads    [][]byte
}

// ConnectorTOML is the connector file of a sink named key (and name) reading the case's schema
// from stream/topic into the plugin at path, pluginConfig the body of its [plugin_config].
func (c SinkCase) ConnectorTOML(key, name, path, stream, topic, pluginConfig string) string {
	return fmt.Sprintf(`type = "sink"
key = %q
enabled = true
version = 0
name = %q
path = %q

[[streams]]
stream = %q
topics = [%q]
schema = %q
poll_interval = "5ms"
%s

[plugin_config]
%s
%s`, key, name, path, stream, topic, c.Schema, c.StreamExtra, pluginConfig, c.Transforms)
}

// SinkCases are the sink cases over every stream schema (json, raw, text, proto, flat_buffer,
// avro), the json and proto ones also with transforms.
func SinkCases(tb testing.TB) []SinkCase {
	tb.Helper()
	secret := []byte(`{"z":"<b>&</b>","token":"t0k3n-of-any-length","nested":{"password":"p","keep":[1, 2]}}`)
	cases := []SinkCase{
		{Schema: "json", Transforms: `
[transforms.delete_fields]
enabled = true
fields = ["note"]
[transforms.add_fields]
enabled = true
fields = [{ key = "seen", value = { static = true } }]
[transforms.update_fields]
enabled = true
fields = [{ key = "customer", value = { static = "***" }, condition = "key_exists" }]
`, Payloads: [][]byte{[]byte(caseOrders[0]), []byte(`{"id": 3,  "spaced": [1, 2]}`), secret, []byte(`{"cut":`), []byte(`[1,"x"]`)}},
		{Schema: "json", Payloads: [][]byte{[]byte(caseOrders[0]), []byte(`{"id": 3,  "spaced": [1, 2]}`), secret, []byte(`"s"`)}}, // the pass-through path
		{Schema: "raw", Payloads: [][]byte{{0, 1, 2, 0xff}, []byte(caseOrders[1])}},
		{Schema: "text", Payloads: [][]byte{[]byte("a line"), {0xff, 0xfe}, []byte(`{"json":"as text"}`), []byte("<p>a & b</p>")}},
		{Schema: "proto", Transforms: ProtoConvertTOML("proto", "json", ""), Payloads: append(EncodeOrders(tb, postcard.SchemaProto, nil), []byte{0xff, 0xff})},
		{Schema: "proto", Payloads: EncodeOrders(tb, postcard.SchemaProto, nil)},
		{Schema: "flat_buffer", Payloads: append(EncodeOrders(tb, postcard.SchemaFlatBuffer, nil), []byte{1, 2})},
		{Schema: "avro", StreamExtra: "avro_schema_json = '" + AvroOrderSchema + "'",
			Payloads: append(EncodeOrders(tb, postcard.SchemaAvro, codec.Options{"avro_schema_json": AvroOrderSchema}), []byte{2})},
	}
	for i := range cases {
		cases[i].Name = cases[i].Schema
		if cases[i].Transforms != "" {
			cases[i].Name += "+transforms"
		}
	}
	return cases
}

// EncodeOrders encodes the cases' orders in schema (with the encoder's options).
func EncodeOrders(tb testing.TB, schema postcard.Schema, opts codec.Options) [][]byte {
	tb.Helper()
	enc, err := codec.NewEncoder(schema, opts)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, d := range caseOrders {
		v, err := codec.ParseJSON([]byte(d))
		if err != nil {
			tb.Fatal(err)
		}
		b, err := enc.Encode(codec.JSONPayload(v))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// CaseMessages are payloads as Iggy messages, each with its own u128 id (high bits set) and user
// headers of two kinds: a string (with HTML characters) and a u32.
func CaseMessages(tb testing.TB, payloads [][]byte) []iggcon.IggyMessage {
	tb.Helper()
	msgs := make([]iggcon.IggyMessage, len(payloads))
	for i, p := range payloads {
		hs := []iggcon.HeaderEntry{
			{Key: iggcon.HeaderKey{Kind: iggcon.String, Value: []byte("trace")}, Value: iggcon.HeaderValue{Kind: iggcon.String, Value: fmt.Appendf(nil, "<t%d>&", i)}},
			{Key: iggcon.HeaderKey{Kind: iggcon.String, Value: []byte("n")}, Value: iggcon.HeaderValue{Kind: iggcon.Uint32, Value: binary.LittleEndian.AppendUint32(nil, uint32(i))}},
		}
		var id iggcon.MessageID
		id[0], id[15] = byte(i+1), 0x80
		var err error
		if msgs[i], err = iggcon.NewIggyMessage(p, iggcon.WithID(id), iggcon.WithUserHeaders(hs)); err != nil {
			tb.Fatal(err)
		}
	}
	return msgs
}

// SourceCase is a source whose plugin produces payloads declared with schema Plugin, sending them
// to a stream entry of schema Stream.
type SourceCase struct {
	Plugin                          postcard.Schema
	Stream, StreamExtra, Transforms string
	Payloads                        [][]byte
}

// Name is "<plugin schema>_to_<stream schema>".
func (c SourceCase) Name() string { return c.Plugin.String() + "_to_" + c.Stream }

// SourceCases are the source cases: a plugin producing json, text or raw, sent as every stream
// schema (json with a transform).
func SourceCases() []SourceCase {
	const avroSchema = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"customer","type":"string"}]}`
	orders := [][]byte{[]byte(`{"id":1,"customer":"Zoë <z@x> & co"}`), []byte(`{"id":2,"customer":""}`)}
	return []SourceCase{
		{postcard.SchemaJSON, "json", "", "[transforms.add_fields]\nenabled = true\nfields = [{ key = \"seen\", value = { static = 1 } }]\n", orders},
		{postcard.SchemaJSON, "text", "", "", orders},
		{postcard.SchemaText, "text", "", "", [][]byte{[]byte("one line"), []byte("two <&>")}},
		{postcard.SchemaRaw, "raw", "", "", [][]byte{{0, 1, 2}, {0xff}}},
		{postcard.SchemaJSON, "proto", "", "", orders},
		{postcard.SchemaJSON, "flat_buffer", "", "", orders},
		{postcard.SchemaJSON, "avro", "avro_schema_json = '" + avroSchema + "'", "", orders},
	}
}
