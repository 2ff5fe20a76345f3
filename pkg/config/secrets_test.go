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
