package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// jsonRecords decodes the JSON log records in buf.
func jsonRecords(buf *testkit.LogBuffer) []map[string]any {
	var out []map[string]any
	for _, l := range buf.Lines() {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func TestErrorReporterRateLimits(t *testing.T) {
	var buf testkit.LogBuffer
	r := &errorReporter{log: slog.New(slog.NewJSONHandler(&buf, nil))}
	r.report(errors.New("first"))
	r.report(errors.New("second"))
	r.report(errors.New("third"))
	r.last = r.last.Add(-2 * errorInterval) // the interval has passed
	r.report(errors.New("fourth"))

	lines := jsonRecords(&buf)
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2 (one per interval): %v", len(lines), lines)
	}
	if lines[0]["level"] != "WARN" || lines[0]["error"] != "first" || lines[0]["errors_since_last_report"] != 0.0 {
		t.Errorf("first report = %v", lines[0])
	}
	if lines[1]["error"] != "fourth" || lines[1]["errors_since_last_report"] != 2.0 {
		t.Errorf("second report = %v, want fourth with 2 suppressed", lines[1])
	}
}

func TestExportErrorsReachTheErrorLogger(t *testing.T) {
	// A collector that refuses every export with a non-retryable status.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no thanks", http.StatusBadRequest)
	}))
	defer srv.Close()
	cfg := config.Telemetry{Enabled: true, ServiceName: "s",
		Traces: config.OTLPExporter{Transport: TransportHTTP, Endpoint: srv.URL},
		Logs:   config.OTLPExporter{Transport: TransportHTTP, Endpoint: srv.URL}}
	tel, err := Setup(t.Context(), cfg, Resource{})
	if err != nil {
		t.Fatal(err)
	}
	var buf testkit.LogBuffer
	errorLog.mu.Lock()
	errorLog.last, errorLog.suppressed = time.Time{}, 0
	errorLog.mu.Unlock()
	tel.SetErrorLogger(slog.New(slog.NewJSONHandler(&buf, nil)))
	defer tel.SetErrorLogger(nil)

	tel.Reporter(slog.New(slog.DiscardHandler), false).Sink(context.Background(), SinkBatch{Total: time.Millisecond})
	// The batch processor exports on its own schedule; wait for its report.
	testkit.Eventually(t, 20*time.Second, "an export error reported on the error logger", func() bool { return len(jsonRecords(&buf)) > 0 })
	lines := jsonRecords(&buf)
	if msg, _ := lines[0]["msg"].(string); lines[0]["level"] != "WARN" || !strings.Contains(msg, "telemetry export failed") ||
		!strings.Contains(lines[0]["error"].(string), "400") {
		t.Errorf("report = %v", lines[0])
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_ = tel.Shutdown(ctx)
}
