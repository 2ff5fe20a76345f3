package metrics_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestHandlerNegotiationAndErrors(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.NewConnector(reg, "pg_main", metrics.KindSink).AddConsumed(3)
	failing := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return nil, errors.New("gather broke") })
	partial := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		families, _ := reg.Gather()
		return families, errors.New("one family skipped")
	})
	tests := []struct {
		name       string
		g          prometheus.Gatherer
		accept     string
		wantStatus int
		wantType   string // Content-Type prefix
	}{
		{"default is upstream's OpenMetrics text", reg, "", 200, "text/plain; charset=utf-8"},
		{"a Prometheus server's Accept still gets text", reg, "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5", 200, "text/plain; charset=utf-8"},
		{"protobuf on request", reg, "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", 200, "application/vnd.google.protobuf"},
		{"nothing gathered is a 500", failing, "", 500, "text/plain"},
		{"a partial gather is served", partial, "", 200, "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := http.Header{}
			if tt.accept != "" {
				header.Set("Accept", tt.accept)
			}
			resp, body := get(t, serve(t, metrics.Handler(tt.g, quietLogger)), header)
			ct := resp.Header.Get("Content-Type")
			if resp.StatusCode != tt.wantStatus || !strings.HasPrefix(ct, tt.wantType) {
				t.Fatalf("status %d, Content-Type %q; want %d, %q", resp.StatusCode, ct, tt.wantStatus, tt.wantType)
			}
			if tt.wantStatus != 200 {
				return
			}
			families, err := testkit.ParseMetrics(bytes.NewReader(body), ct)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := seriesValues(t, gathererOf(families), metrics.FamilyMessagesConsumed); len(got) != 1 || got[0].value != 3 {
				t.Fatalf("consumed = %+v, want 3", got)
			}
		})
	}
}
