package logging_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// SetFilter changes what every logger built on the handler writes from the next record on: the
// handler itself, loggers made With attributes and in groups, and the output-only copy.
func TestSetFilterReachesEveryDerivedLogger(t *testing.T) {
	var buf bytes.Buffer
	h, err := logging.NewHandler(&buf, logging.Options{Format: "json", Filter: "info", Target: logging.TargetRunner})
	if err != nil {
		t.Fatal(err)
	}
	root := slog.New(h)
	with := root.With("connector_key", "k")
	grouped := root.WithGroup("g")
	output := slog.New(h.OutputOnly())
	plugin := root.With("connector_target", "iggy_connector_fault")
	emit := func(round string) {
		for name, l := range map[string]*slog.Logger{"root": root, "with": with, "grouped": grouped, "output": output, "plugin": plugin} {
			l.Debug(round + " " + name)
		}
	}
	written := func() []string {
		var got []string
		for _, o := range jsonLines(t, buf.String()) {
			got = append(got, fmt.Sprint(o["msg"]))
		}
		buf.Reset()
		return got
	}
	emit("before")
	if got := written(); len(got) != 0 {
		t.Fatalf("debug lines at info: %q", got)
	}
	h.SetFilter(logging.MustParseFilter("debug"))
	if h.Filter().String() != "debug" {
		t.Fatalf("Filter() = %q after SetFilter(debug)", h.Filter())
	}
	emit("after")
	if got := written(); len(got) != 5 {
		t.Fatalf("after SetFilter(debug) %d of 5 loggers wrote their debug line: %q", len(got), got)
	}
	h.SetFilter(logging.MustParseFilter("info,iggy_connector_fault=debug"))
	emit("plugin")
	if got := written(); strings.Join(got, "|") != "plugin plugin" {
		t.Fatalf("a directive for the plugin's own target: %q, want only the plugin's line", got)
	}
}

// Swapping the filter while many goroutines log is safe (go test -race) and every record is
// judged by one filter, whole.
func TestSetFilterWhileLogging(t *testing.T) {
	h, err := logging.NewHandler(&bytes.Buffer{}, logging.Options{Format: "text", Filter: "info"})
	if err != nil {
		t.Fatal(err)
	}
	l := slog.New(h.OutputOnly())
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 2000 {
				l.Debug("line", "g", i, "j", j)
			}
		}()
	}
	for i := range 200 {
		if i%2 == 0 {
			h.SetFilter(logging.MustParseFilter("trace"))
		} else {
			h.SetFilter(logging.MustParseFilter("warn,connector=debug"))
		}
	}
	wg.Wait()
}
