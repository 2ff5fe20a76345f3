package supervisor

import (
	"io"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
)

// BenchmarkRelayRunnerLine is the supervisor's cost per runner output line: parse the runner's JSON
// record and print it in the supervisor's format, tagged with the connector key.
func BenchmarkRelayRunnerLine(b *testing.B) {
	const line = `{"time":"2026-11-30T01:13:41.055094927Z","level":"INFO","msg":"Message offset: 42, payload: Json({\"seq\":42})","connector_key":"out","connector_type":"sink","connector_target":"iggy_connector_stdout_sink"}`
	for _, format := range []string{logging.FormatText, logging.FormatJSON} {
		b.Run(format, func(b *testing.B) {
			logs, err := newLoggers(io.Discard, format, "", nil)
			if err != nil {
				b.Fatal(err)
			}
			relay := logging.NewRelayer(logs.runners, "out")
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				relay.Line(line)
			}
		})
	}
}
