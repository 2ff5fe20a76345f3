// Package apikey is the api-key check of the REST API (http-api.md §1.4), shared by the supervisor's
// API and each runner's endpoint so both answer exactly as upstream does.
package apikey

import (
	"crypto/subtle"
	"net/http"
)

// Header is the request header that carries the key.
const Header = "api-key"

// Require wraps next so that every path but / and /health needs the api-key header with exactly
// key; anything else gets 401 with an empty body and no content type. An empty key turns the check
// off. The comparison is constant-time (DESIGN decision 11).
func Require(key string, next http.Handler) http.Handler {
	if key == "" {
		return next
	}
	want := []byte(key)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" || r.URL.Path == "/health" {
			next.ServeHTTP(w, r)
			return
		}
		if !Valid(r.Header.Get(Header), want) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Valid reports whether the header value got authenticates against want: byte for byte equal and
// readable as text the way upstream reads it (the http crate's HeaderValue::to_str: visible ASCII
// and tab); a value with any other byte fails even when it equals the key.
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
