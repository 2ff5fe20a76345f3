package runner

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/dryrun"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/transform"
)

// dropTransform drops every message whose payload is JSON holding "drop": no transform of the
// config does that, but the pipeline counts such messages as filtered.
type dropTransform struct{}

func (dropTransform) Name() string { return "drop_test" }
func (dropTransform) Apply(m *codec.Message) (bool, error) {
	text, _ := codec.MarshalJSON(m.Payload.JSON)
	return !bytes.Contains(text, []byte("drop")), nil
}

// A message a transform drops on purpose comes out as filtered, as the sample gave it.
func TestDryRunFiltered(t *testing.T) {
	for _, kind := range []string{"sink", "source"} {
		doc := `type = "` + kind + `"
key = "k"
enabled = true
version = 0
name = "k"
path = "/nowhere/lib.so"
[[streams]]
stream = "s"
topic = "t"
topics = ["t"]
schema = "json"
`
		c, err := config.ParseConnector("k.toml", []byte(doc), "toml")
		if err != nil {
			t.Fatal(err)
		}
		spec, err := buildSpec(c)
		if err != nil {
			t.Fatal(err)
		}
		spec.Transforms = []transform.Transform{dropTransform{}}
		samples, problems := dryrun.ReadSamples(strings.NewReader(`{"payload":{"keep":1}}` + "\n" + `{"payload":{"drop":1},"id":"3"}`))
		if len(problems) > 0 {
			t.Fatal(problems[0])
		}
		var events []tap.Event
		if kind == "sink" {
			events, problems = drySink(spec, samples, nil)
		} else {
			events = drySource(spec, samples, nil)
		}
		if len(problems) > 0 || len(events) != 2 {
			t.Fatalf("%s: events %+v, problems %v", kind, events, problems)
		}
		point := map[string]string{"sink": tap.PointDelivered, "source": tap.PointSent}[kind]
		if events[0].Point != point || events[1].Point != dryrun.PointFiltered || events[1].ID != "3" || string(events[1].Payload) != `{"drop":1}` {
			t.Fatalf("%s: events %+v", kind, events)
		}
	}
}
