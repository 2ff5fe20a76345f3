package config_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

var defaultSecrets = config.SecretKeys(config.DefaultSecretKeys)

// Secret values are masked by key name (substring, any case), at any depth and inside arrays;
// null and empty values are kept; everything else is untouched, and the input is not changed.
func TestSecretKeysMask(t *testing.T) {
	in := map[string]any{
		"host": "db", "Password": "p1", "db_password_file": "/run/x", "retries": int64(3),
		"auth":        map[string]any{"API_KEY": "k", "user": "u", "token": nil, "secret": ""},
		"servers":     []any{map[string]any{"name": "a", "private_key": "pem"}, "plain"},
		"credentials": map[string]any{"user": "u", "pass": "x"},
		"apikey":      int64(12345),
	}
	want := map[string]any{
		"host": "db", "Password": "******", "db_password_file": "******", "retries": int64(3),
		"auth":        map[string]any{"API_KEY": "******", "user": "u", "token": nil, "secret": ""},
		"servers":     []any{map[string]any{"name": "a", "private_key": "******"}, "plain"},
		"credentials": "******",
		"apikey":      "******",
	}
	before := config.Connector{PluginConfig: in}.Clone().PluginConfig
	if got := defaultSecrets.Mask(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Mask =\n %v\nwant\n %v", got, want)
	}
	if !reflect.DeepEqual(in, before) {
		t.Errorf("Mask changed its input")
	}
	if got := config.SecretKeys(nil).Mask(in); !reflect.DeepEqual(got, in) {
		t.Errorf("no keys: Mask = %v, want the input", got)
	}
	if got := config.SecretKeys([]string{"HOST"}).Mask(in)["host"]; got != "******" {
		t.Errorf("custom keys: host = %v, want masked", got)
	}
}

// A masked value sent back takes the real value at the same path from the first previous config
// that has one; a path no previous config holds is reported; real new values are kept.
func TestSecretKeysUnmask(t *testing.T) {
	running := map[string]any{"password": "real", "host": "h", "servers": []any{map[string]any{"token": "t0"}, map[string]any{"token": "t1"}}}
	older := map[string]any{"password": "old", "host": "h", "nested": map[string]any{"secret": "s"}}
	posted := map[string]any{"password": "******", "host": "h",
		"servers": []any{map[string]any{"token": "new"}, map[string]any{"token": "******"}, map[string]any{"token": "******"}},
		"nested":  map[string]any{"secret": "******"},
		"note":    "******", // not a secret key: a literal value
	}
	got, missing := defaultSecrets.Unmask(posted, running, older)
	want := map[string]any{"password": "real", "host": "h",
		"servers": []any{map[string]any{"token": "new"}, map[string]any{"token": "t1"}, map[string]any{"token": "******"}},
		"nested":  map[string]any{"secret": "s"},
		"note":    "******",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Unmask =\n %v\nwant\n %v", got, want)
	}
	if !slices.Equal(missing, []string{"plugin_config.servers[2].token"}) {
		t.Errorf("missing = %v, want the one path no previous version holds", missing)
	}
	if posted["password"] != "******" {
		t.Errorf("Unmask changed its input")
	}
}

// Masking by name covers the wider default words, and the userinfo of a URL in any string.
func TestSecretKeysMaskWiderDefaults(t *testing.T) {
	in := map[string]any{"db_passwd": "a", "pwd": "b", "bearer": "c", "gcp_credential": "d", "auth_header": "e",
		"aws_access_key_id": "f", "connection_string": "g", "connection_uri": "h", "user": "u",
		"mongo": "mongodb://admin:s3cr@t@db.example:27017/app?x=y", "list": []any{"see https://tok@git.example/repo and http://plain.example/"},
		"note": "no url here: user:pass@host"}
	want := map[string]any{"db_passwd": "******", "pwd": "******", "bearer": "******", "gcp_credential": "******", "auth_header": "******",
		"aws_access_key_id": "******", "connection_string": "******", "connection_uri": "******", "user": "u",
		"mongo": "mongodb://admin:******@db.example:27017/app?x=y", "list": []any{"see https://******@git.example/repo and http://plain.example/"},
		"note": "no url here: user:pass@host"}
	if got := defaultSecrets.Mask(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Mask =\n %v\nwant\n %v", got, want)
	}
	doc := `{"a":{"uri":"postgres://u:p@h/db"}}`
	if got := string(defaultSecrets.MaskJSON([]byte(doc))); got != `{"a":{"uri":"postgres://u:******@h/db"}}` {
		t.Errorf("MaskJSON = %s", got)
	}
}

// A masked secret is restored only where the connection target beside it (address keys, URLs,
// at its table and every table above) is the one it came from; a masked URL userinfo only when
// the rest of the URL is unchanged.
func TestSecretKeysUnmaskKeepsTheTarget(t *testing.T) {
	stored := map[string]any{"host": "db.internal", "password": "real", "table": "t",
		"sink":     map[string]any{"url": "https://api.example/v1", "auth": map[string]any{"token": "tok"}},
		"dsn_list": []any{"mongodb://u:pw@m1/app"}}
	cases := []struct {
		name        string
		change      func(m map[string]any)
		wantMissing []string
	}{
		{"nothing changed", func(map[string]any) {}, nil},
		{"a key that is no target changed", func(m map[string]any) { m["table"] = "other" }, nil},
		{"the host beside the password", func(m map[string]any) { m["host"] = "evil.example" },
			[]string{"plugin_config.password", "plugin_config.sink.auth.token"}}, // a host above a table counts for all below
		{"a new address key beside it", func(m map[string]any) { m["endpoint"] = "evil.example" },
			[]string{"plugin_config.password", "plugin_config.sink.auth.token"}},
		{"a URL above the token", func(m map[string]any) { m["sink"].(map[string]any)["url"] = "https://evil.example/v1" },
			[]string{"plugin_config.sink.auth.token"}},
		{"a URL's host", func(m map[string]any) { m["dsn_list"] = []any{"mongodb://u:******@evil/app"} }, []string{"plugin_config.dsn_list[0]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			posted := defaultSecrets.Mask(stored)
			c.change(posted)
			got, missing := defaultSecrets.Unmask(posted, stored)
			if !slices.Equal(missing, c.wantMissing) {
				t.Fatalf("missing = %v, want %v", missing, c.wantMissing)
			}
			if c.wantMissing == nil && (got["password"] != "real" || got["dsn_list"].([]any)[0] != "mongodb://u:pw@m1/app" ||
				got["sink"].(map[string]any)["auth"].(map[string]any)["token"] != "tok") {
				t.Fatalf("not restored: %v", got)
			}
		})
	}
}

// Error texts quoting config documents are masked wherever a secret key appears.
func TestSecretKeysMaskJSON(t *testing.T) {
	doc := `{"key":"k","plugin_config":{"password":"p","list":[{"api_key":"a"}],"token":null,"n":1.50},"streams":[]}`
	want := `{"key":"k","plugin_config":{"password":"******","list":[{"api_key":"******"}],"token":null,"n":1.50},"streams":[]}`
	if got := string(defaultSecrets.MaskJSON([]byte(doc))); got != want {
		t.Errorf("MaskJSON =\n %s\nwant\n %s", got, want)
	}
	if got := string(defaultSecrets.MaskJSON([]byte("not json"))); got != "not json" {
		t.Errorf("non-JSON text: %q", got)
	}
}

// http.secret_keys and http.reveal_secrets: file keys, variables (comma-separated or bracket
// list), defaults, and an empty entry refused naming the key.
func TestSecretSettings(t *testing.T) {
	def, err := config.LoadRuntime("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(def.HTTP.SecretKeys, config.DefaultSecretKeys) || def.HTTP.RevealSecrets || def.HTTP.Secrets() == nil {
		t.Errorf("defaults: %v reveal %v", def.HTTP.SecretKeys, def.HTTP.RevealSecrets)
	}
	for _, env := range []string{"IGGY_CONNECTORS_HTTP_SECRET_KEYS=dsn, pass", "IGGY_CONNECTORS_HTTP_SECRET_KEYS=[dsn, \"pass\"]"} {
		r, err := config.LoadRuntime("", []string{env, "IGGY_CONNECTORS_HTTP_REVEAL_SECRETS=true"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.HTTP.SecretKeys, []string{"dsn", "pass"}) || !r.HTTP.RevealSecrets || r.HTTP.Secrets() != nil {
			t.Errorf("%s: %v reveal %v", env, r.HTTP.SecretKeys, r.HTTP.RevealSecrets)
		}
	}
	r, err := config.ParseRuntime("test", []byte("[http]\nsecret_keys = []\n"), nil)
	if err != nil || len(r.HTTP.Secrets()) != 0 {
		t.Errorf("secret_keys = []: %v, %v; want nothing masked", r.HTTP.SecretKeys, err)
	}
	_, err = config.ParseRuntime("test", []byte("[http]\nsecret_keys = [\"password\", \"\"]\n"), nil)
	if !errors.Is(err, config.ErrInvalidRuntime) || !strings.Contains(err.Error(), "http.secret_keys") {
		t.Errorf("empty entry: %v, want an error naming http.secret_keys", err)
	}
}
