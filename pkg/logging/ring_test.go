package logging_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

var secrets = config.SecretKeys(config.DefaultSecretKeys)

func record(level slog.Level, msg string) logging.Record {
	return logging.NewRecord(time.Now(), level, msg, nil, logging.OriginRunner, logging.TargetRunner, nil)
}

func decode(t *testing.T, e logging.Entry) logging.Record {
	t.Helper()
	var r logging.Record
	if err := json.Unmarshal(e.JSON, &r); err != nil {
		t.Fatalf("entry %s: %v", e.JSON, err)
	}
	return r
}

func TestRingKeepsTheLastRecords(t *testing.T) {
	r := logging.NewRing(3, 1<<20)
	for i := range 10 {
		r.Add(record(slog.LevelInfo, "m"+strconv.Itoa(i)))
	}
	got := r.Tail(0, logging.LevelTrace)
	if len(got) != 3 || decode(t, got[0]).Message != "m7" || decode(t, got[2]).Message != "m9" || got[2].Seq != 10 {
		t.Fatalf("kept %d records: %s .. %s", len(got), got[0].JSON, got[len(got)-1].JSON)
	}
	if n, _ := r.Size(); n != 3 {
		t.Fatalf("Size %d", n)
	}
}

func TestRingBoundsItsBytes(t *testing.T) {
	r := logging.NewRing(1000, 2000)
	for i := range 500 {
		r.Add(record(slog.LevelInfo, strings.Repeat("x", 100)+strconv.Itoa(i)))
		if _, b := r.Size(); b > 2000 {
			t.Fatalf("after %d records the ring holds %d bytes, over its bound of 2000", i+1, b)
		}
	}
	got := r.Tail(0, logging.LevelTrace)
	if len(got) == 0 || len(got) > 20 || !strings.HasSuffix(decode(t, got[len(got)-1]).Message, "499") {
		t.Fatalf("%d records kept, last %s", len(got), got[len(got)-1].JSON)
	}
	// One record larger than the bound: cut, not allowed to empty the ring of everything else.
	r.Add(record(slog.LevelError, strings.Repeat("é", 50_000)))
	last := r.Tail(1, logging.LevelTrace)[0]
	rec := decode(t, last)
	if len(last.JSON) > 2000 || rec.Fields["truncated"] != true || rec.Level != "ERROR" {
		t.Fatalf("a huge record kept as %d bytes: %.200s", len(last.JSON), last.JSON)
	}
	if nothing := logging.NewRing(0, 100); true {
		nothing.Add(record(slog.LevelInfo, "x"))
		if n, _ := nothing.Size(); n != 0 {
			t.Fatal("a ring of 0 records kept one")
		}
	}
}

func TestRingTailAfterAndChanged(t *testing.T) {
	r := logging.NewRing(100, 1<<20)
	for i, l := range []slog.Level{slog.LevelDebug, slog.LevelWarn, slog.LevelInfo, slog.LevelError, logging.LevelTrace} {
		r.Add(record(l, strconv.Itoa(i)))
	}
	warn := r.Tail(0, slog.LevelWarn)
	if len(warn) != 2 || decode(t, warn[0]).Level != "WARN" || decode(t, warn[1]).Level != "ERROR" {
		t.Fatalf("warn and above: %d", len(warn))
	}
	if last2 := r.Tail(2, logging.LevelTrace); len(last2) != 2 || decode(t, last2[0]).Message != "3" {
		t.Fatalf("tail 2: %v", last2)
	}
	_, seq := r.After(0, logging.LevelTrace)
	changed := r.Changed()
	select {
	case <-changed:
		t.Fatal("changed before a record was added")
	default:
	}
	r.Add(record(slog.LevelInfo, "new"))
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("Changed not closed by Add")
	}
	got, next := r.After(seq, logging.LevelTrace)
	if len(got) != 1 || decode(t, got[0]).Message != "new" || next != seq+1 {
		t.Fatalf("after %d: %d records, next %d", seq, len(got), next)
	}
}

func TestRecordShapeAndMasking(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	rec := logging.NewRecord(at, slog.LevelWarn+1, "dial postgres://u:pw@db:5432/x", []slog.Attr{
		slog.String("connector_key", "pg"), slog.String("connector_type", "sink"),
		slog.String("password", "hunter2"), slog.String("url", "https://a:b@h/"), slog.Int("n", 3),
		slog.Any("error", errors.New("token=abc at https://x:y@h")), slog.Group("db", slog.String("api_key", "k"), slog.Bool("ok", true)),
		slog.String("connector_target", "my_plugin::sink"),
	}, logging.OriginRunner, logging.TargetRunner, secrets)
	want := `{"time":"2026-01-02T02:04:05.000000006Z","level":"WARN","target":"my_plugin::sink",` +
		`"message":"dial postgres://u:******@db:5432/x","fields":{"db":{"api_key":"******","ok":true},` +
		`"error":"token=abc at https://x:******@h","n":3,"password":"******","url":"https://a:******@h/"},"origin":"plugin"}`
	if got := string(rec.JSON()); got != want {
		t.Fatalf("record\n got %s\nwant %s", got, want)
	}
	// The startup line's runtime keys are kept as that line shows them, names like secrets or not.
	startup := logging.NewRecord(at, slog.LevelInfo, "effective runtime configuration", []slog.Attr{slog.Any("config", config.DefaultRuntime())},
		logging.OriginRunner, logging.TargetRunner, secrets)
	for _, want := range []string{`"http.secret_keys":["password",`, `"http.reveal_secrets":false`, `"http.cors.allow_credentials":false`} {
		if !strings.Contains(string(startup.JSON()), want) {
			t.Fatalf("startup record lacks %s:\n%s", want, startup.JSON())
		}
	}
	if rec := logging.NewRecord(at, slog.LevelInfo, "m", []slog.Attr{slog.String("target", "iggy_connectors::x")}, logging.OriginSupervisor, logging.TargetRuntime, nil); rec.Target != "iggy_connectors::x" || rec.Origin != logging.OriginSupervisor || len(rec.Fields) != 0 {
		t.Fatalf("target attribute: %+v", rec)
	}
	for in, want := range map[string]slog.Level{"TRACE": logging.LevelTrace, "debug": slog.LevelDebug, "Info": slog.LevelInfo, "warning": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := logging.ParseRecordLevel(in); err != nil || got != want {
			t.Errorf("ParseRecordLevel(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := logging.ParseRecordLevel("loud"); err == nil || !strings.Contains(err.Error(), "warn") {
		t.Errorf("ParseRecordLevel(loud): %v", err)
	}
}

// A RingHandler among a Handler's extra handlers keeps what the handler writes: the same records,
// attributes and groups, whatever the filter lets through.
func TestRingHandlerKeepsWhatTheLoggerWrites(t *testing.T) {
	ring := logging.NewRing(100, 1<<20)
	var out bytes.Buffer
	h, err := logging.NewHandler(&out, logging.Options{Format: "json", Filter: "info", Target: logging.TargetRunner,
		Attrs: []slog.Attr{slog.String("connector_key", "pg")},
		Also:  []slog.Handler{logging.NewRingHandler(ring, logging.OriginRunner, logging.TargetRunner, secrets)}})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(h).With("stage", "poll").WithGroup("batch")
	log.Debug("filtered out")
	log.Info("polled", "count", 5, "secret", "s")
	slog.New(h).Warn("plugin line", "connector_target", "p")
	got := ring.Tail(0, logging.LevelTrace)
	if len(got) != 2 || strings.Count(out.String(), "\n") != 2 {
		t.Fatalf("ring %d records, output %d lines; want 2 and 2", len(got), strings.Count(out.String(), "\n"))
	}
	first := decode(t, got[0])
	if first.Message != "polled" || first.Fields["stage"] != "poll" || first.Target != logging.TargetRunner || first.Origin != logging.OriginRunner {
		t.Fatalf("first %s", got[0].JSON)
	}
	if b, _ := first.Fields["batch"].(map[string]any); b["count"] != float64(5) || b["secret"] != config.MaskedValue {
		t.Fatalf("group: %s", got[0].JSON)
	}
	if second := decode(t, got[1]); second.Origin != logging.OriginPlugin || second.Target != "p" {
		t.Fatalf("plugin line %s", got[1].JSON)
	}
}

func TestRelayerHandsEveryLineOnWhateverTheFilter(t *testing.T) {
	var out bytes.Buffer
	log, err := logging.New(&out, "text", "warn")
	if err != nil {
		t.Fatal(err)
	}
	rl := logging.NewRelayer(log, "pg")
	var lines []logging.Line
	rl.SetAlso(func(l logging.Line) { lines = append(lines, l) })
	rl.Line(`{"time":"2026-01-02T03:04:05.5Z","level":"INFO","msg":"sink running","n":1}`)
	rl.Line("panic: boom")
	rl.Line("goroutine 1 [running]:")
	if len(lines) != 3 || lines[0].Message != "sink running" || lines[0].Level != slog.LevelInfo || lines[0].Time.IsZero() ||
		lines[1].Level != slog.LevelError || lines[2].Level != slog.LevelError || lines[2].Time.IsZero() {
		t.Fatalf("lines handed on: %+v", lines)
	}
	if strings.Contains(out.String(), "sink running") || !strings.Contains(out.String(), "boom") {
		t.Fatalf("the filter still decides what is logged:\n%s", out.String())
	}
}
