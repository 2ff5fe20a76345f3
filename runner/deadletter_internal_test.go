package runner

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// A dead letter keeps the record's own headers but not the iggy_dlq_* ones of an earlier
// dead-lettering, and an error text too long for a header is cut on a character boundary.
func TestDeadLetterMessageHeaders(t *testing.T) {
	d := &deadLetterWriter{r: &Runner{spec: &connectorSpec{Key: "k"}}}
	str := func(k, v string) iggyclient.HeaderEntry {
		return iggyclient.HeaderEntry{KeyKind: iggywire.KindString, Key: []byte(k), Kind: iggywire.KindString, Value: []byte(v)}
	}
	long := strings.Repeat("é", 200) // 400 bytes
	msg := d.message(&deadLetter{stage: "decode", err: errors.New(long), stream: "s", topic: "t", payload: []byte("p"),
		headers: []iggyclient.HeaderEntry{str("trace", "1"), str("iggy_dlq_stage", "consume")}}, "42")
	got := map[string]string{}
	for _, h := range msg.Headers {
		if _, dup := got[string(h.Key)]; dup {
			t.Fatalf("header %s twice", h.Key)
		}
		got[string(h.Key)] = string(h.Value)
	}
	if got["trace"] != "1" || got["iggy_dlq_stage"] != "decode" || got["iggy_dlq_timestamp"] != "42" || got["iggy_dlq_connector_key"] != "k" {
		t.Fatalf("headers %v", got)
	}
	if _, ok := got["iggy_dlq_offset"]; ok {
		t.Fatalf("a record without an offset got iggy_dlq_offset: %v", got)
	}
	if e := got["iggy_dlq_error"]; len(e) != 254 || !utf8.ValidString(e) || !strings.HasPrefix(long, e) {
		t.Fatalf("iggy_dlq_error of %d bytes (valid %v)", len(e), utf8.ValidString(e))
	}
}

// Iggy refuses an empty payload: such a record (a source plugin may produce one) is
// dead-lettered with a one-byte stand-in and a header saying so, rather than failing the
// connector on a send that can never succeed.
func TestDeadLetterOfAnEmptyPayload(t *testing.T) {
	d := &deadLetterWriter{r: &Runner{spec: &connectorSpec{Key: "k"}}}
	msg := d.message(&deadLetter{stage: "send", err: errors.New("empty payload"), stream: "s", topic: "t"}, "42")
	if string(msg.Payload) != "\x00" {
		t.Fatalf("payload %q, want the one-byte stand-in", msg.Payload)
	}
	marked := false
	for _, h := range msg.Headers {
		marked = marked || (string(h.Key) == "iggy_dlq_payload_empty" && string(h.Value) == "true")
	}
	if !marked {
		t.Fatalf("no iggy_dlq_payload_empty header: %v", msg.Headers)
	}
	if msg := d.message(&deadLetter{stage: "decode", payload: []byte("p")}, "42"); string(msg.Payload) != "p" {
		t.Fatalf("a non-empty payload changed: %q", msg.Payload)
	}
}
