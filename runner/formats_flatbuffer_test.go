package runner_test

import (
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// flatBufferStrings reads a buffer whose root is a vector of strings, with
// the FlatBuffers library's offset rules.
func flatBufferStrings(t *testing.T, buf []byte) []string {
	t.Helper()
	if err := codec.VerifyFlatBuffer(buf); err != nil {
		t.Fatal(err)
	}
	tab := flatbuffers.Table{Bytes: buf}
	vec := flatbuffers.GetUOffsetT(buf)
	n := int(flatbuffers.GetUOffsetT(buf[vec:]))
	out := make([]string, n)
	for i := range n {
		out[i] = string(tab.ByteVector(vec + flatbuffers.UOffsetT(4*(i+1))))
	}
	return out
}

// JSON objects from a source plugin go to Iggy as FlatBuffers (a root
// vector of key/value strings) and reach the sink plugin as the flat_buffer
// decoder's description, whose raw_data_base64 holds every field.
func TestFlatBufferRoundTripThroughRunners(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"fb": 1}))
	env := baseEnv(srv, t.TempDir())
	lib := probeLibrary(t)
	sent := []string{
		`{"id":1,"customer":"Zoë","tags":["gift"],"paid":true,"note":null}`,
		`{}`,
	}
	wantFields := [][]string{
		{"id", "1", "customer", "Zoë", "tags", `["gift"]`, "paid", "true", "note", "null"},
		{},
	}
	source := testkit.StartRunner(t, withConfig(env, probeSourceTOML(t, lib, "fmt", "fb", "flat_buffer", "", 0, jsonLines(sent...), "")))
	out := filepath.Join(t.TempDir(), "received")
	sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(lib, "fmt", "fb", "flat_buffer", "", out, "")))

	got := waitReceived(t, out, len(sent), source, sink)
	topic := readTopic(t, srv, "fmt", "fb")
	for i, want := range wantFields {
		var desc struct {
			BufferSize   int    `json:"buffer_size"`
			HasRootTable bool   `json:"has_root_table"`
			RawData      string `json:"raw_data_base64"`
		}
		if got[i].Schema != 4 || json.Unmarshal(got[i].Payload, &desc) != nil {
			t.Fatalf("sink message %d = schema %d %s; want schema 4 (flat_buffer) and the JSON description", i, got[i].Schema, got[i].Payload)
		}
		buf, err := base64.StdEncoding.DecodeString(desc.RawData)
		if err != nil || desc.BufferSize != len(buf) || !desc.HasRootTable || string(buf) != string(topic[i].Payload) {
			t.Fatalf("sink message %d describes %d bytes (%v), the topic holds %d", i, desc.BufferSize, err, len(topic[i].Payload))
		}
		fields := flatBufferStrings(t, buf)
		if strings.Join(fields, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("message %d fields %q, want %q", i, fields, want)
		}
	}
	if e := source.Stats(t).Errors + sink.Stats(t).Errors; e != 0 {
		t.Errorf("errors = %d, want 0", e)
	}
}

// Bytes that cannot be a FlatBuffer are dropped with an error naming the
// offset and counted; the rest of the batch is delivered.
func TestFlatBufferSinkCountsAndSkipsMismatchedMessages(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"fb": 1}))
	env := append(baseEnv(srv, t.TempDir()), "IGGY_CONNECTOR_LOG_LEVEL=debug")
	good, err := codec.FlatBufferEncoder{}.Encode(codec.TextPayload("ok"))
	if err != nil {
		t.Fatal(err)
	}
	sendRaw(t, srv, "fmt", "fb", [][]byte{good, {1, 2, 3}, []byte(`{"a":1}`), good})
	out := filepath.Join(t.TempDir(), "received")
	sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(probeLibrary(t), "fmt", "fb", "flat_buffer", "", out, "")))
	expectMiddleTwoSkipped(t, sink, out, "offset=1", "3 bytes, a FlatBuffer has at least 4", "offset=2", "outside the 7-byte buffer")
}

// flat_buffer_convert's schema_path must name a readable file.
func TestFlatBufferConvertMissingSchemaStopsTheRunner(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"fb": 1}))
	missing := filepath.Join(t.TempDir(), "order.fbs")
	r := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), probeSourceTOML(t, probeLibrary(t), "fmt", "fb", "flat_buffer", "", 0, nil,
		`[transforms.flat_buffer_convert]
enabled = true
source_format = "json"
target_format = "flat_buffer"
include_paths = []
preserve_unknown_fields = false
schema_path = "`+missing+`"

[transforms.flat_buffer_convert.conversion_options]
verify_buffers = true
pretty_json = false
include_metadata = false
buffer_size_hint = 1024
strict_mode = false
`)))
	code, err := r.Wait(waitLong)
	if err != nil || code == 0 {
		t.Fatalf("runner exit %d, %v; want a non-zero exit", code, err)
	}
	for _, m := range []string{"probe_source", "flat_buffer_convert", missing} {
		if !strings.Contains(r.Logs(), m) {
			t.Errorf("output does not mention %q:\n%s", m, r.Logs())
		}
	}
}
