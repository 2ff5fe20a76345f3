package tap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// secrets is the default secret-key list, as a runner masks with it.
func secrets() tap.Masker { return config.SecretKeys(config.DefaultSecretKeys) }

// masked is a JSON payload as a tap shows it with the default secret keys: before Marshal's
// compaction, so the bytes kept are the payload's own.
func masked(payload string) string {
	var e tap.Event
	e.SetPayload(postcard.SchemaJSON, []byte(payload), secrets())
	return string(e.Payload)
}

// Masking replaces the values of secret-named fields and nothing else: the keys keep their order,
// numbers, escapes and spacing stay as written.
func TestMaskKeepsThePayloadsOwnBytes(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"order kept", `{"z":1,"password":"p","a":2}`, `{"z":1,"password":"******","a":2}`},
		{"spacing kept", "{ \"b\" : 1 ,\n  \"token\" :\t\"t\" }", "{ \"b\" : 1 ,\n  \"token\" :\t\"******\" }"},
		{"numbers and escapes kept", `{"n":1.50e+3,"s":"\u00e9\/","secret":12345678901234567890}`, `{"n":1.50e+3,"s":"\u00e9\/","secret":"******"}`},
		{"nested and in arrays", `[{"db":{"api_key":"k","host":"h"}},{"x":[{"Password":true}]}]`, `[{"db":{"api_key":"******","host":"h"}},{"x":[{"Password":"******"}]}]`},
		{"composite values masked whole", `{"token":{"a":[1,2]},"secret":[{"b":1}],"k":0}`, `{"token":"******","secret":"******","k":0}`},
		{"null and empty kept", `{"password":null,"token":"","secret":" "}`, `{"password":null,"token":"","secret":"******"}`},
		{"an escaped key", `{"pass\u0077ord":"p","x\"token":1}`, `{"pass\u0077ord":"******","x\"token":"******"}`},
		{"duplicate keys each masked", `{"token":"a","token":"b"}`, `{"token":"******","token":"******"}`},
		{"a key that only looks like one", `{"a":"\"password\":\"p\"","b":["token"]}`, `{"a":"\"password\":\"p\"","b":["token"]}`},
		{"nothing to mask", " [1, {\"a\" : \"b\"}] ", " [1, {\"a\" : \"b\"}] "},
		{"scalars", `"password"`, `"password"`},
		{"empty object and array", `{"a":{},"b":[],"secret":{}}`, `{"a":{},"b":[],"secret":"******"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := masked(tc.in); got != tc.want {
				t.Fatalf("masked\n got %s\nwant %s", got, tc.want)
			}
			checkMasked(t, []byte(tc.in), []byte(masked(tc.in)))
		})
	}
	// Without a secret list nothing is parsed or changed.
	var e tap.Event
	e.SetPayload(postcard.SchemaJSON, []byte(`{"password":"p"}`), nil)
	if string(e.Payload) != `{"password":"p"}` {
		t.Fatalf("no secrets: %s", e.Payload)
	}
}

// Any valid JSON in, valid JSON out; every token but the masked values is byte for byte the
// original's, in the original's order, and what is masked is a secret-named member's value that
// is neither null nor "".
func FuzzMask(f *testing.F) {
	for _, seed := range []string{
		`{"z":1,"password":"p","a":2}`,
		"{ \"b\" : 1 ,\n  \"token\" :\t\"t\" }",
		`[{"db":{"api_key":"k","host":"h"}},{"x":[{"Password":true}]}]`,
		`{"token":{"a":[1,2]},"secret":[{"b":1}],"k":-0.5e-7}`,
		`{"password":null,"token":"","secret":" "}`,
		`{"pass\u0077ord":"p","x\"token":1,"\ud83d\ude00":"\u2028"}`,
		`{"token":"a","token":"b"}`,
		`"password"`, `null`, `12`, `[]`, `{}`, ` [ ] `,
		`{"a":"\"password\":\"p\"","b":["token",{"secret":[[[]]]}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		out := []byte(masked(string(in)))
		if !json.Valid(out) {
			t.Fatalf("masked %q into invalid JSON %q", in, out)
		}
		checkMasked(t, in, out)
	})
}

// checkMasked walks the original and the masked document side by side, token by token: each
// token's bytes (with the spacing and separators before it) must be the original's, except the
// value of a secret-named member that is neither null nor "", which must be "******" (after the
// same separators).
func checkMasked(t *testing.T, in, out []byte) {
	t.Helper()
	keys := config.SecretKeys(config.DefaultSecretKeys)
	a, b := newTokens(in), newTokens(out)
	anyMasked := false
	type frame struct{ object, wantKey bool }
	var stack []frame
	for {
		tok, raw, err := a.next()
		if errors.Is(err, io.EOF) {
			if _, _, err := b.next(); !errors.Is(err, io.EOF) {
				t.Fatalf("masked %s has more than %s", out, in)
			}
			break
		}
		if err != nil {
			t.Fatalf("original %s: %v", in, err)
		}
		mtok, mraw, err := b.next()
		if err != nil {
			t.Fatalf("masked %s ended early (original %s): %v", out, in, err)
		}
		if !bytes.Equal(raw, mraw) || !sameToken(tok, mtok) {
			t.Fatalf("token %q written %q\n in %s\nout %s", raw, mraw, in, out)
		}
		d, delim := tok.(json.Delim)
		if delim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			top.wantKey = false
			if !keys.Match(tok.(string)) {
				continue
			}
			// A secret-named member's value: masked unless null or "".
			vtok, vraw, err := a.next()
			if err != nil {
				t.Fatalf("original %s: %v", in, err)
			}
			if d, ok := vtok.(json.Delim); ok && (d == '{' || d == '[') {
				vraw = append(vraw, a.skip()...)
			}
			mv, mvraw, err := b.next()
			if err != nil {
				t.Fatalf("masked %s: %v", out, err)
			}
			if vtok == nil || vtok == "" {
				if !bytes.Equal(vraw, mvraw) {
					t.Fatalf("%s's empty value %q written %q\n in %s\nout %s", tok, vraw, mvraw, in, out)
				}
			} else {
				anyMasked = true
				prefix := vraw[:len(vraw)-len(bytes.TrimLeft(vraw, " \t\r\n:"))]
				if mv != config.MaskedValue || string(mvraw) != string(prefix)+`"`+config.MaskedValue+`"` {
					t.Fatalf("%s's value %q masked as %q\n in %s\nout %s", tok, vraw, mvraw, in, out)
				}
			}
			top.wantKey = true
			continue
		}
		if top != nil && top.object {
			top.wantKey = true // this value done (a composite one once it closes)
		}
		if delim {
			stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
		}
	}
	if !anyMasked && !bytes.Equal(in, out) {
		t.Fatalf("nothing to mask, yet\n in %q\nout %q", in, out)
	}
	if !bytes.Equal(in[a.off():], out[b.off():]) {
		t.Fatalf("trailing bytes %q written %q", in[a.off():], out[b.off():])
	}
}

func sameToken(x, y json.Token) bool {
	if nx, ok := x.(json.Number); ok {
		ny, ok := y.(json.Number)
		return ok && nx == ny
	}
	return x == y
}

// tokens reads a document's tokens with the bytes each one took (the spacing and separators
// before it included).
type tokens struct {
	data []byte
	dec  *json.Decoder
	last int64
}

func newTokens(data []byte) *tokens {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &tokens{data: data, dec: dec}
}

func (t *tokens) next() (json.Token, []byte, error) {
	tok, err := t.dec.Token()
	if err != nil {
		return nil, nil, err
	}
	start := t.last
	t.last = t.dec.InputOffset()
	return tok, t.data[start:t.last], nil
}

// skip consumes the rest of a composite value whose opening delimiter was just read, and
// returns its bytes.
func (t *tokens) skip() []byte {
	start := t.last
	for depth := 1; depth > 0; {
		tok, _, err := t.next()
		if err != nil {
			return t.data[start:t.last]
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return t.data[start:t.last]
}

func (t *tokens) off() int64 { return t.last }
