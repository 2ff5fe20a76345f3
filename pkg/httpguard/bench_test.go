package httpguard_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httpguard"
)

// BenchmarkWrap is the policy's cost per request in front of a handler that does nothing: a key
// holder's Bearer request, and a keyless loopback request that goes through the Host check.
func BenchmarkWrap(b *testing.B) {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, c := range []struct {
		name   string
		key    string
		header http.Header
	}{
		{"bearer", "s3cret", http.Header{"Authorization": {"Bearer s3cret"}}},
		{"no key, host check", "", http.Header{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := config.DefaultRuntime().HTTP
			h.APIKey = c.key
			g, err := httpguard.New(h)
			if err != nil {
				b.Fatal(err)
			}
			handler := g.Wrap(noop)
			req := httptest.NewRequest(http.MethodPost, "/sinks/pg/pause", nil)
			req.Host = "localhost:8081"
			req.Header = c.header
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				handler.ServeHTTP(w, req)
			}
		})
	}
}
