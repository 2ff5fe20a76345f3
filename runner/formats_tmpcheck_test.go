package runner_test

import (
	"path/filepath"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

func TestTmpSourceDeclaresAvro(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("fmt", map[string]uint32{"avro": 1}))
	env := baseEnv(srv, t.TempDir())
	lib := probeLibrary(t)
	source := testkit.StartRunner(t, withConfig(env, probeSourceTOML(t, lib, "fmt", "avro", "avro", `avro_schema_json = '"long"'`, 5, [][]byte{{0x02}}, "")))
	out := filepath.Join(t.TempDir(), "received")
	sink := testkit.StartRunner(t, withConfig(env, probeSinkTOML(lib, "fmt", "avro", "avro", `avro_schema_json = '"long"'`, out, "")))
	got := waitReceived(t, out, 1, source, sink)
	t.Logf("%+v", got)
}
