// Package apikey is the api-key check of the REST API (docs/http-api.md §1.4), shared by the supervisor's
// API and each runner's endpoint (through pkg/httpguard) so both answer exactly as upstream does.
package apikey

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Header is the request header that carries the key.
const Header = "api-key"

// Authenticated reports whether r carries want: in the api-key header as upstream reads it (the
// first value), or as "Authorization: Bearer <key>" (the scheme in any case), which scrapers such as
// Prometheus can send and an api-key header they cannot.
func Authenticated(r *http.Request, want []byte) bool {
	if Valid(r.Header.Get(Header), want) {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && Valid(strings.TrimLeft(token, " "), want)
}

// Valid reports whether the header value got authenticates against want: byte for byte equal and
// readable as text the way upstream reads it (the http crate's HeaderValue::to_str: visible ASCII
// and tab); a value with any other byte fails even when it equals the key. The comparison is
// constant-time (docs/architecture.md, decision 11).
func Valid(got string, want []byte) bool {
	equal := subtle.ConstantTimeCompare([]byte(got), want) == 1
	return equal && visibleASCII(got)
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return true
}
