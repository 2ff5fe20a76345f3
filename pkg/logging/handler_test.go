package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// jsonLines parses every line of out as one JSON object, failing the test on
// any line that is not.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, line)
		}
		objs = append(objs, m)
	}
	return objs
}

func TestJSONEveryLineParses(t *testing.T) {
	var buf bytes.Buffer
	log, err := logging.New(&buf, "json", "trace", slog.String("connector_key", "pg"))
	if err != nil {
		t.Fatal(err)
	}
	awkward := []string{"plain", "two\nlines", "tab\there", `quote " and \ backslash`, "\x00\x1f control", "bad utf8 \xff\xfe", "{\"json\":1}"}
	for _, msg := range awkward {
		log.Info(msg, "value", msg, slog.Group("g", "inner", msg))
	}
	log.Log(t.Context(), logging.LevelTrace, "trace line")

	objs := jsonLines(t, buf.String())
	if len(objs) != len(awkward)+1 {
		t.Fatalf("got %d lines, want %d:\n%s", len(objs), len(awkward)+1, buf.String())
	}
	for i, o := range objs {
		if o["connector_key"] != "pg" {
			t.Errorf("line %d: connector_key = %v, want pg", i+1, o["connector_key"])
		}
	}
	if last := objs[len(objs)-1]; last["level"] != "TRACE" || last["msg"] != "trace line" {
		t.Errorf("trace line = %v, want level TRACE", last)
	}
}

func TestJSONLinesStayWholeUnderConcurrency(t *testing.T) {
	var buf testkit.LogBuffer
	log, err := logging.New(&buf, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				log.Info("batch", "goroutine", g, "i", i, "payload", strings.Repeat("x", 100))
			}
		})
	}
	wg.Wait()
	if n := len(jsonLines(t, buf.String())); n != 8*200 {
		t.Fatalf("got %d lines, want %d", n, 8*200)
	}
}

func TestTargetFiltering(t *testing.T) {
	type emit func(l *slog.Logger)
	tests := []struct {
		name   string
		filter string
		emit   emit
		want   []string // messages written, in order
	}{
		{
			name:   "default target follows the default level",
			filter: "warn",
			emit: func(l *slog.Logger) {
				l.Info("hidden")
				l.Warn("shown")
			},
			want: []string{"shown"},
		},
		{
			name:   "plugin lines are target connector",
			filter: "warn,connector=debug",
			emit: func(l *slog.Logger) {
				l.Debug("plugin debug", "connector_target", "iggy_connector_stdout_sink")
				l.Debug("runtime debug")
				l.Info("runtime info")
			},
			want: []string{"plugin debug"},
		},
		{
			name:   "a target attribute on the record",
			filter: "error,iggy_connectors::benchmark=info",
			emit: func(l *slog.Logger) {
				l.Info("benchmark", "target", logging.TargetBenchmark, "total_us", 12)
				l.Info("other")
			},
			want: []string{"benchmark"},
		},
		{
			name:   "a target given with With",
			filter: "info,iggy_connectors::benchmark=off",
			emit: func(l *slog.Logger) {
				l.With("target", logging.TargetBenchmark).Info("muted")
				l.Info("kept")
			},
			want: []string{"kept"},
		},
		{
			name:   "the runner target is under iggy_connectors",
			filter: "warn,iggy_connectors=debug",
			emit: func(l *slog.Logger) {
				l.Debug("runner debug")
				l.Debug("plugin debug", "connector_target", "x")
			},
			want: []string{"runner debug"},
		},
		{
			name:   "target wins over connector_target",
			filter: "off,special=info",
			emit: func(l *slog.Logger) {
				l.Info("both", "connector_target", "x", "target", "special")
				l.Info("neither", "connector_target", "x")
			},
			want: []string{"both"},
		},
		{
			// A directive naming the plugin's own target judges its lines (as the plugin's
			// RUST_LOG would), more specific than the connector target.
			name:   "a plugin's own target",
			filter: "info,connector=warn,iggy_connector_stdout_sink=trace",
			emit: func(l *slog.Logger) {
				l.Log(context.Background(), logging.LevelTrace, "stdout trace", "connector_target", "iggy_connector_stdout_sink")
				l.Info("other plugin info", "connector_target", "iggy_connector_fault")
				l.Warn("other plugin warn", "connector_target", "iggy_connector_fault")
				l.Debug("runner debug")
			},
			want: []string{"stdout trace", "other plugin warn"},
		},
		{
			name:   "attributes inside a group name no target",
			filter: "off,special=info",
			emit: func(l *slog.Logger) {
				l.WithGroup("g").Info("grouped", "target", "special")
				l.Info("top", "target", "special")
			},
			want: []string{"top"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			h, err := logging.NewHandler(&buf, logging.Options{Format: "json", Filter: tt.filter, Target: logging.TargetRunner})
			if err != nil {
				t.Fatal(err)
			}
			tt.emit(slog.New(h))
			var got []string
			for _, o := range jsonLines(t, buf.String()) {
				got = append(got, fmt.Sprint(o["msg"]))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("written %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAlsoReceivesTheFilteredRecords(t *testing.T) {
	var main, extra bytes.Buffer
	h, err := logging.NewHandler(&main, logging.Options{
		Format: "text",
		Filter: "info",
		Also:   []slog.Handler{nil, slog.NewJSONHandler(&extra, &slog.HandlerOptions{Level: slog.LevelDebug})},
		Attrs:  []slog.Attr{slog.String("connector_key", "k")},
	})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(h).With("connector_type", "sink")
	log.Debug("filtered out")
	log.Info("delivered", "n", 1)

	if !strings.Contains(main.String(), `msg=delivered`) || strings.Contains(main.String(), "filtered out") {
		t.Fatalf("text output = %q", main.String())
	}
	objs := jsonLines(t, extra.String())
	if len(objs) != 1 {
		t.Fatalf("extra handler got %d records, want 1: %s", len(objs), extra.String())
	}
	if o := objs[0]; o["msg"] != "delivered" || o["connector_key"] != "k" || o["connector_type"] != "sink" || o["n"] != 1.0 {
		t.Fatalf("extra handler record = %v", o)
	}
}

func TestTextFormat(t *testing.T) {
	var buf bytes.Buffer
	log, err := logging.New(&buf, "", "trace", slog.String("connector_key", "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	log.Log(t.Context(), logging.LevelTrace, "two\nlines")
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "level=TRACE") || !strings.Contains(out, `msg="two\nlines"`) || !strings.Contains(out, "connector_key=stdout") {
		t.Fatalf("text line = %q", out)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	tests := []struct {
		format, filter string
		want           error
	}{
		{"JSON", "info", logging.ErrBadFormat},
		{"yaml", "info", logging.ErrBadFormat},
		{"json", "runner=verbose", logging.ErrBadFilter},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.filter, func(t *testing.T) {
			_, err := logging.New(&bytes.Buffer{}, tt.format, tt.filter)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestOutputOnlySkipsTheExtraHandlers(t *testing.T) {
	var main, extra bytes.Buffer
	h, err := logging.NewHandler(&main, logging.Options{Format: "json", Also: []slog.Handler{slog.NewJSONHandler(&extra, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	slog.New(h.OutputOnly()).Info("relayed")
	slog.New(h).Info("own")

	var got []string
	for _, o := range jsonLines(t, main.String()) {
		got = append(got, fmt.Sprint(o["msg"]))
	}
	if strings.Join(got, ",") != "relayed,own" {
		t.Errorf("output got %v, want both lines", got)
	}
	if objs := jsonLines(t, extra.String()); len(objs) != 1 || objs[0]["msg"] != "own" {
		t.Errorf("extra handler got %v, want only the own line", objs)
	}
}

func TestLenientFilterFallsBackToInfo(t *testing.T) {
	var buf bytes.Buffer
	h, err := logging.NewHandler(&buf, logging.Options{Format: "json", Filter: "connector=loud", LenientFilter: true})
	if err != nil {
		t.Fatalf("lenient handler refused a bad filter: %v", err)
	}
	log := slog.New(h)
	log.Debug("hidden")
	log.Info("shown")

	objs := jsonLines(t, buf.String())
	if len(objs) != 2 {
		t.Fatalf("got %d lines, want the warning and the info line: %s", len(objs), buf.String())
	}
	if w := objs[0]; w["level"] != "WARN" || w["filter"] != "connector=loud" || !strings.Contains(fmt.Sprint(w["error"]), "unknown level") {
		t.Errorf("warning = %v", w)
	}
	if objs[1]["msg"] != "shown" {
		t.Errorf("second line = %v, want the info line", objs[1])
	}
}
