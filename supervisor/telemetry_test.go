package supervisor_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/supervisor"
)

// exportedLog is one log record an OTLP receiver got, with its resource's attributes.
type exportedLog struct {
	resource map[string]string
	body     string
	attrs    map[string]string
}

// otlpReceiver is an OTLP/HTTP collector (protobuf bodies) keeping the log records it is sent.
// Spans are accepted and dropped: these tests look at logs.
type otlpReceiver struct {
	URL  string
	mu   sync.Mutex
	logs []exportedLog
}

func startOTLPReceiver(t testing.TB) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/logs", func(w http.ResponseWriter, req *http.Request) {
		var in collogspb.ExportLogsServiceRequest
		if !readOTLP(w, req, &in) {
			return
		}
		r.add(&in)
		writeOTLP(w, &collogspb.ExportLogsServiceResponse{})
	})
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in coltracepb.ExportTraceServiceRequest
		if readOTLP(w, req, &in) {
			writeOTLP(w, &coltracepb.ExportTraceServiceResponse{})
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *otlpReceiver) add(in *collogspb.ExportLogsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rl := range in.GetResourceLogs() {
		res := otlpAttrs(rl.GetResource().GetAttributes())
		for _, sl := range rl.GetScopeLogs() {
			for _, l := range sl.GetLogRecords() {
				r.logs = append(r.logs, exportedLog{resource: res, body: l.GetBody().GetStringValue(), attrs: otlpAttrs(l.GetAttributes())})
			}
		}
	}
}

func (r *otlpReceiver) received() []exportedLog {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.logs)
}

// otlpAttrs renders attribute values as text (enough to compare names, numbers and pids).
func otlpAttrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = fmt.Sprint(v.IntValue)
		default:
			m[kv.GetKey()] = kv.GetValue().String()
		}
	}
	return m
}

func readOTLP(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
		return false
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = gz
	}
	b, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeOTLP(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// With [telemetry] on, the supervisor's own log records reach the OTLP collector under the
// configured service name and the runtime version. The runner lines it relays are printed but not
// exported again by the supervisor: each runner exports its own.
func TestSupervisorLogsAreExportedOverOTLP(t *testing.T) {
	collector := startOTLPReceiver(t)
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	f.write(t, "config.toml", readFile(t, f.dir+"/config.toml")+fmt.Sprintf(`
[telemetry]
enabled = true
service_name = "connectors-under-test"

[telemetry.logs]
transport = "http"
endpoint = %[1]q

[telemetry.traces]
transport = "http"
endpoint = %[1]q
`, collector.URL))
	f.write(t, "connectors/a.toml", sinkFile("a", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	supervisorPID := fmt.Sprint(p.Pid())
	fromSupervisor := func() []exportedLog {
		var out []exportedLog
		for _, l := range collector.received() {
			if l.resource["process.pid"] == supervisorPID {
				out = append(out, l)
			}
		}
		return out
	}
	waitFor(t, p, waitLong, "the supervisor's start record at the collector", func() bool {
		return slices.ContainsFunc(fromSupervisor(), func(l exportedLog) bool { return l.body == "iggy-connectors started" })
	})
	if len(linesOf(p.Logs(), "a")) == 0 {
		t.Fatalf("no relayed runner line was printed; the test needs some")
	}
	for _, l := range fromSupervisor() {
		if l.resource["service.name"] != "connectors-under-test" || l.resource["service.version"] != supervisor.RuntimeVersion {
			t.Errorf("record %q: resource service.name %q, service.version %q; want %q, %q",
				l.body, l.resource["service.name"], l.resource["service.version"], "connectors-under-test", supervisor.RuntimeVersion)
		}
		if key, relayed := l.attrs["connector_key"]; relayed {
			t.Errorf("runner line %q (connector_key %s) exported by the supervisor; runners export their own", l.body, key)
		}
	}
	// What is queued at exit is flushed: the last record reaches the collector too.
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("after SIGTERM: exit code %d, %v; want 0", code, err)
	}
	if !slices.ContainsFunc(fromSupervisor(), func(l exportedLog) bool { return l.body == "iggy-connectors stopped" }) {
		t.Errorf("the last record (%q) was not flushed at exit; got %d records", "iggy-connectors stopped", len(fromSupervisor()))
	}
	if strings.Contains(p.Logs(), "telemetry export failed") {
		t.Errorf("export errors reported:\n%s", p.Logs())
	}
}
