package supervisor_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// previewLine is the delivered line of a preview of reader's config over {"payload":{"a":1}}.
const addFields = `
[transforms.add_fields]
enabled = true
fields = [{ key = "added", value = { static = "by-file" } }]
`

// POST .../preview runs the samples through a config, the running one, one in the body or a
// stored version, and answers what the plugin would receive as JSON lines; nothing is stored.
func TestPreview(t *testing.T) {
	broker := testkit.StartBroker(t)
	f := newFixture(t, broker)
	f.writeRuntime(t, `secret_keys = ["pin"]`)
	f.write(t, "connectors/reader.toml", disabled(sinkFile("reader", f.plugin("null_sink"), "demo", "events", ""))+addFields)
	f.write(t, "connectors/gen.toml", disabled(sourceFile("gen", f.plugin("random_source"), "demo", "events", "")))
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)

	line := func(payload string, size int) string {
		return fmt.Sprintf(`{"point":"delivered","stream":"demo","topic":"events","partition":0,"offset":0,"id":"0","timestamp":0,"headers":[],"schema":"json","size":%d,"payload":%s}`+"\n", size, payload)
	}
	msgs := `"messages":[{"payload":{"a":1,"pin":"1234","password":"p"}}]`

	// The running config; secret fields are masked by the supervisor's [http] secret_keys.
	resp, body, err := p.Do(http.MethodPost, "/sinks/reader/preview", jsonContent, "{"+msgs+"}")
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" ||
		string(body) != line(`{"a":1,"pin":"******","password":"p","added":"by-file"}`, 53) {
		t.Fatalf("running config: %v %v\n%s", resp, err, body)
	}
	// A config in the body, as POST .../configs takes it.
	create := `{"enabled":true,"name":"n","path":"` + f.plugin("null_sink") + `","streams":[{"stream":"demo","topics":["events"],"schema":"json"}],` +
		`"transforms":{"delete_fields":{"enabled":true,"fields":["password"]}}}`
	got := call(t, p, http.MethodPost, "/sinks/reader/preview", `{"config":`+create+`,`+msgs+`}`, http.StatusOK)
	if got != line(`{"a":1,"pin":"******"}`, 20) {
		t.Fatalf("body config: %s", got)
	}
	// A key with no connector yet takes a config in the body too.
	if got := call(t, p, http.MethodPost, "/sinks/newcomer/preview", `{"config":`+create+`,`+msgs+`}`, http.StatusOK); got != line(`{"a":1,"pin":"******"}`, 20) {
		t.Fatalf("new key: %s", got)
	}
	// A stored version: create one, preview it, and nothing else changes.
	call(t, p, http.MethodPost, "/sinks/reader/configs", create, http.StatusOK)
	versions := call(t, p, http.MethodGet, "/sinks/reader/configs", "", http.StatusOK)
	if got := call(t, p, http.MethodPost, "/sinks/reader/preview?version=1", "{"+msgs+"}", http.StatusOK); got != line(`{"a":1,"pin":"******"}`, 20) {
		t.Fatalf("version 1: %s", got)
	}
	if after := call(t, p, http.MethodGet, "/sinks/reader/configs", "", http.StatusOK); after != versions {
		t.Fatalf("versions changed:\n%s\n%s", versions, after)
	}
	// A source: what would go to each stream entry.
	got = call(t, p, http.MethodPost, "/sources/gen/preview", `{"messages":[{"payload":{"n":1},"id":"9"}]}`, http.StatusOK)
	if got != `{"point":"sent","stream":"demo","topic":"events","partition":0,"offset":0,"id":"9","timestamp":0,"headers":[],"schema":"json","size":7,"payload":{"n":1}}`+"\n" {
		t.Fatalf("source: %s", got)
	}

	many := `{"messages":[` + strings.TrimSuffix(strings.Repeat(`{"payload":1},`, 101), ",") + `]}`
	badConfig := strings.Replace(create, `"schema":"json"`, `"schema":"xml"`, 1)
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"no messages", "/sinks/reader/preview", `{"messages":[]}`, 400, `"code":"invalid_messages","reason":"Invalid sample messages: messages: at least one`},
		{"too many messages", "/sinks/reader/preview", many, 400, `messages: 101 sample messages, at most 100 in one preview`},
		{"bad message", "/sinks/reader/preview", `{"messages":[{"payload":1},{"payload":1,"offset":-1}]}`, 400, `messages[1].offset: expected an unsigned 64-bit integer, got -1`},
		{"message for a topic the sink does not read", "/sinks/reader/preview", `{"messages":[{"payload":1,"topic":"other"}]}`, 400, `messages[0].topic: stream \"\" topic \"other\" is not read by this sink`},
		{"text payload that is not a string", "/sinks/reader/preview", `{"messages":[{"payload":1,"schema":"text"}]}`, 400, `messages[0].payload: a text payload is a JSON string`},
		{"bad config in the body", "/sinks/reader/preview", `{"config":` + badConfig + `,` + msgs + `}`, 400, `"code":"invalid_configuration","reason":"Invalid configuration: streams[0].schema: `},
		{"bad transform in the body", "/sinks/reader/preview", `{"config":` + strings.Replace(create, `"fields":["password"]`, `"fields":"password"`, 1) + `,` + msgs + `}`, 400, `Invalid configuration: transforms.delete_fields`},
		{"config and version", "/sinks/reader/preview?version=1", `{"config":` + create + `,` + msgs + `}`, 400, `either a config in the body or ?version=N, not both`},
		{"unknown field", "/sinks/reader/preview", `{"mesages":[]}`, 422, `unknown field "mesages"`},
		{"unknown version", "/sinks/reader/preview?version=7", "{" + msgs + "}", 404, `"code":"sink_config_not_found"`},
		{"unknown connector", "/sinks/nobody/preview", "{" + msgs + "}", 404, `"code":"sink_not_found"`},
		{"bad key", "/sinks/..bad/preview", "{" + msgs + "}", 400, `"code":"invalid_configuration"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := call(t, p, http.MethodPost, tc.path, tc.body, tc.status); !strings.Contains(got, tc.want) {
				t.Fatalf("got %s\nwant it to contain %s", got, tc.want)
			}
		})
	}
	if resp, _, err := p.Do(http.MethodPost, "/sinks/reader/preview", nil, "{"+msgs+"}"); err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("no JSON content type: %v %v, want 415", resp, err)
	}
}

// The body limit ([http] max_body_bytes) is 413, and previews run two at a time: a third while two
// are in progress is 429 with Retry-After.
func TestPreviewBounds(t *testing.T) {
	broker := testkit.StartBroker(t)
	f := newFixture(t, broker)
	f.writeRuntime(t, "max_body_bytes = 4096")
	f.write(t, "connectors/reader.toml", disabled(sinkFile("reader", f.plugin("null_sink"), "demo", "events", "")))
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)

	big := `{"messages":[{"payload":"` + strings.Repeat("x", 5000) + `"}]}`
	if resp, body, err := p.Do(http.MethodPost, "/sinks/reader/preview", jsonContent, big); err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("over max_body_bytes: %v %v %s, want 413", resp, err, body)
	}

	// Two previews whose transform schema is a FIFO nobody writes hold both places: their dry
	// runs wait on it.
	fifo := filepath.Join(t.TempDir(), "order.proto")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	stuck := `{"config":{"enabled":true,"name":"n","path":"` + f.plugin("null_sink") + `","streams":[{"stream":"demo","topics":["events"],"schema":"raw"}],` +
		`"transforms":{"proto_convert":{"enabled":true,"source_format":"proto","target_format":"json","include_paths":[],"preserve_unknown_fields":false,` +
		`"schema_path":"` + fifo + `","conversion_options":{"validate_messages":true,"pretty_json":false,"include_metadata":false,"type_url_prefix":"t","strict_mode":false}}}},` +
		`"messages":[{"payload":1}]}`
	done := make(chan int, 2)
	for range 2 {
		go func() {
			resp, _, err := p.Do(http.MethodPost, "/sinks/reader/preview", jsonContent, stuck)
			if err != nil {
				done <- 0
				return
			}
			done <- resp.StatusCode
		}()
	}
	msgs := `{"messages":[{"payload":1}]}`
	waitFor(t, p, waitLong, "two dry runs waiting on the FIFO", func() bool { return len(dryRunChildren(t, p.Pid())) == 2 })
	resp, body, err := p.Do(http.MethodPost, "/sinks/reader/preview", jsonContent, msgs)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" ||
		!strings.Contains(string(body), `"code":"too_many_requests","reason":"2 preview requests are running`) {
		t.Fatalf("a third preview: %v %v %s, want 429 with Retry-After: 1", resp, err, body)
	}
	// An empty schema ends both (their config is then refused); until both answered, each one
	// that opens the FIFO is given its end.
	for answered := 0; answered < 2; {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case status := <-done:
			if status != http.StatusBadRequest {
				t.Fatalf("a held preview answered %d, want 400 (its schema file is empty)", status)
			}
			answered++
		case <-time.After(50 * time.Millisecond): // then give the next reader its end
		}
	}
	call(t, p, http.MethodPost, "/sinks/reader/preview", msgs, http.StatusOK)
}

// dryRunChildren are the pids of the supervisor's child processes running a dry run.
func dryRunChildren(t *testing.T, supervisor int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		cmdline, err2 := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || err2 != nil {
			continue // it ended meanwhile
		}
		// stat: pid (comm) state ppid ...; comm may hold spaces, so read after the last ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(supervisor) && strings.Contains(string(cmdline), "--dry-run") {
			pids = append(pids, pid)
		}
	}
	return pids
}
