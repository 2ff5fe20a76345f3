package provider

import (
	"encoding/json"
	"testing"
)

// FuzzExtract feeds arbitrary config API answers through response
// extraction: it must never panic, and what it returns must be JSON.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`{"result":{"payload":{"sinks":{}},"error":null}}`), "result.payload", "result.error")
	f.Add([]byte(`{"items":[1,{"a":2}]}`), "items.1.a", "")
	f.Add([]byte(`{"error":"boom"}`), "", "error")
	f.Add([]byte(`[`), "0", "")
	f.Fuzz(func(t *testing.T, body []byte, dataPath, errorPath string) {
		out, err := extract(body, dataPath, errorPath, func(b []byte) string { return string(b) })
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("extract returned invalid JSON %q", out)
		}
	})
}
