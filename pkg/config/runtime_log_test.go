package config_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// The startup line shows the listed keys only: no API key, password or token, request header
// values masked, URL userinfo masked, in either log format.
func TestRuntimeLogValueHidesSecrets(t *testing.T) {
	rt, err := config.ParseRuntime("test", []byte(`
[http]
api_key = "api-secret"
address = "127.0.0.1:8081"
[iggy]
username = "iggy-user"
password = "iggy-secret"
token = "token-secret"
[connectors]
config_type = "http"
base_url = "https://svc:url-secret@configs.example/api"
[connectors.request_headers]
X-Api-Key = "header-secret"
[telemetry.logs]
endpoint = "http://otel:otel-secret@collector:4317"
[fleet]
enabled = true
runners = ["http://sink-a:8081"]
runner_api_key = "fleet-secret"
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, handler := range map[string]func(*bytes.Buffer) slog.Handler{
		"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var buf bytes.Buffer
		slog.New(handler(&buf)).Info("runtime configuration", "config", rt.LogValue())
		line := buf.String()
		for _, secret := range []string{"api-secret", "iggy-secret", "token-secret", "url-secret", "header-secret", "otel-secret", "fleet-secret"} {
			if strings.Contains(line, secret) {
				t.Errorf("%s: the line carries %q: %s", name, secret, line)
			}
		}
		for _, shown := range []string{"127.0.0.1:8081", "iggy-user", "https://svc:******@configs.example/api", "X-Api-Key:******", "http://otel:******@collector:4317", "http://sink-a:8081"} {
			if !strings.Contains(line, shown) {
				t.Errorf("%s: the line lacks %q: %s", name, shown, line)
			}
		}
	}
}
