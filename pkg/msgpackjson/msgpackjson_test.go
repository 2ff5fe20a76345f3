package msgpackjson_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/msgpackjson"
)

func TestToJSONAndBack(t *testing.T) {
	for _, tc := range []struct {
		name, msgpack, json string
	}{
		{"random source state", "912a", `[42]`},
		{"nil bool", "92c0c3", `[null,true]`},
		{"negative and big ints", "93ff d1ff7f cfffffffffffffffff", `[-1,-129,18446744073709551615]`},
		{"float64 keeps a fraction", "cb4000000000000000", `2.0`},
		{"string map keeps member order", "82a17a01a16102", `{"z":1,"a":2}`},
		{"integer keys", "820102a178c3", `{"$map":[[1,2],["x",true]]}`},
		{"binary", "c403010203", `{"$bin":"AQID"}`},
		{"ext", "d40105", `{"$ext":{"type":1,"data":"BQ=="}}`},
		{"a map that looks tagged", "81a42462696e01", `{"$map":[["$bin",1]]}`},
		{"nested", "81a17391820180c0a0", `{"s":[{"$map":[[1,{}],[null,""]]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := hex.DecodeString(stripSpaces(tc.msgpack))
			if err != nil {
				t.Fatal(err)
			}
			got, err := msgpackjson.ToJSON(in)
			if err != nil {
				t.Fatalf("ToJSON: %v", err)
			}
			if string(got) != tc.json {
				t.Fatalf("ToJSON = %s, want %s", got, tc.json)
			}
			back, err := msgpackjson.FromJSON(got)
			if err != nil {
				t.Fatalf("FromJSON: %v", err)
			}
			if !bytes.Equal(back, in) {
				t.Fatalf("FromJSON(%s) = %x, want %x", got, back, in)
			}
		})
	}
}

func stripSpaces(s string) string { return string(bytes.ReplaceAll([]byte(s), []byte(" "), nil)) }

func TestRefusals(t *testing.T) {
	for name, in := range map[string]string{
		"truncated":      "92c0",
		"trailing bytes": "c0c0",
		"NaN":            "cb7ff8000000000000",
		"huge array":     "ddffffffff",
	} {
		b, _ := hex.DecodeString(in)
		if _, err := msgpackjson.ToJSON(b); !errors.Is(err, msgpackjson.ErrNotJSON) {
			t.Errorf("%s: ToJSON error = %v, want ErrNotJSON", name, err)
		}
	}
	for name, in := range map[string]string{
		"malformed":         `[1,`,
		"trailing":          `1 2`,
		"integer too large": `18446744073709551616`,
		"bad base64":        `{"$bin":"%%"}`,
		"bad map pair":      `{"$map":[[1]]}`,
		"bad ext":           `{"$ext":{"type":1000,"data":""}}`,
	} {
		if _, err := msgpackjson.FromJSON([]byte(in)); !errors.Is(err, msgpackjson.ErrBadJSON) {
			t.Errorf("%s: FromJSON error = %v, want ErrBadJSON", name, err)
		}
	}
}

func FuzzToJSON(f *testing.F) {
	for _, s := range []string{"912a", "820102a178c3", "c403010203", "d40105", "ddffffffff"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		text, err := msgpackjson.ToJSON(data)
		if err != nil {
			return
		}
		if _, err := msgpackjson.FromJSON(text); err != nil {
			t.Fatalf("FromJSON(ToJSON(%x) = %s): %v", data, text, err)
		}
	})
}
