package provider_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/provider"
)

// A config service's answer quoted in an error (and from there in logs and the API's reason
// fields) never carries our own request-header values, nor the value of a secret-looking
// key=value, key: value or "key": "value" pair, whether the body is JSON, broken JSON, HTML or
// text, a non-2xx body or the error_path of a 2xx one.
func TestHTTPErrorBodiesRedactHeadersAndPairs(t *testing.T) {
	headers := map[string]string{"X-Api-Key": "provider-key-0123", "Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2ln", "Accept": "application/json"}
	cases := []struct {
		name, body string
		status     int
		errorPath  string
		secrets    []string
		kept       []string
	}{
		{name: "our header echoed in text", status: http.StatusUnauthorized,
			body:    "Unauthorized: header X-Api-Key: provider-key-0123 is not valid",
			secrets: []string{"provider-key-0123"}, kept: []string{"Unauthorized: header X-Api-Key: ******"}},
		{name: "our bearer token echoed alone", status: http.StatusForbidden,
			body:    `{"detail":"token eyJhbGciOiJIUzI1NiJ9.e30.c2ln expired"}`,
			secrets: []string{"eyJhbGciOiJIUzI1NiJ9.e30.c2ln"}, kept: []string{"expired"}},
		{name: "form and header pairs", status: http.StatusBadRequest,
			body: "invalid request Authorization=Bearer tok-abcdef123456&password=hunter2&user=bob db_password=\"p w\" token: 'tk1'\n" +
				"Authorization: Basic dXNlcjpwYXNz\nX-Session-Token: st-998877",
			secrets: []string{"tok-abcdef123456", "hunter2", "p w", "tk1", "dXNlcjpwYXNz", "st-998877"}, kept: []string{"user=bob", "password=******"}},
		{name: "JSON-looking pairs in HTML", status: http.StatusBadGateway,
			body:    `<html><body><pre>config {"api_key": "sk_live_123", "client_secret" : 'cs-456'}</pre></body></html>`,
			secrets: []string{"sk_live_123", "cs-456"}, kept: []string{"<html>"}},
		{name: "broken JSON", status: http.StatusInternalServerError,
			body:    `{"error":"bad config","signing_key":"sk-789","nested":{"passphrase":"open sesame"`,
			secrets: []string{"sk-789", "open sesame"}, kept: []string{`"error":"bad config"`}},
		{name: "URL credentials in text", status: http.StatusBadRequest,
			body:    "cannot reach https://hooks.example.com/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX?sig=abc123 (timeout)",
			secrets: []string{"XXXXXXXXXXXXXXXXXXXXXXXX", "abc123"}, kept: []string{"https://hooks.example.com/services/T0/B0/******?sig=******"}},
		{name: "the error_path of a 2xx answer", status: http.StatusOK, errorPath: "error",
			body:    `{"error":"login failed: password=hunter3 for X-Api-Key provider-key-0123"}`,
			secrets: []string{"hunter3", "provider-key-0123"}, kept: []string{"API returned error: login failed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			t.Cleanup(srv.Close)
			settings := httpSettings(srv.URL)
			settings.Retry.Enabled = false
			settings.RequestHeaders = headers
			settings.Response.ErrorPath = c.errorPath
			_, err := newHTTP(t, settings).List(ctx)
			if !errors.Is(err, provider.ErrRequestFailed) {
				t.Fatalf("List = %v, want ErrRequestFailed", err)
			}
			msg := err.Error()
			for _, s := range c.secrets {
				if strings.Contains(msg, s) {
					t.Errorf("the error carries %q: %s", s, msg)
				}
			}
			for _, s := range c.kept {
				if !strings.Contains(msg, s) {
					t.Errorf("the error lacks %q: %s", s, msg)
				}
			}
		})
	}
}
