package supervisor_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/state"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// producedCount is the count random_source keeps as its state (MessagePack [N], shown as [N]).
func producedCount(t *testing.T, st sourceStateBody) (uint64, bool) {
	t.Helper()
	var n []uint64
	if string(st.StateJSON) == "null" {
		return 0, false
	}
	if err := json.Unmarshal(st.StateJSON, &n); err != nil || len(n) != 1 {
		t.Fatalf("state_json %s is not random_source's [count] (%v)", st.StateJSON, err)
	}
	return n[0], true
}

// stateRecords are the messages of a source's state topic on the iggy backend.
func stateRecords(t *testing.T, broker *devbroker.Server, key string) []devbroker.StoredMessage {
	t.Helper()
	msgs, err := broker.Messages("connector_state", state.TopicName(key))
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func payloads(msgs []devbroker.StoredMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Payload)
	}
	return out
}

// wantUpdatedAt checks updated_at is the time want, to the microsecond.
func wantUpdatedAt(t *testing.T, st sourceStateBody, want time.Time, what string) {
	t.Helper()
	if st.UpdatedAt == nil {
		t.Fatalf("%s: updated_at is null, want %s", what, want.UTC().Format(time.RFC3339Nano))
	}
	at, err := time.Parse(time.RFC3339Nano, *st.UpdatedAt)
	if err != nil || !at.Equal(want) {
		t.Fatalf("%s: updated_at %s (%v), want %s", what, *st.UpdatedAt, err, want.UTC().Format(time.RFC3339Nano))
	}
}

// On [state] backend = "iggy" the source offsets routes read and write the state topic the runner
// uses: GET shows the newest record the running source saved (with the record's time), and once
// stopped a PUT state is where the next start continues and a DELETE makes it start from
// nothing. A source whose state is still only in its file (migration pending) shows the file's
// state, a PUT migrates and supersedes it, and a DELETE removes the file too.
func TestSourceStateOnTheIggyBackend(t *testing.T) {
	testkit.OverProtocols(t, sourceStateOnTheIggyBackend)
}

func sourceStateOnTheIggyBackend(t *testing.T, protocol string) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"numbers": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	// One message per 20 ms (the upper bound of messages_range is exclusive).
	f.write(t, "connectors/gen.toml", sourceFile("gen", f.plugin("random_source"), "demo", "numbers", "")+
		"[plugin_config]\ninterval = \"20ms\"\nmax_count = 1000\nmessages_range = [1, 2]\n")
	f.write(t, "connectors/parked.toml", disabled(sourceFile("parked", f.plugin("random_source"), "demo", "numbers", "")))
	// The state file of a source that ran on the file backend: MessagePack [42].
	f.write(t, "state/source_parked.state", "\x91\x2a")
	fileTime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	parkedFile := filepath.Join(f.dir, "state", "source_parked.state")
	if err := os.Chtimes(parkedFile, fileTime, fileTime); err != nil {
		t.Fatal(err)
	}
	p := testkit.StartSupervisor(t, f.dir, f.env(testkit.ProtocolEnv(protocol), "IGGY_CONNECTORS_STATE_BACKEND=iggy"), waitLong)

	// Migration pending: the file's state, with the file's time.
	st := sourceState(t, p, "parked")
	if string(st.StateJSON) != "[42]" || st.State == nil || *st.State != "kSo=" {
		t.Fatalf("state of the source with only a state file = %+v, want the file's [42]", st)
	}
	wantUpdatedAt(t, st, fileTime, "state from the file")
	call(t, p, http.MethodPut, "/sources/parked/offsets", `{"state_json":[7]}`, http.StatusNoContent)
	if recs := stateRecords(t, broker, "parked"); len(recs) != 2 || string(recs[0].Payload) != "\x01\x91\x2a" || string(recs[1].Payload) != "\x01\x91\x07" {
		t.Fatalf("state topic of parked after PUT: %d records %q; want the migrated [42], then [7]", len(recs), payloads(recs))
	}
	if st := sourceState(t, p, "parked"); string(st.StateJSON) != "[7]" {
		t.Fatalf("state of parked after PUT = %s, want [7]", st.StateJSON)
	}
	call(t, p, http.MethodDelete, "/sources/parked/offsets", "", http.StatusNoContent)
	if st := sourceState(t, p, "parked"); st.State != nil || string(st.StateJSON) != "null" || st.UpdatedAt != nil {
		t.Fatalf("state of parked after DELETE = %+v, want all null", st)
	}
	if _, err := os.Stat(parkedFile); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the state file of parked after DELETE: %v; want it removed", err)
	}

	// Running: the newest record the source saved, its count never ahead of what it sent.
	var running sourceStateBody
	waitFor(t, p, waitLong, "the running source to save a count of 5", func() bool {
		running = sourceState(t, p, "gen")
		n, ok := producedCount(t, running)
		return ok && n >= 5
	})
	n, _ := producedCount(t, running)
	if sent, err := broker.Messages("demo", "numbers"); err != nil || uint64(len(sent)) < n {
		t.Fatalf("state of the running source is [%d] with %d messages sent (%v)", n, len(sent), err)
	}
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		if body := call(t, p, method, "/sources/gen/offsets", `{"state_json":[990]}`, http.StatusConflict); !strings.Contains(body, "connector_not_stopped") {
			t.Errorf("%s on a running source: %s; want connector_not_stopped", method, body)
		}
	}

	// Stopped: the count is what was sent, updated_at the time of the newest record.
	call(t, p, http.MethodPost, "/sources/gen/stop", "", http.StatusNoContent)
	sent, err := broker.Messages("demo", "numbers")
	if err != nil {
		t.Fatal(err)
	}
	stopped := sourceState(t, p, "gen")
	if n, _ := producedCount(t, stopped); n != uint64(len(sent)) {
		t.Fatalf("state of the stopped source = %s with %d messages sent; want the count sent", stopped.StateJSON, len(sent))
	}
	recs := stateRecords(t, broker, "gen")
	wantUpdatedAt(t, stopped, time.UnixMicro(int64(recs[len(recs)-1].Timestamp)), "state of the stopped source")

	// PUT 990 of 1000, start: it continues from there, ten more messages.
	call(t, p, http.MethodPut, "/sources/gen/offsets", `{"state_json":[990]}`, http.StatusNoContent)
	if st := sourceState(t, p, "gen"); string(st.StateJSON) != "[990]" {
		t.Fatalf("state after PUT = %s, want [990]", st.StateJSON)
	}
	call(t, p, http.MethodPost, "/sources/gen/start", "", http.StatusNoContent)
	waitFor(t, p, waitLong, "the state to reach max_count", func() bool { return string(sourceState(t, p, "gen").StateJSON) == "[1000]" })
	call(t, p, http.MethodPost, "/sources/gen/stop", "", http.StatusNoContent)
	after, err := broker.Messages("demo", "numbers")
	if err != nil || len(after)-len(sent) != 10 {
		t.Fatalf("the source sent %d messages (%v) after its state was put to 990 of 1000, want 10", len(after)-len(sent), err)
	}

	// DELETE, start: it counts from 0 again (from 1000 it would send nothing).
	call(t, p, http.MethodDelete, "/sources/gen/offsets", "", http.StatusNoContent)
	if st := sourceState(t, p, "gen"); st.State != nil || st.UpdatedAt != nil {
		t.Fatalf("state after DELETE = %+v, want none", st)
	}
	if recs := stateRecords(t, broker, "gen"); string(recs[len(recs)-1].Payload) != "\x01" {
		t.Fatalf("newest state record after DELETE = %q, want the version byte alone", recs[len(recs)-1].Payload)
	}
	call(t, p, http.MethodPost, "/sources/gen/start", "", http.StatusNoContent)
	waitFor(t, p, waitLong, "the restarted source to save a count of 3", func() bool {
		n, ok := producedCount(t, sourceState(t, p, "gen"))
		return ok && n >= 3
	})
	call(t, p, http.MethodPost, "/sources/gen/stop", "", http.StatusNoContent)
	fresh, err := broker.Messages("demo", "numbers")
	if err != nil {
		t.Fatal(err)
	}
	if st := sourceState(t, p, "gen"); string(st.StateJSON) != "["+strconv.Itoa(len(fresh)-len(after))+"]" {
		t.Fatalf("state after DELETE and start = %s with %d messages sent since, want that count", st.StateJSON, len(fresh)-len(after))
	}
}
