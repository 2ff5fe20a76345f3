package config_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

const ehSinkHead = `type = "sink"
key = "dl"
enabled = true
version = 1
name = "dl"
path = "p"

[[streams]]
stream = "s"
topics = ["t"]
schema = "json"
`

func TestErrorHandlingParsed(t *testing.T) {
	doc := ehSinkHead + `
[error_handling]
tolerance = "all"
max_retries = 2
retry_backoff = "100 ms"
max_retry_backoff = "5 s"
dead_letter_stream = "dlq"
dead_letter_topic = "dl_dlq"
`
	c, err := config.ParseConnector("dl.toml", []byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	e := c.ErrorHandling
	if e == nil || e.Tolerance != config.ToleranceAll || *e.MaxRetries != 2 || *e.RetryBackoff != 100*time.Millisecond ||
		*e.MaxRetryBackoff != 5*time.Second || e.DeadLetterStream != "dlq" || e.DeadLetterTopic != "dl_dlq" || !e.HasDeadLetterTopic() {
		t.Fatalf("error_handling = %+v", e)
	}
	// Written back as TOML and as the JSON document, it reads back equal.
	for _, format := range []string{"toml", "json"} {
		out, err := c.MarshalDocument(format)
		if err != nil {
			t.Fatal(err)
		}
		back, err := config.ParseConnector("back."+format, out, format)
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, out)
		}
		if got, want := back.ErrorHandling.Declared, e.Declared; *got.Tolerance != *want.Tolerance || *got.MaxRetries != *want.MaxRetries ||
			*got.RetryBackoff != *want.RetryBackoff || *got.MaxRetryBackoff != *want.MaxRetryBackoff ||
			*got.DeadLetterStream != *want.DeadLetterStream || *got.DeadLetterTopic != *want.DeadLetterTopic {
			t.Fatalf("%s round trip: %+v", format, back.ErrorHandling)
		}
	}
	// The API answer carries the section as written, after upstream's keys.
	body, _ := c.MarshalJSON()
	want := `"benchmark":false,"error_handling":{"tolerance":"all","max_retries":2,"retry_backoff":"100 ms","max_retry_backoff":"5 s","dead_letter_stream":"dlq","dead_letter_topic":"dl_dlq"}}`
	if !bytes.HasSuffix(body, []byte(want)) {
		t.Fatalf("MarshalJSON = %s\nwant suffix %s", body, want)
	}
	// An HTTP provider's body (no type) takes the section too.
	back, err := config.ParseConnectorBody("provider answer", config.KindSink, body)
	if err != nil || back.ErrorHandling == nil || back.ErrorHandling.DeadLetterTopic != "dl_dlq" {
		t.Fatalf("ParseConnectorBody: %+v, %v", back.ErrorHandling, err)
	}
}

// Without the section nothing changes: no field, no key in any answer.
func TestErrorHandlingAbsent(t *testing.T) {
	c, err := config.ParseConnector("dl.toml", []byte(ehSinkHead), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.ErrorHandling != nil {
		t.Fatalf("error_handling = %+v", c.ErrorHandling)
	}
	body, _ := c.MarshalJSON()
	toml, _ := c.MarshalTOML()
	for _, out := range [][]byte{body, toml, c.VersionJSON(true), c.CreateBodyJSON()} {
		if bytes.Contains(out, []byte("error_handling")) {
			t.Fatalf("an absent section is rendered: %s", out)
		}
	}
	// Only tolerance: the other keys stay absent (the runner keeps its own settings).
	c, err = config.ParseConnector("dl.toml", []byte(ehSinkHead+"[error_handling]\ntolerance = \"all\"\n"), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if e := c.ErrorHandling; e.MaxRetries != nil || e.RetryBackoff != nil || e.MaxRetryBackoff != nil || e.HasDeadLetterTopic() {
		t.Fatalf("error_handling = %+v", e)
	}
}

func TestErrorHandlingRejected(t *testing.T) {
	for _, tc := range []struct{ section, want string }{
		{`tolerance = "some"`, `key error_handling.tolerance: unknown value "some"`},
		{`tolerance = 1`, `key error_handling.tolerance: expected a string`},
		{`max_retries = -1`, `key error_handling.max_retries: expected an unsigned integer`},
		{`retry_backoff = "fast"`, `key error_handling.retry_backoff: invalid duration "fast"`},
		{`retry_backoff = "0"`, `key error_handling.retry_backoff: must be longer than zero`},
		{"retry_backoff = \"2s\"\nmax_retry_backoff = \"1s\"", `key error_handling.max_retry_backoff: 1s is shorter than retry_backoff 2s`},
		{"tolerance = \"all\"\ndead_letter_topic = \"t\"", `key error_handling.dead_letter_stream: required when the other`},
		{"tolerance = \"all\"\ndead_letter_stream = \"\"\ndead_letter_topic = \"t\"", `key error_handling.dead_letter_stream: must be 1 to 255 bytes`},
		{"dead_letter_stream = \"s\"\ndead_letter_topic = \"t\"", `key error_handling.dead_letter_topic: needs tolerance = "all"`},
		{`dead_letter = "x"`, `key error_handling.dead_letter: unknown key`},
	} {
		_, err := config.ParseConnector("conf/dl.toml", []byte(ehSinkHead+"[error_handling]\n"+tc.section+"\n"), "toml")
		if !errors.Is(err, config.ErrInvalidConnector) || !strings.Contains(err.Error(), "conf/dl.toml") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.section, err, tc.want)
		}
	}
	_, err := config.ParseConnector("conf/dl.toml", []byte("error_handling = 3\n"+ehSinkHead), "toml")
	if err == nil || !strings.Contains(err.Error(), "key error_handling: expected a table") {
		t.Errorf("error_handling = 3: %v", err)
	}
}

func TestErrorHandlingEnvOverrides(t *testing.T) {
	c, err := config.ParseConnector("dl.toml", []byte(ehSinkHead), "toml")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"IGGY_CONNECTORS_SINK_DL_ERROR_HANDLING_TOLERANCE=all",
		"IGGY_CONNECTORS_SINK_DL_ERROR_HANDLING_MAX_RETRIES=7",
		"IGGY_CONNECTORS_SINK_DL_ERROR_HANDLING_RETRY_BACKOFF=10ms",
		"IGGY_CONNECTORS_SINK_DL_ERROR_HANDLING_MAX_RETRY_BACKOFF=1s",
		"IGGY_CONNECTORS_SINK_DL_ERROR_HANDLING_DEAD_LETTER_STREAM=dlq",
		"IGGY_CONNECTORS_SINK_DL_ERROR_HANDLING_DEAD_LETTER_TOPIC=t_dlq",
	}
	if w := config.ConnectorEnvWarnings(config.KindSink, "dl", env); len(w) != 0 {
		t.Fatalf("warnings for known variables: %v", w)
	}
	if err := config.ApplyConnectorEnv(&c, env); err != nil {
		t.Fatal(err)
	}
	e := c.ErrorHandling
	if e == nil || e.Tolerance != config.ToleranceAll || *e.MaxRetries != 7 || *e.RetryBackoff != 10*time.Millisecond ||
		*e.MaxRetryBackoff != time.Second || e.DeadLetterStream != "dlq" || e.DeadLetterTopic != "t_dlq" {
		t.Fatalf("error_handling after env = %+v", e)
	}
	bad := []string{"IGGY_CONNECTORS_SINK_DL_ERROR_HANDLING_MAX_RETRIES=many"}
	if err := config.ApplyConnectorEnv(&c, bad); err == nil || !strings.Contains(err.Error(), "IGGY_CONNECTORS_SINK_DL_ERROR_HANDLING_MAX_RETRIES") {
		t.Fatalf("bad override: %v", err)
	}
	bad = []string{"IGGY_CONNECTORS_SINK_DL_ERROR_HANDLING_TOLERANCE=most"}
	if err := config.ApplyConnectorEnv(&c, bad); err == nil || !strings.Contains(err.Error(), "error_handling.tolerance") {
		t.Fatalf("bad override: %v", err)
	}
}
