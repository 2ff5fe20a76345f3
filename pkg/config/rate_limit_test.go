package config_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

func TestRateLimitParsedAndRenderedAsWritten(t *testing.T) {
	doc := ehSinkHead + "\n[rate_limit]\nmessages_per_second = 250\nbytes_per_second = 1.5e6\n"
	c, err := config.ParseConnector("dl.toml", []byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	l := c.RateLimit
	if l == nil || l.MessagesPerSecond == nil || *l.MessagesPerSecond != 250 || l.BytesPerSecond == nil || *l.BytesPerSecond != 1.5e6 {
		t.Fatalf("rate_limit = %+v", l)
	}
	for _, format := range []string{"toml", "json"} {
		out, err := c.MarshalDocument(format)
		if err != nil {
			t.Fatal(err)
		}
		back, err := config.ParseConnector("back."+format, out, format)
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, out)
		}
		if b := back.RateLimit; b == nil || *b.MessagesPerSecond != 250 || *b.BytesPerSecond != 1.5e6 {
			t.Fatalf("%s round trip: %+v\n%s", format, b, out)
		}
	}
	toml, _ := c.MarshalTOML()
	if !bytes.Contains(toml, []byte("\n[rate_limit]\n")) || !bytes.Contains(toml, []byte("\nmessages_per_second = 250\n")) {
		t.Fatalf("TOML rendering keeps the integer as written:\n%s", toml)
	}
	body, _ := c.MarshalJSON()
	want := `"benchmark":false,"rate_limit":{"messages_per_second":250,"bytes_per_second":1500000.0}}`
	if !bytes.HasSuffix(body, []byte(want)) {
		t.Fatalf("MarshalJSON = %s\nwant suffix %s", body, want)
	}
	// The HTTP provider's answer (no type) and its create body carry it too.
	back, err := config.ParseConnectorBody("provider answer", config.KindSink, body)
	if err != nil || back.RateLimit == nil || *back.RateLimit.MessagesPerSecond != 250 {
		t.Fatalf("ParseConnectorBody: %+v, %v", back.RateLimit, err)
	}
	if !bytes.Contains(c.CreateBodyJSON(), []byte(`"rate_limit":{"messages_per_second":250`)) {
		t.Fatalf("create body: %s", c.CreateBodyJSON())
	}
	// Only one key: the other stays absent (no limit on it).
	c, err = config.ParseConnector("dl.toml", []byte(ehSinkHead+"[rate_limit]\nbytes_per_second = 1024\n"), "toml")
	if err != nil || c.RateLimit.MessagesPerSecond != nil || *c.RateLimit.BytesPerSecond != 1024 {
		t.Fatalf("one key: %+v, %v", c.RateLimit, err)
	}
}

// Without the section every rendering is byte for byte what it was.
func TestRateLimitAbsentRendersNothing(t *testing.T) {
	c, err := config.ParseConnector("dl.toml", []byte(ehSinkHead), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.RateLimit != nil {
		t.Fatalf("rate_limit = %+v", c.RateLimit)
	}
	body, _ := c.MarshalJSON()
	toml, _ := c.MarshalTOML()
	for _, out := range [][]byte{body, toml, c.VersionJSON(true), c.CreateBodyJSON()} {
		if bytes.Contains(out, []byte("rate_limit")) {
			t.Fatalf("an absent section is rendered: %s", out)
		}
	}
}

func TestRateLimitRejected(t *testing.T) {
	for _, tc := range []struct{ section, want string }{
		{`messages_per_second = 0`, `key rate_limit.messages_per_second: must be greater than 0`},
		{`messages_per_second = -5`, `key rate_limit.messages_per_second: must be greater than 0`},
		{`bytes_per_second = "fast"`, `key rate_limit.bytes_per_second: expected a number, got a string`},
		{`bytes_per_second = inf`, `key rate_limit.bytes_per_second: must be a finite number`},
		{`messages_per_second = 1e16`, `key rate_limit.messages_per_second: must be at most 1e15`},
		{`messages = 5`, `key rate_limit.messages: unknown key`},
	} {
		_, err := config.ParseConnector("conf/dl.toml", []byte(ehSinkHead+"[rate_limit]\n"+tc.section+"\n"), "toml")
		if !errors.Is(err, config.ErrInvalidConnector) || !strings.Contains(err.Error(), "conf/dl.toml") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.section, err, tc.want)
		}
	}
	_, err := config.ParseConnector("conf/dl.toml", []byte("rate_limit = 3\n"+ehSinkHead), "toml")
	if err == nil || !strings.Contains(err.Error(), "key rate_limit: expected a table") {
		t.Errorf("rate_limit = 3: %v", err)
	}
}

func TestRateLimitEnvOverrides(t *testing.T) {
	c, err := config.ParseConnector("dl.toml", []byte(ehSinkHead), "toml")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"IGGY_CONNECTORS_SINK_DL_RATE_LIMIT_MESSAGES_PER_SECOND=100",
		"IGGY_CONNECTORS_SINK_DL_RATE_LIMIT_BYTES_PER_SECOND=2.5e4",
	}
	if w := config.ConnectorEnvWarnings(config.KindSink, "dl", env); len(w) != 0 {
		t.Fatalf("warnings for known variables: %v", w)
	}
	if err := config.ApplyConnectorEnv(&c, env); err != nil {
		t.Fatal(err)
	}
	if l := c.RateLimit; l == nil || *l.MessagesPerSecond != 100 || *l.BytesPerSecond != 2.5e4 {
		t.Fatalf("rate_limit after env = %+v", l)
	}
	bad := []string{"IGGY_CONNECTORS_SINK_DL_RATE_LIMIT_MESSAGES_PER_SECOND=lots"}
	if err := config.ApplyConnectorEnv(&c, bad); err == nil || !strings.Contains(err.Error(), "rate_limit.messages_per_second: expected a number") {
		t.Fatalf("bad override: %v", err)
	}
}

// The body of a run-time change: the section as a JSON object, or null for the configured one.
func TestParseRateLimitJSON(t *testing.T) {
	l, reset, err := config.ParseRateLimitJSON([]byte(`{"messages_per_second": 50, "bytes_per_second": null}`))
	if err != nil || reset || l == nil || *l.MessagesPerSecond != 50 || l.BytesPerSecond != nil {
		t.Fatalf("object: %+v %v %v", l, reset, err)
	}
	if got := string(config.RateLimitJSON(l)); got != `{"messages_per_second":50.0,"bytes_per_second":null}` {
		t.Fatalf("RateLimitJSON = %s", got)
	}
	if l, reset, err := config.ParseRateLimitJSON([]byte(`{}`)); err != nil || reset || l.MessagesPerSecond != nil || l.BytesPerSecond != nil {
		t.Fatalf("{}: %+v %v %v", l, reset, err)
	}
	if _, reset, err := config.ParseRateLimitJSON([]byte(` null `)); err != nil || !reset {
		t.Fatalf("null: %v %v", reset, err)
	}
	for body, want := range map[string]string{
		`{"messages_per_second": 0}`:  "messages_per_second: must be greater than 0",
		`{"messages": 5}`:             "messages: unknown key",
		`[1]`:                         "expected an object",
		`{"bytes_per_second": "1MB"}`: "bytes_per_second: expected a number",
		`{} {}`:                       "trailing data",
	} {
		if _, _, err := config.ParseRateLimitJSON([]byte(body)); !errors.Is(err, config.ErrBadRateLimit) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
