package metrics_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

func newPage(t *testing.T, key, kind string) *metrics.Page {
	t.Helper()
	p, err := metrics.CreatePage(filepath.Join(t.TempDir(), "c.stats"), key, kind)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func openPage(t *testing.T, path, key, kind string) *metrics.Page {
	t.Helper()
	p, err := metrics.OpenPage(path, key, kind)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func attach(t *testing.T, reg prometheus.Registerer, p *metrics.Page) *metrics.Connector {
	t.Helper()
	c, err := metrics.AttachConnector(reg, p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// What a runner counts into its mapping of the page, the supervisor's mapping shows: the same
// /stats counters and, rendered, the same /metrics bytes as the runner's own registry serves.
func TestPageShowsWhatTheRunnerCounts(t *testing.T) {
	supervisorSide := newPage(t, "pg_main", metrics.KindSink)
	runnerSide := openPage(t, supervisorSide.Path(), "pg_main", metrics.KindSink)
	reg := prometheus.NewRegistry()
	c := attach(t, reg, runnerSide)
	c.AddConsumed(800)
	c.AddProcessed(795)
	c.AddErrors(5)
	c.ObserveStage(metrics.StageFFI, 250*time.Microsecond)
	c.ObserveStage(metrics.StageFFI, 250*time.Microsecond)
	c.ObserveStage(metrics.StageTotal, 3*time.Second)

	st := supervisorSide.Stats(false)
	if *st.MessagesConsumed != 800 || *st.MessagesProcessed != 795 || st.Errors != 5 || st.PID != int32(os.Getpid()) || st.Status != "starting" {
		t.Errorf("page stats = %+v, want 800 consumed, 795 processed, 5 errors, this pid, starting", st)
	}
	text := sameAsRegistry(t, reg, supervisorSide)
	for _, want := range []string{
		`iggy_connector_messages_consumed_total{connector_key="pg_main",connector_type="sink"} 800`,
		`iggy_connector_stage_duration_seconds_count{connector_key="pg_main",connector_type="sink",stage="ffi"} 2`,
		`iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="total",le="5.0"} 1`,
		`iggy_connector_stage_duration_seconds_bucket{connector_key="pg_main",connector_type="sink",stage="total",le="1.0"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page exposition lacks %s:\n%s", want, text)
		}
	}
}

// sameAsRegistry renders the page's families and fails the test unless they are the bytes the
// runner's registry serves.
func sameAsRegistry(t *testing.T, reg *prometheus.Registry, page *metrics.Page) string {
	t.Helper()
	var fromRunner, fromPage bytes.Buffer
	gathered, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if err := metrics.WriteOpenMetrics(&fromRunner, gathered); err != nil {
		t.Fatal(err)
	}
	if err := metrics.WriteOpenMetrics(&fromPage, page.Families()); err != nil {
		t.Fatal(err)
	}
	if fromRunner.String() != fromPage.String() {
		t.Fatalf("page families differ from the runner's registry\npage:\n%s\nrunner:\n%s", fromPage.String(), fromRunner.String())
	}
	return fromPage.String()
}

// A page holds on to what a runner counted after the runner is gone; the next runner attaching
// counts on from there, its status starting over.
func TestPageCountsOnAcrossRunners(t *testing.T) {
	sup := newPage(t, "gen", metrics.KindSource)
	first := attach(t, nil, openPage(t, sup.Path(), "gen", metrics.KindSource))
	first.AddProduced(100)
	first.AddSent(90)
	first.ObserveStage(metrics.StageIggySend, time.Millisecond)
	first.SetInfo("gen", "0.2.1", true)
	first.SetError("send failed")

	st := sup.Stats(false)
	if st.Status != "error" || st.LastError == nil || st.LastError.Message != "send failed" || st.Version != "0.2.1" || st.VersionSemver == nil {
		t.Errorf("after the first runner failed: %+v, want error \"send failed\", version 0.2.1", st)
	}

	second := attach(t, nil, openPage(t, sup.Path(), "gen", metrics.KindSource))
	second.AddProduced(10)
	second.AddSent(10)
	second.ObserveStage(metrics.StageIggySend, time.Millisecond)
	st = sup.Stats(false)
	if *st.MessagesProduced != 110 || *st.MessagesSent != 100 {
		t.Errorf("counters after a second runner = %d produced, %d sent; want 110, 100", *st.MessagesProduced, *st.MessagesSent)
	}
	if st.Status != "starting" || st.LastError != nil || st.Version != "unknown" {
		t.Errorf("second runner's status = %q, last_error %+v, version %q; want starting, none, unknown", st.Status, st.LastError, st.Version)
	}
	var out bytes.Buffer
	if err := metrics.WriteOpenMetrics(&out, sup.Families()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `iggy_connector_stage_duration_seconds_count{connector_key="gen",connector_type="source",stage="iggy_send"} 2`) {
		t.Errorf("the histogram did not count on across runners:\n%s", out.String())
	}
}

// A page created anew starts from zero: a runner of the previous supervisor that still maps the
// old file cannot write into it.
func TestCreatePageReplacesTheOldFile(t *testing.T) {
	old := newPage(t, "k", metrics.KindSink)
	stale := attach(t, nil, openPage(t, old.Path(), "k", metrics.KindSink))
	stale.AddConsumed(7)
	fresh, err := metrics.CreatePage(old.Path(), "k", metrics.KindSink)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	stale.AddConsumed(1)
	if got := *fresh.Stats(false).MessagesConsumed; got != 0 {
		t.Fatalf("new page consumed = %d, want 0", got)
	}
	if len(fresh.Families()) != 0 {
		t.Fatalf("new page has series: %v", fresh.Families())
	}
}

func TestOpenPageRefusesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := metrics.CreatePage(filepath.Join(dir, "sink.stats"), "pg_main", metrics.KindSink)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	pageBytes, err := os.ReadFile(good.Path())
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	otherVersion := bytes.Clone(pageBytes)
	otherVersion[8] = 99 // the layout version follows the 8-byte magic
	tests := []struct {
		name, path, key, kind string
		want                  string // in the error
	}{
		{"missing file", filepath.Join(dir, "absent"), "pg_main", metrics.KindSink, "no such file"},
		{"too small", write("small", []byte("IGGYCSP")), "pg_main", metrics.KindSink, "7 bytes"},
		{"not a page", write("zeros", make([]byte, len(pageBytes))), "pg_main", metrics.KindSink, "no stats page header"},
		{"another layout version", write("v99", otherVersion), "pg_main", metrics.KindSink, "layout version 99"},
		{"another connector", good.Path(), "other", metrics.KindSink, "belongs to sink/pg_main, not sink/other"},
		{"another kind", good.Path(), "pg_main", metrics.KindSource, "belongs to sink/pg_main, not source/pg_main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := metrics.OpenPage(tt.path, tt.key, tt.kind)
			if err == nil {
				p.Close()
				t.Fatalf("OpenPage accepted %s", tt.path)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name the file and %q", err, tt.want)
			}
			if tt.name != "missing file" && !errors.Is(err, metrics.ErrBadPage) {
				t.Errorf("error %q does not wrap ErrBadPage", err)
			}
		})
	}
}

func TestCreatePageRefusesBadIdentity(t *testing.T) {
	dir := t.TempDir()
	if _, err := metrics.CreatePage(filepath.Join(dir, "a"), "k", "pipe"); !errors.Is(err, metrics.ErrInvalidKind) {
		t.Errorf("kind pipe: %v, want ErrInvalidKind", err)
	}
	if _, err := metrics.CreatePage(filepath.Join(dir, "b"), strings.Repeat("k", 129), metrics.KindSink); err == nil {
		t.Error("a 129-byte key was accepted")
	}
}

// A last_error longer than the page's field is cut at a character boundary; the runner's own
// status keeps it whole.
func TestPageCutsLongLastErrors(t *testing.T) {
	sup := newPage(t, "k", metrics.KindSink)
	c := attach(t, nil, openPage(t, sup.Path(), "k", metrics.KindSink))
	long := strings.Repeat("é", 1500) // 3000 bytes
	c.SetError(long)
	got := sup.Stats(false).LastError
	if got == nil || len(got.Message) != 2048 || !strings.HasPrefix(long, got.Message) {
		t.Fatalf("page last_error = %d bytes, want the first 2048 of the message", len(got.Message))
	}
	if _, le := c.Status(); le.Message != long {
		t.Error("the connector's own last error was cut")
	}
}

func TestHeartbeatAge(t *testing.T) {
	sup := newPage(t, "k", metrics.KindSink)
	if age := sup.HeartbeatAge(); age < time.Hour {
		t.Errorf("a page no runner attached to has heartbeat age %s, want very old", age)
	}
	c := attach(t, nil, openPage(t, sup.Path(), "k", metrics.KindSink))
	// The age grows as time passes without a beat: time passing is what is tested.
	time.Sleep(20 * time.Millisecond)
	if age := sup.HeartbeatAge(); age < 20*time.Millisecond || age > time.Minute {
		t.Errorf("heartbeat age 20ms after attaching = %s", age)
	}
	// Bounded by the time the beat and the read took, however long a loaded machine makes that.
	before := time.Now()
	c.Beat()
	age := sup.HeartbeatAge()
	if took := time.Since(before); age > took {
		t.Errorf("heartbeat age right after a beat = %s, more than the %s since before the beat", age, took)
	}
}

// Every status a runner publishes reads back from the page as it was written, paused (appended
// to the stored list, docs/architecture.md, decision 13) included.
func TestPageCarriesEveryStatus(t *testing.T) {
	sup := newPage(t, "gen", metrics.KindSource)
	if got := sup.Status(); got != "" {
		t.Errorf("Status of a page nothing was published in = %q, want \"\"", got)
	}
	runner := attach(t, nil, openPage(t, sup.Path(), "gen", metrics.KindSource))
	for _, status := range []string{metrics.StatusRunning, metrics.StatusPaused, metrics.StatusStopping, metrics.StatusStopped, metrics.StatusStarting} {
		runner.SetStatus(status)
		if got := sup.Stats(false).Status; got != status {
			t.Errorf("published %q, the page reads %q", status, got)
		}
		if got := sup.Status(); got != status {
			t.Errorf("published %q, Status reads %q", status, got)
		}
	}
}
