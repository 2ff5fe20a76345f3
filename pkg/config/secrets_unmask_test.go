package config_test

import (
	"reflect"
	"slices"
	"testing"
)

// unmaskStored is a stored plugin_config with secrets at the top, in a table beside another table,
// in an array and in URLs, and the connection targets an attacker would like to change.
func unmaskStored() map[string]any {
	return map[string]any{
		"host": "db.internal", "password": "real", "table": "t", "batch": int64(100), "ratio": 1.0,
		"hosts": []any{"a.internal", "b.internal"},
		"nodes": []any{map[string]any{"addr": "n1", "token": "tn1"}},
		"conn":  map[string]any{"host": "db.internal", "port": int64(5432)},
		"db":    map[string]any{"password": "real2"},
		"dsn":   "mongodb://u:pw@m1/app",
		"hook":  "https://hooks.example.com/services/T0/B0/xK8mR2vQ9pL4nT6wY3zB7cD1",
	}
}

// A masked secret is kept only when everything else in plugin_config is unchanged: the issue's
// bypasses (a changed hosts array, an added ip key, a changed nodes list, a changed sibling table
// next to the secret's table) and every other change are refused, naming each masked secret;
// sending the masked config back as it was keeps every secret, numbers compared by value.
func TestSecretKeysUnmaskOnlyUnchanged(t *testing.T) {
	allMasked := []string{"plugin_config.db.password", "plugin_config.dsn", "plugin_config.hook", "plugin_config.nodes[0].token", "plugin_config.password"}
	cases := []struct {
		name        string
		change      func(m map[string]any)
		wantMissing []string
	}{
		{"nothing changed", func(map[string]any) {}, nil},
		{"a number written as a float", func(m map[string]any) { m["batch"] = 100.0; m["ratio"] = int64(1) }, nil},
		{"the hosts array", func(m map[string]any) { m["hosts"] = []any{"evil.example"} }, allMasked},
		{"an element added to the hosts array", func(m map[string]any) { m["hosts"] = append(m["hosts"].([]any), "evil.example") }, allMasked},
		{"a new ip key", func(m map[string]any) { m["ip"] = "203.0.113.9" }, allMasked},
		{"the nodes list", func(m map[string]any) {
			m["nodes"] = []any{map[string]any{"addr": "evil", "token": "******"}}
		}, allMasked},
		{"a node added", func(m map[string]any) {
			m["nodes"] = append(m["nodes"].([]any), map[string]any{"addr": "evil"})
		}, allMasked},
		{"a sibling table of the secret's table", func(m map[string]any) { m["conn"].(map[string]any)["host"] = "evil.example" }, allMasked},
		{"a key removed", func(m map[string]any) { delete(m, "table") }, allMasked},
		{"a key that names no target", func(m map[string]any) { m["table"] = "other" }, allMasked},
		{"a secret given a new value", func(m map[string]any) { m["db"].(map[string]any)["password"] = "new" },
			[]string{"plugin_config.dsn", "plugin_config.hook", "plugin_config.nodes[0].token", "plugin_config.password"}},
		{"a masked URL pointed elsewhere", func(m map[string]any) { m["dsn"] = "mongodb://u:******@evil/app" }, allMasked},
		{"a masked webhook pointed elsewhere", func(m map[string]any) { m["hook"] = "https://evil.example/services/T0/B0/******" }, allMasked},
		{"a table where a scalar was", func(m map[string]any) { m["table"] = map[string]any{"t": "t"} }, allMasked},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stored := unmaskStored()
			posted := defaultSecrets.Mask(stored)
			c.change(posted)
			before := defaultSecrets.Mask(posted)
			got, missing := defaultSecrets.Unmask(posted, stored)
			if !slices.Equal(missing, c.wantMissing) {
				t.Fatalf("missing = %v, want %v", missing, c.wantMissing)
			}
			if !reflect.DeepEqual(defaultSecrets.Mask(posted), before) {
				t.Fatalf("Unmask changed its input")
			}
			if c.wantMissing != nil {
				if got["password"] != "******" || got["db"].(map[string]any)["password"] == "real2" {
					t.Fatalf("a secret was restored although it must be sent again: %v", got)
				}
				if _, differs := defaultSecrets.Differs(posted, stored); !differs {
					t.Fatalf("Differs found no difference")
				}
				return
			}
			for path, want := range map[string]any{"password": "real", "dsn": "mongodb://u:pw@m1/app",
				"hook": "https://hooks.example.com/services/T0/B0/xK8mR2vQ9pL4nT6wY3zB7cD1"} {
				if got[path] != want {
					t.Errorf("%s = %v, want the stored value", path, got[path])
				}
			}
			if got["db"].(map[string]any)["password"] != "real2" || got["nodes"].([]any)[0].(map[string]any)["token"] != "tn1" {
				t.Errorf("nested secrets not restored: %v", got)
			}
		})
	}
}

// The first previous config the posted one matches gives the secrets; a config without masked
// values is taken as it is, and Differs names the first difference.
func TestSecretKeysUnmaskFromAnOlderVersion(t *testing.T) {
	running := map[string]any{"host": "new.internal", "password": "new"}
	older := map[string]any{"host": "old.internal", "password": "old"}
	posted := map[string]any{"host": "old.internal", "password": "******"}
	got, missing := defaultSecrets.Unmask(posted, running, older)
	if missing != nil || got["password"] != "old" {
		t.Fatalf("Unmask = %v, %v; want the older version's password", got, missing)
	}
	plain := map[string]any{"host": "evil", "password": "mine"}
	if got, missing := defaultSecrets.Unmask(plain, running); missing != nil || !reflect.DeepEqual(got, plain) {
		t.Fatalf("no masked value: %v, %v", got, missing)
	}
	if path, differs := defaultSecrets.Differs(map[string]any{"host": "x", "list": []any{int64(1), int64(2)}},
		map[string]any{"host": "x", "list": []any{int64(1), int64(3)}}); !differs || path != "plugin_config.list[1]" {
		t.Fatalf("Differs = %q, %v", path, differs)
	}
	// A literal "******" at a key that is no secret must simply be equal.
	if _, missing := defaultSecrets.Unmask(map[string]any{"note": "******", "password": "******"},
		map[string]any{"note": "x", "password": "p"}); !slices.Equal(missing, []string{"plugin_config.password"}) {
		t.Fatalf("missing = %v", missing)
	}
}
