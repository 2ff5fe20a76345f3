package runnerproc_test

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// The announcement is always one line, whatever the reason holds (joined errors, TOML messages).
func TestConfigErrorLineIsOneLine(t *testing.T) {
	for reason, want := range map[string]string{
		"bad key":                      "bad key",
		"first\nsecond\r\n\nthird\n":   "first; second; third",
		`schema "xml": unknown schema`: `schema "xml": unknown schema`,
	} {
		if got := runnerproc.ConfigErrorLine(reason); got != runnerproc.ConfigErrorPrefix+want {
			t.Errorf("ConfigErrorLine(%q) = %q, want %q", reason, got, runnerproc.ConfigErrorPrefix+want)
		}
	}
}

func TestCheckLineRoundTrip(t *testing.T) {
	line := runnerproc.CheckLine("streams[0].batch_length", "expected an unsigned integer\ngot -1")
	if line != "streams[0].batch_length: expected an unsigned integer; got -1" {
		t.Fatalf("CheckLine = %q", line)
	}
	if field, msg := runnerproc.ParseCheckLine(line); field != "streams[0].batch_length" || msg != "expected an unsigned integer; got -1" {
		t.Fatalf("ParseCheckLine = %q, %q", field, msg)
	}
}

func TestSecretVar(t *testing.T) {
	for name, want := range map[string]bool{
		"IGGY_CONNECTORS_IGGY_PASSWORD": true, "IGGY_CONNECTORS_IGGY_TOKEN": true, "IGGY_CONNECTORS_HTTP_API_KEY": true,
		"search_api_key": true, runnerproc.EnvConfig: true, "DB_PASSWORD": true,
		runnerproc.EnvConfigPath: false, "IGGY_CONNECTORS_IGGY_USERNAME": false, "TOKEN_FILE": false, "PATH": false, "PASSWORD_HINT": false,
	} {
		if got := runnerproc.SecretVar(name); got != want {
			t.Errorf("SecretVar(%q) = %v, want %v", name, got, want)
		}
	}
}
