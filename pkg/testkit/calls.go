package testkit

import (
	"net/http"
	"strings"
	"testing"
)

// HTTPCall is one request of a table-driven check of an HTTP API, and what its answer must be.
type HTTPCall struct {
	Method, Path string
	Header       http.Header // a "Host" entry replaces the request's Host (see DoHTTP)
	Want         int
	BodyHas      string // a part the body must contain; "" checks nothing
}

// CheckCalls sends each call to base ("http://host:port") in order and fails at the first answer
// with another status, or whose body lacks BodyHas.
func CheckCalls(tb testing.TB, base string, calls []HTTPCall) {
	tb.Helper()
	for _, c := range calls {
		resp, body, err := DoHTTP(c.Method, base+c.Path, c.Header, "")
		if err != nil {
			tb.Fatalf("%s %s: %v", c.Method, c.Path, err)
		}
		if resp.StatusCode != c.Want || !strings.Contains(string(body), c.BodyHas) {
			tb.Fatalf("%s %s %v: %d %q; want %d with %q", c.Method, c.Path, c.Header, resp.StatusCode, body, c.Want, c.BodyHas)
		}
	}
}

// Call is an HTTPCall, for tables written one call a line.
func Call(method, path string, header http.Header, want int, bodyHas string) HTTPCall {
	return HTTPCall{Method: method, Path: path, Header: header, Want: want, BodyHas: bodyHas}
}
