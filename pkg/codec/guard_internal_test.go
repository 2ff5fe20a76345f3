package codec

import (
	"errors"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/panicerr"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
)

// panicking is a codec with a bug: it panics on every input.
type panicking struct{}

func (panicking) Schema() postcard.Schema        { return postcard.SchemaRaw }
func (panicking) Decode([]byte) (Payload, error) { panic("decoder bug") }
func (panicking) Encode(Payload) ([]byte, error) { panic("encoder bug") }

// What NewDecoder and NewEncoder hand out turns a panic of the codec into an error.
func TestGuardedCodecsReturnPanicsAsErrors(t *testing.T) {
	dec, _ := guardDecoder(panicking{}, nil)
	if _, err := dec.Decode([]byte{1}); !errors.Is(err, panicerr.ErrPanic) || !strings.Contains(err.Error(), "decoder bug") {
		t.Errorf("Decode: err = %v, want the panic as an error", err)
	}
	enc, _ := guardEncoder(panicking{}, nil)
	if _, err := enc.Encode(RawPayload(nil)); !errors.Is(err, panicerr.ErrPanic) || !strings.Contains(err.Error(), "encoder bug") {
		t.Errorf("Encode: err = %v, want the panic as an error", err)
	}
	avroOpts := Options{"avro_schema_json": `"string"`}
	for _, s := range []postcard.Schema{postcard.SchemaJSON, postcard.SchemaRaw, postcard.SchemaText, postcard.SchemaProto, postcard.SchemaFlatBuffer, postcard.SchemaAvro} {
		var opts Options
		if s == postcard.SchemaAvro {
			opts = avroOpts
		}
		textCodec := s == postcard.SchemaProto || s == postcard.SchemaAvro
		d, err := NewDecoder(s, opts)
		_, guarded := d.(guardedDecoder)
		_, guardedText := d.(guardedTextDecoder)
		if err != nil || !(guarded || guardedText) {
			t.Errorf("NewDecoder(%s) = %T, %v; want a guarded decoder", s, d, err)
		}
		// A decoder that writes JSON text keeps doing so behind its guard (the sink's fast path).
		if _, text := d.(JSONTextDecoder); text != textCodec {
			t.Errorf("NewDecoder(%s) is a JSONTextDecoder: %v, want %v", s, text, textCodec)
		}
		e, err := NewEncoder(s, opts)
		_, guarded = e.(guardedEncoder)
		_, guardedText = e.(guardedTextEncoder)
		_, guardedJSON := e.(guardedJSONEncoder)
		if err != nil || !(guarded || guardedText || guardedJSON) {
			t.Errorf("NewEncoder(%s) = %T, %v; want a guarded encoder", s, e, err)
		}
		// An encoder that takes JSON text keeps doing so behind its guard (the source's fast paths).
		if _, text := e.(JSONTextEncoder); text != textCodec {
			t.Errorf("NewEncoder(%s) is a JSONTextEncoder: %v, want %v", s, text, textCodec)
		}
		if _, checks := e.(JSONEncoder); checks != (s == postcard.SchemaAvro) {
			t.Errorf("NewEncoder(%s) is a JSONEncoder: %v, want %v", s, checks, s == postcard.SchemaAvro)
		}
	}
}

// panickingJSON is a JSON encoder with a bug in both of its direct paths.
type panickingJSON struct{ panicking }

func (panickingJSON) AppendEncodedJSONText([]byte, []byte) ([]byte, bool) { panic("text bug") }
func (panickingJSON) AppendEncodedJSON([]byte, []byte) ([]byte, bool)     { panic("json bug") }

// A panic while encoding from JSON text reads as "cannot encode it": dst comes back unchanged, so
// the caller goes on to Encode, which names the error.
func TestGuardedJSONEncoderReturnsAPanicAsNotOK(t *testing.T) {
	e, _ := guardEncoder(panickingJSON{}, nil)
	j, ok := e.(JSONEncoder)
	if !ok {
		t.Fatalf("guarded %T is no JSONEncoder", e)
	}
	for name, f := range map[string]func(dst, b []byte) ([]byte, bool){"AppendEncodedJSONText": j.AppendEncodedJSONText, "AppendEncodedJSON": j.AppendEncodedJSON} {
		if out, ok := f([]byte("kept"), []byte("{}")); ok || string(out) != "kept" {
			t.Errorf("%s = %q, %v; want dst unchanged and false", name, out, ok)
		}
	}
}

// panickingText is a text decoder with a bug in AppendJSONText.
type panickingText struct{ panicking }

func (panickingText) AppendJSONText([]byte, []byte) ([]byte, bool) { panic("text bug") }

// A panic while writing JSON text reads as "cannot write it": dst comes back unchanged, so the
// caller goes on to Decode, which names the error.
func TestGuardedTextDecoderReturnsAPanicAsNotOK(t *testing.T) {
	d, _ := guardDecoder(panickingText{}, nil)
	td, ok := d.(JSONTextDecoder)
	if !ok {
		t.Fatalf("guarded %T is no JSONTextDecoder", d)
	}
	out, ok := td.AppendJSONText([]byte("kept"), []byte{1})
	if ok || string(out) != "kept" {
		t.Fatalf("AppendJSONText = %q, %v; want dst unchanged and false", out, ok)
	}
}

// Should protobuf-go panic on input the map-entry check does not catch, DecodeJSON still
// returns an error: here the check is left out to let the library's real panic through.
func TestProtoDecodeJSONReturnsALibraryPanicAsAnError(t *testing.T) {
	s, err := LoadProtoSchema("testdata/proto/fuzz.proto", nil, "fuzz.Node")
	if err != nil {
		t.Fatal(err)
	}
	unchecked := &ProtoSchema{desc: s.desc} // no map-holding types: checkMapEntries walks nothing
	keyTwice := []byte{0x62, 0x05, 0x0a, 0x01, 'a', 0x08, 0x00}
	_, err = unchecked.DecodeJSON(keyTwice, false)
	if !errors.Is(err, panicerr.ErrPanic) || !strings.Contains(err.Error(), "map key") {
		t.Fatalf("err = %v, want protobuf-go's panic as an error", err)
	}
}
