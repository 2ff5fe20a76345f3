package httplimit

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// TooLargeText is the 413 answer's body: axum's text for a body over its limit (docs/http-api.md §1.6).
const TooLargeText = "Failed to buffer the request body: length limit exceeded"

// MinRateGrace is how long a request body may take before http.min_body_rate applies: by t
// seconds into the body, at least min_body_rate × (t − 1) bytes must have arrived.
const MinRateGrace = time.Second

// ErrBodyTooSlow is what a handler's read of a request body returns once the body fell below
// http.min_body_rate (IsTooSlow recognises it, WriteTooSlow answers it).
var ErrBodyTooSlow = errors.New("the request body arrived slower than http.min_body_rate")

// Policy is what Requests applies to the requests of one server.
type Policy struct {
	Limits config.HTTPLimits // MaxBodyBytes, MinBodyRate and ReadTimeout are used
	Log    *slog.Logger      // where cut bodies are reported; nil: not reported
}

// Requests applies the body rules of p, and the connection reserve of Listener, to every request
// before next sees it:
//
//   - On a connection let in beyond http.max_connections (Listener's probe reserve), a probe
//     (IsProbe) is served at once, then the connection closes; anything else waits up to 2 s for
//     room within the cap, else is answered 503 with Retry-After: 1.
//   - A declared Content-Length over MaxBodyBytes is answered 413 at once; a longer chunked body
//     fails the handler's read (IsTooLarge).
//   - A body is read only if the handler reads it. When the answer starts (or the handler returns)
//     with the body not read to its end, the connection is closed after the answer without waiting
//     for the rest, so a request to a route that takes no body (POST /health, POST .../pause, a
//     404 or 405) is answered at once however slowly its body would arrive.
//   - A body the handler reads must keep to MinBodyRate bytes a second after MinRateGrace: slower,
//     the read fails with ErrBodyTooSlow, a WARN line names the request and the floor, and the
//     connection closes after the answer.
//
// Requests without a body pass untouched (a GET, a long Server-Sent Events answer): the rules
// apply to request bodies only, never to how long an answer takes.
func Requests(next http.Handler, p Policy) http.Handler {
	limit := int64(p.Limits.MaxBodyBytes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if overCap(r) {
			if IsProbe(r) {
				probing(r)
				w.Header().Set("Connection", "close") // free the reserve for the next probe
			} else if !admitBeyondProbe(r) {
				w.Header().Set("Connection", "close")
				w.Header().Set("Retry-After", "1")
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, "every connection of http.max_connections is busy; only /, /health and /ready are answered beyond it")
				return
			}
		}
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if limit > 0 && r.ContentLength > limit {
			// The unread body is not worth draining: close the connection after the answer.
			w.Header().Set("Connection", "close")
			WriteTooLarge(w)
			return
		}
		g := &guardedBody{
			ResponseWriter: w, rc: http.NewResponseController(w), req: r, log: p.Log,
			rate: p.Limits.MinBodyRate, serverDeadline: requestDeadline(r, p.Limits.ReadTimeout),
		}
		g.src = r.Body
		if limit > 0 {
			g.src = http.MaxBytesReader(w, r.Body, limit)
		}
		r.Body = g
		next.ServeHTTP(g, r)
		g.answering()
	})
}

// guardedBody is a request body read under the floor, and the answer's writer that stops the
// server from waiting for what the handler left unread. One request's handler uses it.
type guardedBody struct {
	http.ResponseWriter
	rc             *http.ResponseController
	req            *http.Request
	src            io.ReadCloser
	log            *slog.Logger
	rate           uint32
	serverDeadline time.Time // the read deadline of the whole request (http.read_timeout); zero: none

	mu       sync.Mutex
	n        int64
	start    time.Time // first read
	eof      bool
	cut      bool
	answered bool
}

func (g *guardedBody) Read(p []byte) (int, error) {
	g.mu.Lock()
	if g.cut {
		g.mu.Unlock()
		return 0, ErrBodyTooSlow
	}
	if g.start.IsZero() {
		g.start = time.Now()
	}
	floor := time.Time{}
	if g.rate > 0 && !g.eof {
		// By now+x the body must hold rate×(x−grace) bytes: the read that would bring it below
		// that fails at this deadline.
		floor = g.start.Add(MinRateGrace + time.Duration(float64(g.n)/float64(g.rate)*float64(time.Second)))
		if !g.serverDeadline.IsZero() && g.serverDeadline.Before(floor) {
			floor = g.serverDeadline
		}
		_ = g.rc.SetReadDeadline(floor)
	}
	g.mu.Unlock()

	n, err := g.src.Read(p)

	g.mu.Lock()
	defer g.mu.Unlock()
	g.n += int64(n)
	if err == io.EOF {
		g.eof = true
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && !floor.IsZero() && !floor.Equal(g.serverDeadline) {
		g.cut = true
		if g.log != nil {
			g.log.Warn("request body cut: it arrived slower than http.min_body_rate after the first second; the connection is closed",
				"min_body_rate", g.rate, "received_bytes", g.n, "declared_bytes", g.req.ContentLength,
				"seconds", time.Since(g.start).Round(time.Millisecond).Seconds(),
				"method", g.req.Method, "path", g.req.URL.Path, "client", g.req.RemoteAddr)
		}
		return n, fmt.Errorf("%w (%d B/s after the first %s; %d bytes in %s)", ErrBodyTooSlow, g.rate, MinRateGrace,
			g.n, time.Since(g.start).Round(time.Millisecond))
	}
	return n, err
}

func (g *guardedBody) Close() error { return g.src.Close() }

// answering runs before the answer's header goes out (and when the handler returns): a body not
// read to its end is never waited for. The connection closes after the answer, and its read
// deadline is now, so neither the server's drain of the rest nor its wait for the next request
// holds it.
func (g *guardedBody) answering() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.answered {
		return
	}
	g.answered = true
	if g.eof {
		_ = g.rc.SetReadDeadline(g.serverDeadline) // the floor no longer applies
		return
	}
	g.ResponseWriter.Header().Set("Connection", "close")
	_ = g.rc.SetReadDeadline(time.Now())
}

func (g *guardedBody) WriteHeader(code int) {
	if code >= 200 {
		g.answering()
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *guardedBody) Write(p []byte) (int, error) {
	g.answering()
	return g.ResponseWriter.Write(p)
}

// Flush lets handlers that flush (type-asserting http.Flusher) keep doing so.
func (g *guardedBody) Flush() {
	g.answering()
	_ = g.rc.Flush()
}

// Unwrap lets http.ResponseController reach the server's writer (deadlines, hijacking).
func (g *guardedBody) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// IsTooLarge reports whether err is the body limit of Requests being hit.
func IsTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// IsTooSlow reports whether err is a body cut by http.min_body_rate.
func IsTooSlow(err error) bool { return errors.Is(err, ErrBodyTooSlow) }

// WriteTooLarge writes the 413 answer.
func WriteTooLarge(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = io.WriteString(w, TooLargeText)
}

// WriteTooSlow writes the 408 answer to a body cut by http.min_body_rate.
func WriteTooSlow(w http.ResponseWriter, err error) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusRequestTimeout)
	_, _ = io.WriteString(w, "Failed to buffer the request body: "+err.Error())
}

// ReadBody reads r's whole body. A body over the limit or under the rate floor is answered here
// (413, 408) and ok is false; any other read error is the caller's to answer, with what was read.
func ReadBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool, err error) {
	body, err = io.ReadAll(r.Body)
	switch {
	case IsTooLarge(err):
		WriteTooLarge(w)
		return nil, false, err
	case IsTooSlow(err):
		WriteTooSlow(w, err)
		return nil, false, err
	}
	return body, true, err
}
