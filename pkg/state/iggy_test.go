package state_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/state"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Both backends behave the same through the interface: nothing at first, then the newest save,
// for a later Open and for Load; an empty save is "no state".
func TestBackendsKeepTheNewestState(t *testing.T) {
	srv := testkit.StartBroker(t)
	backends := map[string]func() state.Backend{
		"file": func() state.Backend { return state.FileBackend{Dir: t.TempDir()} },
	}
	for _, p := range testkit.Protocols {
		backends["iggy-"+p] = func() state.Backend {
			return state.IggyBackend{Client: testkit.DialClientOver(t, srv, p), Stream: "connector_state-" + p, Dir: t.TempDir()}
		}
	}
	for name, newBackend := range backends {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			b := newBackend()
			s, data, err := b.Open(ctx, "gen")
			if err != nil || data != nil {
				t.Fatalf("first open: %x, %v", data, err)
			}
			for _, v := range []string{"one", "two", "three"} {
				if err := s.Save(ctx, []byte(v)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := b.Load(ctx, "gen"); err != nil || string(got) != "three" {
				t.Fatalf("load: %q, %v; want three", got, err)
			}
			s, data, err = b.Open(ctx, "gen")
			if err != nil || string(data) != "three" {
				t.Fatalf("second open: %q, %v; want three", data, err)
			}
			if err := s.Save(ctx, nil); err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			if got, err := b.Load(ctx, "gen"); err != nil || got != nil {
				t.Fatalf("load after an empty save: %x, %v; want none", got, err)
			}
			if _, _, err := b.Open(ctx, "a/b"); !errors.Is(err, state.ErrInvalidKey) {
				t.Fatalf("open of key a/b: %v, want ErrInvalidKey", err)
			}
		})
	}
}

// Backend iggy with an empty topic takes the file backend's state from the directory and writes
// it to Iggy; from then on the topic wins, whatever the file says.
func TestIggyBackendMigratesTheStateFile(t *testing.T) {
	testkit.OverProtocols(t, iggyBackendMigratesTheStateFile)
}

func iggyBackendMigratesTheStateFile(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	file, _, err := state.Open(dir, "gen")
	if err != nil {
		t.Fatal(err)
	}
	if err := file.Save([]byte("from-file")); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	client := testkit.DialClientOver(t, srv, protocol)
	b := state.IggyBackend{Client: client, Stream: "connector_state", Dir: dir}
	if got, err := b.Load(ctx, "gen"); err != nil || string(got) != "from-file" {
		t.Fatalf("load before any open (no topic yet): %q, %v; want the file's state", got, err)
	}
	s, data, err := b.Open(ctx, "gen")
	if err != nil || string(data) != "from-file" {
		t.Fatalf("open: %q, %v; want the file's state", data, err)
	}
	if err := s.Save(ctx, []byte("from-iggy")); err != nil {
		t.Fatal(err)
	}
	topic, err := srv.Messages("connector_state", state.TopicName("gen"))
	if err != nil || len(topic) != 2 || !bytes.HasSuffix(topic[0].Payload, []byte("from-file")) || !bytes.HasSuffix(topic[1].Payload, []byte("from-iggy")) {
		t.Fatalf("state topic holds %d messages (%v); want the migrated state, then the new one", len(topic), err)
	}
	// A backend without the directory (another node) reads the same.
	other := state.IggyBackend{Client: testkit.DialClientOver(t, srv, protocol), Stream: "connector_state", Dir: t.TempDir() + "/missing"}
	if _, data, err := other.Open(ctx, "gen"); err != nil || string(data) != "from-iggy" {
		t.Fatalf("open elsewhere: %q, %v; want from-iggy", data, err)
	}
}

// A message in the state topic that is not a state record is an error naming the topic, never
// handed to the plugin as state.
func TestIggyBackendRejectsForeignRecords(t *testing.T) {
	srv := testkit.StartBroker(t)
	ctx := testCtx(t)
	client := testkit.DialClient(t, srv)
	b := state.IggyBackend{Client: client, Stream: "connector_state"}
	if _, _, err := b.Open(ctx, "gen"); err != nil {
		t.Fatal(err)
	}
	if err := client.Send(ctx, "connector_state", state.TopicName("gen"), iggyclient.Partitioning{}, []iggyclient.OutMessage{{Payload: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	_, _, err := b.Open(ctx, "gen")
	if !errors.Is(err, state.ErrBadRecord) || !bytes.Contains([]byte(err.Error()), []byte("source_gen")) {
		t.Fatalf("open over a foreign record: %v, want ErrBadRecord naming the topic", err)
	}
}

// Current is Load with the time of the state: the file's modification time while the state is
// only in a file (migration pending), then the server's timestamp of the newest record; no
// state, and a "no state" record, have no time.
func TestIggyBackendCurrentTellsWhenTheStateWasSaved(t *testing.T) {
	testkit.OverProtocols(t, iggyBackendCurrentTellsWhenTheStateWasSaved)
}

func iggyBackendCurrentTellsWhenTheStateWasSaved(t *testing.T, protocol string) {
	srv := testkit.StartBroker(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	b := state.IggyBackend{Client: testkit.DialClientOver(t, srv, protocol), Stream: "connector_state", Dir: dir}
	if data, at, err := b.Current(ctx, "gen"); err != nil || data != nil || !at.IsZero() {
		t.Fatalf("current with no state anywhere: %x at %v, %v; want none", data, at, err)
	}
	if err := state.Replace(dir, "gen", []byte("from-file")); err != nil {
		t.Fatal(err)
	}
	fileTime := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := os.Chtimes(state.Path(dir, "gen"), fileTime, fileTime); err != nil {
		t.Fatal(err)
	}
	if data, at, err := b.Current(ctx, "gen"); err != nil || string(data) != "from-file" || !at.Equal(fileTime) {
		t.Fatalf("current with the state in a file: %q at %v, %v; want from-file at %v", data, at, err, fileTime)
	}
	s, _, err := b.Open(ctx, "gen")
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := s.Save(ctx, []byte("from-iggy")); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	data, at, err := b.Current(ctx, "gen")
	if err != nil || string(data) != "from-iggy" || at.Before(before.Truncate(time.Microsecond)) || at.After(after) {
		t.Fatalf("current after a save between %v and %v: %q at %v, %v; want from-iggy at the save", before, after, data, at, err)
	}
	if err := s.Save(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if data, at, err := b.Current(ctx, "gen"); err != nil || data != nil || !at.IsZero() {
		t.Fatalf("current after an empty save: %x at %v, %v; want none", data, at, err)
	}
}
