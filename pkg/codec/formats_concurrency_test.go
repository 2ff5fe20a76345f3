package codec_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// The format codecs reuse buffers through pools; goroutines sharing one
// codec must still each get their own, intact results.
func TestFormatCodecsAreSafeForConcurrentUse(t *testing.T) {
	avroOpts := codec.Options{"avro_schema_json": `{"type":"record","name":"R","fields":[{"name":"n","type":"long"},{"name":"s","type":"string"}]}`}
	for _, s := range []postcard.Schema{postcard.SchemaAvro, postcard.SchemaProto, postcard.SchemaFlatBuffer} {
		t.Run(s.String(), func(t *testing.T) {
			enc, err := codec.NewEncoder(s, avroOpts)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := codec.NewDecoder(s, avroOpts)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 8 {
				wg.Go(func() {
					// Keep every result and check them all at the end, after
					// the pools have been reused many times.
					type result struct {
						want, text string
						p          codec.Payload
					}
					var results []result
					for i := range 200 {
						want := fmt.Sprintf("g%d-%d", g, i)
						wire, err := enc.Encode(codec.JSONPayload(obj("n", uint64(i), "s", want)))
						if err != nil {
							errs <- err
							return
						}
						p, err := dec.Decode(wire)
						if err != nil {
							errs <- err
							return
						}
						text, _ := codec.MarshalJSON(p.JSON)
						results = append(results, result{want, string(text), p})
					}
					for _, r := range results {
						text, _ := codec.MarshalJSON(r.p.JSON)
						if string(text) != r.text {
							errs <- fmt.Errorf("result for %s changed from %s to %s", r.want, r.text, text)
							return
						}
						if s == postcard.SchemaAvro {
							if got, _ := r.p.JSON.(*codec.OrderedMap).Get("s"); got != r.want {
								errs <- fmt.Errorf("decoded s = %v, want %s", got, r.want)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
