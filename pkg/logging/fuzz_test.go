package logging_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// FuzzParseLine feeds arbitrary runner output to the relay's parser. It must
// never panic, and a line it accepts must survive being written again by the
// JSON handler and read back (same level and message).
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"time":"2026-01-02T03:04:05.5Z","level":"WARN","msg":"m","a":1,"b":"x"}`,
		`{"msg":"m","g":{"h":{"i":[1,"two",null,{"k":true}]}}}`,
		`{"msg":"m","n":1e400}`,
		`time=2026-01-02T03:04:05.000Z level=ERROR msg="a b" n=3 f=1.5 ok=false`,
		`level=DEBUG msg="line\nbreak" q="say \"hi\""`,
		`panic: boom`,
		"{\"msg\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l, ok := logging.ParseLine(line)
		if !ok {
			return
		}
		var buf bytes.Buffer
		h, err := logging.NewHandler(&buf, logging.Options{Format: "json", Filter: "trace"})
		if err != nil {
			t.Fatal(err)
		}
		rec := slog.NewRecord(l.Time, l.Level, l.Message, 0)
		rec.AddAttrs(l.Attrs...)
		if err := h.Handle(t.Context(), rec); err != nil {
			t.Fatalf("writing the parsed line: %v", err)
		}
		again, ok := logging.ParseLine(bytes.TrimSpace(buf.Bytes()))
		if !ok {
			t.Fatalf("our own JSON line does not parse: %s", buf.Bytes())
		}
		if again.Level != l.Level || again.Message != l.Message {
			t.Fatalf("round trip changed level/message: %v %q -> %v %q", l.Level, l.Message, again.Level, again.Message)
		}
	})
}

// FuzzParseFilter: any RUST_LOG value parses or fails cleanly, and an
// accepted filter rendered with String parses to the same levels.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"info", "warn,connector=debug", "iggy_connector_runner=trace", "a,b=off,,c=5", "x[y]=info"} {
		f.Add(s, "connector")
	}
	f.Fuzz(func(t *testing.T, filter, target string) {
		parsed, err := logging.ParseFilter(filter)
		if err != nil {
			return
		}
		again, err := logging.ParseFilter(parsed.String())
		if err != nil {
			t.Fatalf("String() = %q does not parse: %v", parsed.String(), err)
		}
		if parsed.Level(target) != again.Level(target) {
			t.Fatalf("level of %q changed through String(): %v -> %v", target, parsed.Level(target), again.Level(target))
		}
	})
}
