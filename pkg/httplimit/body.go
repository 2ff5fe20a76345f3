package httplimit

import (
	"errors"
	"io"
	"net/http"
)

// TooLargeText is the 413 answer's body: axum's text for a body over its limit (http-api.md §1.6).
const TooLargeText = "Failed to buffer the request body: length limit exceeded"

// Body refuses request bodies over max bytes: a declared Content-Length over it is answered 413
// before the handler runs, and a body that turns out longer (chunked) fails the handler's read
// with an error IsTooLarge recognises. max 0 means no limit.
func Body(next http.Handler, max uint32) http.Handler {
	if max == 0 {
		return next
	}
	limit := int64(max)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			// The unread body is not worth draining: close the connection after the answer.
			w.Header().Set("Connection", "close")
			WriteTooLarge(w)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// IsTooLarge reports whether err is the body limit of Body being hit.
func IsTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// WriteTooLarge writes the 413 answer.
func WriteTooLarge(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = io.WriteString(w, TooLargeText)
}
