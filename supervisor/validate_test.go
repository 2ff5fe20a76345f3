package supervisor_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

type validationAnswer struct {
	Valid  bool `json:"valid"`
	Errors []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

// Validate answers whether a POST .../configs body would start, checking what a start checks (the
// document, transforms, the plugin path and allow-list, the library's symbols in a child process,
// the sink's streams and topics on Iggy), names the field of each problem, and stores nothing.
func TestValidateChecksWhatAStartWouldAndStoresNothing(t *testing.T) {
	testkit.OverProtocols(t, validateChecksWhatAStartWouldAndStoresNothing)
}

func validateChecksWhatAStartWouldAndStoresNothing(t *testing.T, protocol string) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	stripped := testkit.CompileC(t, testkit.SinkWithoutConsumeC, "libstripped_sink")
	f.writeRuntime(t, "")
	runtimeFile := filepath.Join(f.dir, "config.toml")
	rt, err := os.ReadFile(runtimeFile)
	if err != nil {
		t.Fatal(err)
	}
	rt = append(rt, []byte("\n[plugins]\nallowed_dirs = [\""+f.plugins+"\", \""+filepath.Dir(stripped)+"\"]\n")...)
	f.write(t, "config.toml", string(rt))
	f.write(t, "connectors/reader.toml", sinkFile("reader", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(testkit.ProtocolEnv(protocol)), waitLong)
	versionsBefore := call(t, p, http.MethodGet, "/sinks/reader/configs", "", http.StatusOK)

	outside := testkit.CopyPlugin(t, "null_sink", filepath.Join(t.TempDir(), "libiggy_connector_null_sink.so"))
	sink := func(path, stream, topic, streamExtra, rest string) string {
		return `{"enabled":true,"name":"v","path":"` + path + `","streams":[{"stream":"` + stream + `","topics":["` + topic +
			`"],"schema":"json"` + streamExtra + `}]` + rest + `}`
	}
	good := f.plugin("null_sink")
	for _, tc := range []struct {
		name, kind, key, body string
		fields                []string // nil: valid
		message               string   // in the first error
	}{
		{"good sink", "sinks", "reader", sink(good, "demo", "events", `,"batch_length":100`, `,"plugin_config":{}`), nil, ""},
		{"good sink under a new key", "sinks", "fresh", sink(good, "demo", "events", "", ""), nil, ""},
		{"good source", "sources", "gen", `{"enabled":true,"name":"g","path":"` + f.plugin("random_source") +
			`","streams":[{"stream":"demo","topic":"created_at_start","schema":"json"}]}`, nil, ""},
		{"bad batch_length", "sinks", "reader", sink(good, "demo", "events", `,"batch_length":-1`, ""), []string{"streams[0].batch_length"}, "unsigned integer"},
		{"unknown transform", "sinks", "reader", sink(good, "demo", "events", "", `,"transforms":{"nope":{"enabled":true}}`), []string{"transforms.nope"}, "unknown transform"},
		{"bad transform config", "sinks", "reader", sink(good, "demo", "events", "", `,"transforms":{"add_fields":{"enabled":true,"fields":[{"key":"a"}]}}`),
			[]string{"transforms.add_fields.fields[0]"}, "value"},
		{"disallowed plugin path", "sinks", "reader", sink(outside, "demo", "events", "", ""), []string{"path"}, "allowed"},
		{"missing library", "sinks", "reader", sink(filepath.Join(f.plugins, "libmissing.so"), "demo", "events", "", ""), []string{"path"}, "not found"},
		{"library missing symbols", "sinks", "reader", sink(stripped, "demo", "events", "", ""), []string{"path"}, "iggy_sink_consume"},
		{"missing stream", "sinks", "reader", sink(good, "nostream", "events", "", ""), []string{"streams[0].stream"}, "does not exist"},
		{"missing topic and bad library", "sinks", "fresh", sink(stripped, "demo", "absent", "", ""), []string{"path", "streams[0].topics[0]"}, "iggy_sink_consume"},
		{"not an object", "sinks", "reader", `[1]`, []string{"config"}, "expected a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got validationAnswer
			body := call(t, p, http.MethodPost, "/"+tc.kind+"/"+tc.key+"/configs/validate", tc.body, http.StatusOK)
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			if got.Valid != (tc.fields == nil) || len(got.Errors) != len(tc.fields) || got.Errors == nil {
				t.Fatalf("answer %s; want valid %v with fields %v", body, tc.fields == nil, tc.fields)
			}
			for i, field := range tc.fields {
				if got.Errors[i].Field != field {
					t.Errorf("error %d field %q, want %q (%s)", i, got.Errors[i].Field, field, body)
				}
			}
			if tc.message != "" && !strings.Contains(got.Errors[0].Message, tc.message) {
				t.Errorf("first message %q does not say %q", got.Errors[0].Message, tc.message)
			}
		})
	}
	if after := call(t, p, http.MethodGet, "/sinks/reader/configs", "", http.StatusOK); after != versionsBefore {
		t.Errorf("validate stored something: versions were %s, now %s", versionsBefore, after)
	}
	call(t, p, http.MethodGet, "/sinks/fresh/configs", "", http.StatusNotFound)
	call(t, p, http.MethodPost, "/sinks/reader/configs/validate", `{"enabled":`, http.StatusBadRequest) // not JSON: as POST .../configs
}
