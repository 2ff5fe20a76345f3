package apikey_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/apikey"
)

func TestRequire(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	cases := []struct {
		name, key, path string
		header          []string // api-key values sent, in order; nil = no header
		want            int
	}{
		{"check off: no header", "", "/stats", nil, http.StatusOK},
		{"check off: any header", "", "/stats", []string{"whatever"}, http.StatusOK},
		{"root is exempt", "k", "/", nil, http.StatusOK},
		{"health is exempt", "k", "/health", nil, http.StatusOK},
		{"health/ is not exempt", "k", "/health/", nil, http.StatusUnauthorized},
		{"missing header", "k", "/stats", nil, http.StatusUnauthorized},
		{"wrong key", "k", "/stats", []string{"K"}, http.StatusUnauthorized},
		{"key prefix", "secret", "/stats", []string{"secre"}, http.StatusUnauthorized},
		{"right key", "secret", "/stats", []string{"secret"}, http.StatusOK},
		{"unknown path needs the key too", "k", "/nope", nil, http.StatusUnauthorized},
		{"first of two headers counts", "k", "/stats", []string{"k", "x"}, http.StatusOK},
		{"second of two headers ignored", "k", "/stats", []string{"x", "k"}, http.StatusUnauthorized},
		{"equal but not ASCII", "cl\u00e9", "/stats", []string{"cl\u00e9"}, http.StatusUnauthorized},
		{"equal with DEL", "a\x7fb", "/stats", []string{"a\x7fb"}, http.StatusUnauthorized},
		{"equal with inner tab", "a\tb", "/stats", []string{"a\tb"}, http.StatusOK},
		{"equal with inner space", "a b", "/stats", []string{"a b"}, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			for _, v := range c.header {
				req.Header.Add(apikey.Header, v)
			}
			rec := httptest.NewRecorder()
			apikey.Require(c.key, ok).ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Fatalf("status %d, want %d", rec.Code, c.want)
			}
			if c.want == http.StatusUnauthorized && (rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "") {
				t.Fatalf("401 with body %q and content type %q, want neither", rec.Body.String(), rec.Header().Get("Content-Type"))
			}
		})
	}
}
