package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The drop logger writes at most one warning per interval; each warning counts the drops that got
// none since the previous one, and names the message it is about.
func TestDropLoggerRateLimitsWarnings(t *testing.T) {
	steps := []struct {
		at             time.Duration // since the first drop
		offset         uint64
		wantWarning    bool
		wantSuppressed int // on the warning, when one is written
	}{
		{0, 10, true, 0},
		{100 * time.Millisecond, 11, false, 0},
		{500 * time.Millisecond, 12, false, 0},
		{999 * time.Millisecond, 13, false, 0},
		{time.Second, 14, true, 3},
		{1500 * time.Millisecond, 15, false, 0},
		{5 * time.Second, 16, true, 1},
		{6 * time.Second, 17, true, 0},
	}
	var out bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&out, nil)) // info: the debug lines of suppressed drops are off
	d := newDropLogger(log, time.Second)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var now time.Time
	d.now = func() time.Time { return now }

	for _, s := range steps {
		out.Reset()
		now = start.Add(s.at)
		wrote := d.dropped(droppedMessage{Stage: "decode", Stream: "shop", Topic: "orders", PartitionID: 2, Offset: s.offset, Err: errors.New("bad json")})
		if wrote != s.wantWarning {
			t.Fatalf("drop at %s: warning written = %v, want %v", s.at, wrote, s.wantWarning)
		}
		if !s.wantWarning {
			if out.Len() != 0 {
				t.Fatalf("drop at %s: suppressed, yet wrote %s", s.at, out.String())
			}
			continue
		}
		var line struct {
			Level, Msg, Stage, Stream, Topic, Error string
			PartitionID                             uint32 `json:"partition_id"`
			Offset                                  uint64
			Suppressed                              int
		}
		if err := json.Unmarshal(out.Bytes(), &line); err != nil {
			t.Fatalf("drop at %s: %v: %s", s.at, err, out.String())
		}
		if line.Level != "WARN" || line.Stage != "decode" || line.Stream != "shop" || line.Topic != "orders" ||
			line.PartitionID != 2 || line.Offset != s.offset || line.Error != "bad json" || line.Suppressed != s.wantSuppressed {
			t.Fatalf("drop at %s: warning %s; want offset %d and suppressed=%d", s.at, out.String(), s.offset, s.wantSuppressed)
		}
	}
}

// With debug enabled, a drop whose warning is suppressed still gets its own debug line.
func TestDropLoggerDebugLinesForSuppressedDrops(t *testing.T) {
	var out bytes.Buffer
	d := newDropLogger(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})), time.Hour)
	for off := range uint64(3) {
		d.dropped(droppedMessage{Stage: "transform", Stream: "s", Topic: "t", Offset: off, Err: errors.New("no field")})
	}
	text := out.String()
	if strings.Count(text, "level=WARN") != 1 || strings.Count(text, "level=DEBUG") != 2 ||
		!strings.Contains(text, "offset=1") || !strings.Contains(text, "offset=2") {
		t.Fatalf("want one warning then a debug line each for offsets 1 and 2:\n%s", text)
	}
}

// BenchmarkDropLoggerFlood is the cost per dropped message during a flood at info level: all but
// one per second are counted, not written.
func BenchmarkDropLoggerFlood(b *testing.B) {
	var out bytes.Buffer
	d := newDropLogger(slog.New(slog.NewTextHandler(&out, nil)), time.Second)
	m := droppedMessage{Stage: "decode", Stream: "shop", Topic: "orders", Offset: 7, Err: errors.New("bad json")}
	b.ReportAllocs()
	for b.Loop() {
		d.dropped(m)
	}
}
