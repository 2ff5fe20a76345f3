package runner_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/dryrun"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/runner"
)

// dryRunLines runs runner.DryRunMain over toml and the sample lines and returns its exit status
// and output lines.
func dryRunLines(t *testing.T, toml string, env []string, samples ...string) (int, []string) {
	t.Helper()
	var out bytes.Buffer
	environ := append([]string{"IGGY_CONNECTOR_CONFIG=" + toml}, env...)
	code := runner.DryRunMain(context.Background(), environ, nil, strings.NewReader(strings.Join(samples, "\n")), &out)
	return code, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("output\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A sink sample goes through decode, the transforms and encode as a polled message would, and
// comes out as what the plugin receives; a message a stage fails on comes out as failed, naming
// the stage, shown as the sample gave it.
func TestDryRunSink(t *testing.T) {
	toml := sinkTOML("dry", "/nowhere/libsink.so", "s", "t", "", "") + `
[transforms.add_fields]
enabled = true
fields = [{ key = "seen", value = { static = true } }]
[transforms.delete_fields]
enabled = true
fields = ["drop_me"]
`
	code, lines := dryRunLines(t, toml, nil,
		`{"point":"polled","stream":"s","topic":"t","partition":2,"offset":40,"id":"7","timestamp":1000,"headers":[{"key":"b","kind":"uint16","value":513},{"key":"a","kind":"string","value":"x"}],"schema":"json","size":26,"payload":{"n":1,"drop_me":[1,2]}}`,
		`{"payload":{"token":"t0p","n":2}}`,
		`{"payload":"{\"n\":","schema":"text"}`,
		`{"payload":[1, "<&>"]}`)
	if code != runnerproc.ExitOK {
		t.Fatalf("exit %d: %s", code, lines)
	}
	wantLines(t, lines,
		// Headers reach the plugin in postcard order (by kind, then bytes): the string key first.
		`{"point":"delivered","stream":"s","topic":"t","partition":2,"offset":40,"id":"7","timestamp":1000,"headers":[{"key":"a","kind":"string","value":"x"},{"key":"b","kind":"uint16","value":513}],"schema":"json","size":19,"payload":{"n":1,"seen":true}}`,
		// Secret-named fields are masked as the tap masks them; size is the real payload's.
		`{"point":"delivered","stream":"s","topic":"t","partition":0,"offset":41,"id":"0","timestamp":0,"headers":[],"schema":"json","size":33,"payload":{"token":"******","n":2,"seen":true}}`,
		`{"point":"failed","stream":"s","topic":"t","partition":0,"offset":42,"id":"0","timestamp":0,"headers":[],"schema":"text","size":5,"payload":"{\"n\":","error":"decode: invalid JSON payload at offset 5: unexpected end of input"}`,
		`{"point":"delivered","stream":"s","topic":"t","partition":0,"offset":43,"id":"0","timestamp":0,"headers":[],"schema":"json","size":9,"payload":[1,"<&>"]}`,
	)

	// With reveal_secrets nothing is masked.
	_, lines = dryRunLines(t, toml, []string{"IGGY_CONNECTORS_HTTP_REVEAL_SECRETS=true"}, `{"payload":{"token":"t0p"}}`)
	wantLines(t, lines, `{"point":"delivered","stream":"s","topic":"t","partition":0,"offset":0,"id":"0","timestamp":0,"headers":[],"schema":"json","size":27,"payload":{"token":"t0p","seen":true}}`)
}

// A sink with several topic entries runs each sample through the entry it names; a sample naming
// a topic the sink does not read is refused.
func TestDryRunSinkTopics(t *testing.T) {
	toml := strings.Replace(sinkTOML("dry", "/nowhere/lib.so", "s", "t", "", ""), `schema = "json"`, `schema = "json"

[[streams]]
stream = "s2"
topics = ["bin"]
schema = "raw"`, 1)
	code, lines := dryRunLines(t, toml, nil, `{"payload":{"a":1}}`, `{"stream":"s2","payload":"AAE=","encoding":"base64"}`, `{"topic":"bin","payload":"raw text"}`)
	if code != runnerproc.ExitOK {
		t.Fatalf("exit %d: %s", code, lines)
	}
	wantLines(t, lines,
		`{"point":"delivered","stream":"s","topic":"t","partition":0,"offset":0,"id":"0","timestamp":0,"headers":[],"schema":"json","size":7,"payload":{"a":1}}`,
		`{"point":"delivered","stream":"s2","topic":"bin","partition":0,"offset":1,"id":"0","timestamp":0,"headers":[],"schema":"raw","size":2,"payload":"AAE=","encoding":"base64"}`,
		// A JSON string on a raw stream is its JSON text, quotes included.
		`{"point":"delivered","stream":"s2","topic":"bin","partition":0,"offset":2,"id":"0","timestamp":0,"headers":[],"schema":"raw","size":10,"payload":"InJhdyB0ZXh0Ig==","encoding":"base64"}`,
	)
	code, lines = dryRunLines(t, toml, nil, `{"payload":1}`, `{"stream":"s","topic":"bin","payload":1}`)
	if code != runnerproc.ExitConfig {
		t.Fatalf("exit %d, want %d: %s", code, runnerproc.ExitConfig, lines)
	}
	wantLines(t, lines, `{"input":"samples","line":2,"field":"topic","message":"stream \"s\" topic \"bin\" is not read by this sink (it reads s/t, s2/bin); leave stream and topic out for the first"}`)
}

// A source sample is what the plugin produced (its schema the sample's, json by default): it goes
// to every stream entry, encoded for each; a message an entry cannot encode fails naming it.
func TestDryRunSource(t *testing.T) {
	toml := strings.Replace(sourceTOML("dry", "/nowhere/lib.so", "out", "json", "", ""), `topic = "json"
schema = "json"`, `topic = "json"
schema = "json"

[[streams]]
stream = "out"
topic = "text"
schema = "text"`, 1) + `
[transforms.update_fields]
enabled = true
fields = [{ key = "n", value = { static = 0 } }]
`
	code, lines := dryRunLines(t, toml, nil,
		`{"point":"produced","id":"5","headers":[{"key":"h","kind":"bool","value":true}],"schema":"json","payload":{"n":1,"x":"y"}}`,
		`{"payload":"AAE=","encoding":"base64","schema":"raw"}`,
		`{"payload":"e29vcHM=","encoding":"base64","schema":"json","id":"9"}`)
	if code != runnerproc.ExitOK {
		t.Fatalf("exit %d: %s", code, lines)
	}
	wantLines(t, lines,
		`{"point":"sent","stream":"out","topic":"json","partition":0,"offset":0,"id":"5","timestamp":0,"headers":[{"key":"h","kind":"bool","value":true}],"schema":"json","size":15,"payload":{"n":0,"x":"y"}}`,
		`{"point":"sent","stream":"out","topic":"text","partition":0,"offset":0,"id":"5","timestamp":0,"headers":[{"key":"h","kind":"bool","value":true}],"schema":"text","size":15,"payload":"{\"n\":0,\"x\":\"y\"}"}`,
		// Raw bytes cannot be encoded as json: the first entry fails, and the source's batch would
		// be rejected whole.
		`{"point":"failed","stream":"out","topic":"json","partition":0,"offset":0,"id":"0","timestamp":0,"headers":[],"schema":"raw","size":2,"payload":"AAE=","encoding":"base64","error":"encode: encode as json: invalid payload type: the json encoder takes json or text, got raw"}`,
		`{"point":"failed","stream":"","topic":"","partition":0,"offset":0,"id":"9","timestamp":0,"headers":[],"schema":"json","size":5,"payload":"e29vcHM=","encoding":"base64","error":"decode: decode as json: invalid JSON payload at offset 1: expected an object key"}`,
	)
}

// Bad configuration and bad samples are reported together, each naming its field, and nothing
// else is written.
func TestDryRunRefusesBadInput(t *testing.T) {
	toml := strings.Replace(sinkTOML("dry", "/nowhere/lib.so", "s", "t", "", ""), `schema = "json"`, `schema = "xml"`, 1)
	code, lines := dryRunLines(t, toml, nil, `{"payload":1}`, `{"payload":1,"offset":-1}`)
	if code != runnerproc.ExitConfig {
		t.Fatalf("exit %d: %s", code, lines)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"input":"config","field":"streams[0].schema","message":`) ||
		lines[1] != `{"input":"samples","line":2,"field":"offset","message":"expected an unsigned 64-bit integer, got -1"}` {
		t.Fatalf("problems:\n%s", strings.Join(lines, "\n"))
	}
	code, lines = dryRunLines(t, sinkTOML("dry", "/nowhere/lib.so", "s", "t", "", ""), nil, "", "  ")
	if code != runnerproc.ExitConfig || len(lines) != 1 || !strings.Contains(lines[0], "no samples") {
		t.Fatalf("no samples: exit %d: %s", code, lines)
	}
}

// The output lines read back as samples: a dry run's output feeds another.
func TestDryRunOutputReadsBack(t *testing.T) {
	_, lines := dryRunLines(t, sinkTOML("dry", "/nowhere/lib.so", "s", "t", "", ""), nil,
		`{"payload":{"a":"b"},"headers":[{"key":"k","kind":"float64","value":0.1}],"id":"340282366920938463463374607431768211455"}`)
	samples, problems := dryrun.ReadSamples(strings.NewReader(strings.Join(lines, "\n")))
	if len(problems) > 0 || len(samples) != 1 {
		t.Fatalf("read back: %v", problems)
	}
	var e tap.Event
	e.SetHeaders(*samples[0].Headers)
	if got, _ := tap.Marshal(&e); !strings.Contains(string(got), `"headers":[{"key":"k","kind":"float64","value":0.1}]`) {
		t.Fatalf("headers read back as %s", got)
	}
}
