package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

const avroOrderSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"id","type":"long"},
  {"name":"customer","type":"string"},
  {"name":"total","type":"double"},
  {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},
  {"name":"tags","type":{"type":"array","items":"string"}},
  {"name":"note","type":["null","string"],"default":null}]}`

// JSON from a source plugin goes to Iggy as Avro (schema file on the source
// stream) and reaches the sink plugin as the same JSON, field by field
// (inline schema on the sink stream).
func TestAvroRoundTripThroughRunners(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"avro": 1}))
	env := baseEnv(srv, t.TempDir())
	lib := probeLibrary(t)
	schemaFile := filepath.Join(t.TempDir(), "order.avsc")
	if err := os.WriteFile(schemaFile, []byte(avroOrderSchema), 0o600); err != nil {
		t.Fatal(err)
	}
	sent := []string{
		`{"id":1,"customer":"Zoë","total":19.5,"status":"PAID","tags":["gift","express"],"note":"ring twice"}`,
		`{"id":-2,"customer":"","total":0.0,"status":"NEW","tags":[],"note":null}`,
		`{"id":9007199254740993,"customer":"x","total":-1.25,"status":"NEW","tags":["a"]}`, // note from the default
	}
	want := []string{sent[0], sent[1], `{"id":9007199254740993,"customer":"x","total":-1.25,"status":"NEW","tags":["a"],"note":null}`}

	source := testkit.StartRunner(t, withConfig(env, probeSourceTOML(t, lib, "fmt", "avro", "avro",
		`avro_schema_path = "`+schemaFile+`"`, 0, jsonLines(sent...), "")))
	out := filepath.Join(t.TempDir(), "received")
	sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(lib, "fmt", "avro", "avro",
		"avro_schema_json = '''"+avroOrderSchema+"'''", out, "")))

	got := waitReceived(t, out, len(want), source, sink)
	schema, err := codec.ParseAvroSchema(avroOrderSchema)
	if err != nil {
		t.Fatal(err)
	}
	topic := readTopic(t, srv, "fmt", "avro")
	for i, w := range want {
		if got[i].Schema != 5 || got[i].Offset != uint64(i) || string(got[i].Payload) != w {
			t.Errorf("sink message %d = offset %d schema %d %s; want offset %d schema 5 (avro) %s",
				i, got[i].Offset, got[i].Schema, got[i].Payload, i, w)
		}
		// What travels through Iggy is one bare Avro datum.
		v, err := schema.DecodeJSON(topic[i].Payload)
		if err != nil {
			t.Fatalf("topic message %d is not an Avro datum: %v", i, err)
		}
		if text, _ := codec.MarshalJSON(v); string(text) != w {
			t.Errorf("topic message %d decodes to %s, want %s", i, text, w)
		}
	}
	if e := source.Stats(t).Errors + sink.Stats(t).Errors; e != 0 {
		t.Errorf("errors = %d, want 0", e)
	}
}

// Bytes in the topic that are not a datum of the schema are dropped with an
// error naming the offset and counted; the rest of the batch is delivered.
func TestAvroSinkCountsAndSkipsMismatchedMessages(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"avro": 1}))
	env := append(baseEnv(srv, t.TempDir()), "IGGY_CONNECTOR_LOG_LEVEL=debug")
	schema, err := codec.ParseAvroSchema(avroOrderSchema)
	if err != nil {
		t.Fatal(err)
	}
	good, err := schema.EncodeJSON(mustJSON(t, `{"id":1,"customer":"a","total":1.0,"status":"NEW","tags":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	sendRaw(t, srv, "fmt", "avro", [][]byte{good, []byte(`{"id":1}`), append(append([]byte{}, good...), 0), good})

	out := filepath.Join(t.TempDir(), "received")
	sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(probeLibrary(t), "fmt", "avro", "avro",
		"avro_schema_json = '''"+avroOrderSchema+"'''", out, "")))
	expectMiddleTwoSkipped(t, sink, out, "offset=1", "offset=2", "trailing bytes after the datum", "connector_key=probe_sink")
	if sink.Exited() {
		t.Errorf("the sink stopped on bad messages")
	}
}

// A source message that does not fit the schema rejects its batch (NACK):
// nothing of it reaches the topic and the error is counted.
func TestAvroSourceRejectsBatchWithMismatchedMessage(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"avro": 1}))
	env := baseEnv(srv, t.TempDir())
	source := testkit.StartRunner(t, withConfig(env, probeSourceTOML(t, probeLibrary(t), "fmt", "avro", "avro",
		"avro_schema_json = '''"+avroOrderSchema+"'''", 0,
		jsonLines(`{"id":1,"customer":"a","total":1.0,"status":"NEW","tags":[]}`, `{"id":"one"}`), "")))
	source.WaitUntil(t, waitLong, "the endpoint", func() bool { _, err := source.Health(); return err == nil })
	source.WaitUntil(t, waitLong, "the rejected batch", func() bool { return source.Stats(t).Errors >= 1 })
	// Stopped, the source has sent all it ever will.
	stopRunner(t, source)
	if n := len(readTopic(t, srv, "fmt", "avro")); n != 0 {
		t.Errorf("topic holds %d messages, want 0 from a rejected batch", n)
	}
	if !strings.Contains(source.Logs(), "Rejected source batch") {
		t.Errorf("logs do not report the rejected batch:\n%s", source.Logs())
	}
}

// A schema file that does not exist or does not parse stops the runner at
// start with a message naming the file and the problem.
func TestAvroSchemaFileProblemsStopTheRunner(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"avro": 1}))
	env := baseEnv(srv, t.TempDir())
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.avsc")
	if err := os.WriteFile(broken, []byte(`{"type":"record","name":"R","fields":[{"name":"a","type":"intt"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.avsc")
	lib := probeLibrary(t)
	tests := []struct {
		name, config string
		mention      []string
	}{
		{"sink, missing file", probeSinkTOML(lib, "fmt", "avro", "avro", `avro_schema_path = "`+missing+`"`, filepath.Join(dir, "out"), ""),
			[]string{"probe_sink", missing, "no such file or directory"}},
		{"source, broken file", probeSourceTOML(t, lib, "fmt", "avro", "avro", `avro_schema_path = "`+broken+`"`, 0, nil, ""),
			[]string{"probe_source", broken, "intt"}},
		{"sink without any schema", probeSinkTOML(lib, "fmt", "avro", "avro", "", filepath.Join(dir, "out"), ""),
			[]string{"probe_sink", "avro_schema_json or avro_schema_path"}},
		{"avro_convert with a missing file", probeSinkTOML(lib, "fmt", "avro", "json", "", filepath.Join(dir, "out"),
			testkit.AvroConvertTOML("avro", "json", `schema_path = "`+missing+`"`)),
			[]string{"probe_sink", "avro_convert", missing}},
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

func mustJSON(t *testing.T, text string) any {
	t.Helper()
	v, err := codec.ParseJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
