package apikey_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/apikey"
)

func TestAuthenticated(t *testing.T) {
	cases := []struct {
		name, key string
		header    http.Header
		want      bool
	}{
		{"missing header", "k", nil, false},
		{"wrong key", "k", http.Header{"Api-Key": {"K"}}, false},
		{"key prefix", "secret", http.Header{"Api-Key": {"secre"}}, false},
		{"right key", "secret", http.Header{"Api-Key": {"secret"}}, true},
		{"first of two headers counts", "k", http.Header{"Api-Key": {"k", "x"}}, true},
		{"second of two headers ignored", "k", http.Header{"Api-Key": {"x", "k"}}, false},
		{"equal but not ASCII", "cl\u00e9", http.Header{"Api-Key": {"cl\u00e9"}}, false},
		{"equal with DEL", "a\x7fb", http.Header{"Api-Key": {"a\x7fb"}}, false},
		{"equal with inner tab", "a\tb", http.Header{"Api-Key": {"a\tb"}}, true},
		{"equal with inner space", "a b", http.Header{"Api-Key": {"a b"}}, true},
		{"bearer", "secret", http.Header{"Authorization": {"Bearer secret"}}, true},
		{"bearer scheme in any case", "secret", http.Header{"Authorization": {"bearer secret"}}, true},
		{"bearer wrong key", "secret", http.Header{"Authorization": {"Bearer secreT"}}, false},
		{"basic is not bearer", "secret", http.Header{"Authorization": {"Basic secret"}}, false},
		{"bearer without a token", "secret", http.Header{"Authorization": {"Bearer"}}, false},
		{"bare key in authorization", "secret", http.Header{"Authorization": {"secret"}}, false},
		{"wrong api-key, right bearer", "secret", http.Header{"Api-Key": {"x"}, "Authorization": {"Bearer secret"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/stats", nil)
			for name, values := range c.header {
				for _, v := range values {
					req.Header.Add(name, v)
				}
			}
			if got := apikey.Authenticated(req, []byte(c.key)); got != c.want {
				t.Fatalf("Authenticated = %v, want %v", got, c.want)
			}
		})
	}
}
