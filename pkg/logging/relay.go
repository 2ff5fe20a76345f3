package logging

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// KeyConnectorKey is the attribute naming the connector of a line.
const KeyConnectorKey = "connector_key"

// MaxRelayLine bounds one relayed line; the rest of a longer line is dropped
// (the runner is never blocked by it).
const MaxRelayLine = 1 << 20

// crashPrefixes start the lines a Go runtime crash or the runner's last word
// begin with; they and the stack trace after them are errors.
var crashPrefixes = []string{"panic: ", "fatal error: ", "SIGSEGV: ", "SIGABRT: ", runnerproc.FatalPrefix, runnerproc.ConfigErrorPrefix}

// Relay reads a runner's output line by line until EOF and logs every line on
// log, tagged with connector_key = connectorKey. A line the runner wrote as a
// JSON object or as slog text (time=... level=... msg=...) is re-emitted with
// its own time, level, message and attributes; anything else (a crash report,
// a plugin writing to stdout) becomes the message of an info line, or of an
// error line from a crash report on.
func Relay(r io.Reader, log *slog.Logger, connectorKey string) {
	rl := NewRelayer(log, connectorKey)
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) <= MaxRelayLine {
				long = append(long, chunk...)
			}
			continue
		}
		line := chunk
		if long != nil {
			if len(long)+len(chunk) <= MaxRelayLine {
				long = append(long, chunk...)
			}
			line, long = long, nil
		}
		rl.Line(string(line))
		if err != nil {
			return
		}
	}
}

// Relayer relays the lines of one runner process, one call per line, for a
// caller that splits the output itself. It remembers that a crash report has
// started, so the stack trace after "panic: ..." is logged as errors too.
// Use one Relayer per process and output stream, from one goroutine.
type Relayer struct {
	log     *slog.Logger
	key     string
	crashed bool
	also    func(Line) // every line as read, before the filter (SetAlso)
}

// SetAlso hands every line the relayer reads to f as well, with its time (now when the line had
// none) and level, whatever the filter keeps: the supervisor keeps each connector's recent lines
// (a Ring) this way. f runs on the relaying goroutine and must not block.
func (rl *Relayer) SetAlso(f func(Line)) { rl.also = f }

// NewRelayer returns a Relayer logging on log with connector_key = connectorKey.
func NewRelayer(log *slog.Logger, connectorKey string) *Relayer {
	return &Relayer{log: log, key: connectorKey}
}

// Line logs one output line (a trailing newline is ignored; an empty line
// is skipped). The line's own connector_key, if any, is replaced.
func (rl *Relayer) Line(line string) {
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return
	}
	p, ok := ParseLine([]byte(line))
	if !ok {
		p = Line{Level: slog.LevelInfo, Message: strings.ToValidUTF8(line, "\uFFFD")}
		for _, pre := range crashPrefixes {
			if strings.HasPrefix(line, pre) {
				rl.crashed = true
			}
		}
		if rl.crashed {
			p.Level = slog.LevelError
		}
	}
	if p.Time.IsZero() {
		p.Time = time.Now()
	}
	if rl.also != nil {
		rl.also(p)
	}
	ctx := context.Background()
	h := rl.log.Handler()
	if !h.Enabled(ctx, p.Level) {
		return
	}
	t := p.Time
	rec := slog.NewRecord(t, p.Level, p.Message, 0)
	rec.AddAttrs(slog.String(KeyConnectorKey, rl.key))
	for _, a := range p.Attrs {
		if a.Key != KeyConnectorKey {
			rec.AddAttrs(a)
		}
	}
	_ = h.Handle(ctx, rec)
}

// Line is one structured log line read back.
type Line struct {
	Time    time.Time // zero when the line has none
	Level   slog.Level
	Message string
	Attrs   []slog.Attr // in the order written, without time, level and msg
}

// ParseLine reads a line written by slog's JSON or text handler (this
// package's included). ok is false when it is neither, or has no message.
func ParseLine(line []byte) (l Line, ok bool) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return parseJSONLine(trimmed)
	}
	if bytes.HasPrefix(trimmed, []byte("time=")) || bytes.HasPrefix(trimmed, []byte("level=")) {
		return parseTextLine(string(trimmed))
	}
	return Line{}, false
}

func parseJSONLine(b []byte) (Line, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Line{}, false
	}
	var l Line
	hasMsg := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Line{}, false
		}
		key, _ := tok.(string)
		v, err := jsonValue(dec, 0)
		if err != nil {
			return Line{}, false
		}
		switch key {
		case slog.TimeKey:
			if s, ok := v.Any().(string); ok && v.Kind() == slog.KindString {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					l.Time = t
					continue
				}
			}
		case slog.LevelKey:
			if v.Kind() == slog.KindString {
				if lvl, ok := parseLevelName(v.String()); ok {
					l.Level = lvl
					continue
				}
			}
		case slog.MessageKey:
			if v.Kind() == slog.KindString {
				l.Message, hasMsg = v.String(), true
				continue
			}
		}
		l.Attrs = append(l.Attrs, slog.Attr{Key: key, Value: v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return Line{}, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Line{}, false // something after the object: not one of ours
	}
	return l, hasMsg
}

// maxJSONDepth bounds nesting so a hostile line cannot exhaust the stack.
const maxJSONDepth = 32

var errTooDeep = errors.New("json nested too deeply")

// jsonValue reads the next value: objects become groups (order kept),
// arrays a []any, numbers int64 or float64.
func jsonValue(dec *json.Decoder, depth int) (slog.Value, error) {
	if depth > maxJSONDepth {
		return slog.Value{}, errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return slog.Value{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var attrs []slog.Attr
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return slog.Value{}, err
				}
				key, _ := kt.(string)
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return slog.Value{}, err
				}
				attrs = append(attrs, slog.Attr{Key: key, Value: v})
			}
			if _, err := dec.Token(); err != nil {
				return slog.Value{}, err
			}
			return slog.GroupValue(attrs...), nil
		case '[':
			items := []any{}
			for dec.More() {
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return slog.Value{}, err
				}
				items = append(items, plain(v))
			}
			if _, err := dec.Token(); err != nil {
				return slog.Value{}, err
			}
			return slog.AnyValue(items), nil
		}
		return slog.Value{}, errors.New("unexpected delimiter")
	case string:
		return slog.StringValue(t), nil
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return slog.Int64Value(i), nil
		}
		if f, err := t.Float64(); err == nil {
			return slog.Float64Value(f), nil
		}
		return slog.StringValue(t.String()), nil
	case bool:
		return slog.BoolValue(t), nil
	case nil:
		return slog.AnyValue(nil), nil
	}
	return slog.Value{}, errors.New("unexpected token")
}

// plain turns a value inside an array back into a Go value the JSON
// handler writes as it was read.
func plain(v slog.Value) any {
	if v.Kind() != slog.KindGroup {
		return v.Any()
	}
	m := map[string]any{}
	for _, a := range v.Group() {
		m[a.Key] = plain(a.Value)
	}
	return m
}

// parseTextLine reads slog's text format: key=value pairs separated by
// spaces, values quoted Go-style when they need it.
func parseTextLine(s string) (Line, bool) {
	var l Line
	hasMsg := false
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			break
		}
		key, rest, found := strings.Cut(s, "=")
		if !found || key == "" || strings.ContainsAny(key, " \"") {
			return Line{}, false
		}
		var val string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return Line{}, false
			}
			val, _ = strconv.Unquote(q)
			rest = rest[len(q):]
			if rest != "" && rest[0] != ' ' {
				return Line{}, false
			}
		} else {
			val, rest, _ = strings.Cut(rest, " ")
		}
		s = rest
		val = strings.ToValidUTF8(val, "\uFFFD")
		switch key {
		case slog.TimeKey:
			if t, err := time.Parse(time.RFC3339Nano, val); err == nil {
				l.Time = t
				continue
			}
		case slog.LevelKey:
			if lvl, ok := parseLevelName(val); ok {
				l.Level = lvl
				continue
			}
		case slog.MessageKey:
			l.Message, hasMsg = val, true
			continue
		}
		if !utf8.ValidString(key) {
			return Line{}, false
		}
		l.Attrs = append(l.Attrs, textAttr(key, val))
	}
	return l, hasMsg
}

// textAttr types a text value back: integers, floats and booleans as such,
// anything else a string.
func textAttr(key, val string) slog.Attr {
	if i, err := strconv.ParseInt(val, 10, 64); err == nil {
		return slog.Int64(key, i)
	}
	if val == "true" || val == "false" {
		return slog.Bool(key, val == "true")
	}
	if f, err := strconv.ParseFloat(val, 64); err == nil && strings.ContainsAny(val, ".eE") && !strings.ContainsAny(val, "xXnN") {
		return slog.Float64(key, f)
	}
	return slog.String(key, val)
}

// parseLevelName reads "TRACE" or anything slog.Level parses ("INFO",
// "warn", "DEBUG+2").
func parseLevelName(s string) (slog.Level, bool) {
	if strings.EqualFold(s, "TRACE") {
		return LevelTrace, true
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, false
	}
	return l, true
}
