package dryrun_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/dryrun"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// seedLines are sample lines of every shape, good and bad (the corpus in testdata/fuzz adds more).
var seedLines = []string{
	`{"payload":{"a":1}}`,
	`{"point":"polled","stream":"s","topic":"t","partition":0,"offset":5,"id":"42","timestamp":1700000000000000,"headers":[{"key":"k","kind":"string","value":"v"}],"schema":"json","size":7,"payload":{"a":1}}`,
	`{"payload":"AAE=","encoding":"base64","schema":"avro"}`,
	`{"payload":"héllo","schema":"text","headers":[{"key":1,"key_kind":"uint8","kind":"float64","value":-0.5}]}`,
	`{"payload":1,"headers":[{"key":"/w==","key_kind":"string","key_encoding":"base64","kind":"int128","value":"AA==","encoding":"base64"}]}`,
	`{"payload":1,"id":340282366920938463463374607431768211455}`,
	`{"payload":`, `[]`, `null`, `{}`, `{"payload":1,"headers":[null]}`,
}

// ParseSample never panics, whatever the line, and a sample it accepts always has a payload.
func FuzzParseSample(f *testing.F) {
	for _, l := range seedLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		s, err := dryrun.ParseSample(line, 1)
		if err != nil {
			return
		}
		for schema := postcard.Schema(0); schema.Valid(); schema++ {
			_, _ = s.Payload(schema)
		}
		if _, problems := dryrun.ReadSamples(bytes.NewReader(append(line, '\n'))); len(problems) > 0 {
			t.Fatalf("ParseSample took %q but ReadSamples refused it: %v", line, problems[0])
		}
	})
}

// Any payload and headers pkg/tap renders read back to the same bytes and render again to the
// same line.
func FuzzSampleRoundTrip(f *testing.F) {
	f.Add(uint8(0), []byte(`{"a":[1,"<b>"]}`), []byte("k\x01v"), uint64(1), uint64(2))
	f.Add(uint8(2), []byte("text\n\xff"), []byte("\x05\x0b\x00\x00\x80\x7f"), uint64(0), uint64(0))
	f.Add(uint8(5), []byte{0, 1, 2}, []byte{}, ^uint64(0), ^uint64(0))
	f.Fuzz(func(t *testing.T, schemaIndex uint8, payload, headerBytes []byte, hi, lo uint64) {
		schema := postcard.Schema(schemaIndex % 6)
		roundTrip(t, schema, payload, headersFrom(headerBytes), postcard.Uint128{Hi: hi, Lo: lo})
	})
}

// headersFrom makes a header map of fuzz bytes: each entry is a key kind, a value kind, then a
// key and a value split at the first 0xff byte or after 8 bytes.
func headersFrom(b []byte) postcard.HeaderMap {
	var hs postcard.HeaderMap
	take := func() []byte {
		n := min(len(b), 8)
		if i := bytes.IndexByte(b[:n], 0xff); i >= 0 {
			n = i + 1
		}
		v := b[:n]
		b = b[n:]
		return v
	}
	for len(b) >= 2 && len(hs) < 16 {
		kk, vk := postcard.HeaderKind(b[0]%15), postcard.HeaderKind(b[1]%15)
		b = b[2:]
		hs = append(hs, postcard.HeaderEntry{Key: postcard.HeaderField{Kind: kk, Value: take()}, Value: postcard.HeaderField{Kind: vk, Value: take()}})
	}
	return hs
}

func TestSeedLinesParseOrNameAField(t *testing.T) {
	for _, l := range seedLines {
		if _, err := dryrun.ParseSample([]byte(l), 1); err != nil && !strings.Contains(err.Error(), "line 1: ") {
			t.Errorf("%s: %v", l, err)
		}
	}
}
