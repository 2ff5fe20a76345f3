package tap

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
)

// SSE event names of the tap and the logs streams.
const (
	EventMessage     = "message"     // data: an Event
	EventDropped     = "dropped"     // data: {"dropped": N}, samples dropped since the last such event
	EventEnd         = "end"         // data: {"reason": ...}, the last event of a stream
	EventUnreachable = "unreachable" // fleet merge: data {"replica": endpoint, "error": ...}
	EventLog         = "log"         // logs?follow=true: data: a log record
)

// End reasons.
const (
	EndLimit       = "limit"
	EndMaxDuration = "max_duration"
	EndShutdown    = "shutdown"
)

// KeepAlive is the longest a stream stays silent: a comment line is written then, so proxies
// keep it open.
const KeepAlive = 15 * time.Second

// ContentType is the media type of a Server-Sent Events stream.
const ContentType = "text/event-stream"

// Writer writes a Server-Sent Events stream: every event flushed as written, the connection's
// write deadline extended before each write (a long stream is never cut by the server's write
// timeout), and Silent reporting how long nothing was written.
type Writer struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	writeTimeout time.Duration
	buf          []byte
	last         time.Time
}

// NewWriter sends the stream's headers (200, text/event-stream, no caching, no proxy buffering)
// and flushes them. writeTimeout is the budget of each write ([http] write_timeout; 0: none).
func NewWriter(w http.ResponseWriter, writeTimeout time.Duration) (*Writer, error) {
	streamHeaders(w.Header())
	sw := &Writer{w: w, rc: http.NewResponseController(w), writeTimeout: writeTimeout}
	sw.extend()
	w.WriteHeader(http.StatusOK)
	return sw, sw.flush()
}

// streamHeaders are the headers of every event stream.
func streamHeaders(h http.Header) {
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
}

// WriteHead answers a HEAD request on a stream route: the status and headers a GET would start
// its stream with, and no stream (net/http serves HEAD on GET routes; a handler that streamed
// would hold a tap, or a follower, until the client closed the connection).
func WriteHead(w http.ResponseWriter) {
	streamHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
}

// extend gives the next write the whole write timeout (pkg/httplimit's budget of one answer).
func (s *Writer) extend() { httplimit.ExtendWrite(s.w, s.writeTimeout, 0) }

func (s *Writer) flush() error {
	s.last = time.Now()
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// Event writes one event. data is one line of JSON; a line break in it starts another data line,
// as the format asks.
func (s *Writer) Event(name string, data []byte) error {
	b := append(s.buf[:0], "event: "...)
	b = append(b, name...)
	b = append(b, '\n')
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		b = append(b, "data: "...)
		b = append(b, line...)
		b = append(b, '\n')
		if !more {
			break
		}
		data = rest
	}
	b = append(b, '\n')
	s.buf = b
	return s.Raw(b)
}

// Raw writes bytes that already are whole events (a proxy relaying a runner's stream).
func (s *Writer) Raw(b []byte) error {
	s.extend()
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.flush()
}

// KeepAlive writes the keep-alive comment.
func (s *Writer) KeepAlive() error { return s.Raw([]byte(": keep-alive\n\n")) }

// Silent is how long ago the last write was.
func (s *Writer) Silent() time.Duration { return time.Since(s.last) }

// Message is one event read from a stream.
type Message struct {
	Event string // "message" when the event named none
	Data  []byte // the data lines joined by '\n'
	Raw   []byte // the event's bytes as read, its blank line included (comments left out)
}

// ErrEventTooLarge: an event's bytes passed the reader's bound.
var ErrEventTooLarge = errors.New("server-sent event too large")

// Reader reads events from a Server-Sent Events stream, skipping comments.
type Reader struct {
	br  *bufio.Reader
	max int
}

// MaxEventBytes bounds one event a Reader takes (a tapped 64 MB payload as base64 fits).
const MaxEventBytes = 96 << 20

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: MaxEventBytes}
}

// Next returns the next event; io.EOF at the end of the stream (an unfinished event is dropped).
func (r *Reader) Next() (Message, error) {
	var m Message
	var data [][]byte
	for {
		line, err := r.line()
		if err != nil {
			return Message{}, err
		}
		if len(m.Raw)+len(line) > r.max {
			return Message{}, fmt.Errorf("%w: over %d bytes", ErrEventTooLarge, r.max)
		}
		trimmed := bytes.TrimRight(line, "\r\n")
		if len(trimmed) == 0 {
			if m.Event == "" && data == nil {
				continue // blank lines between events
			}
			m.Raw = append(m.Raw, '\n')
			if m.Event == "" {
				m.Event = EventMessage
			}
			m.Data = bytes.Join(data, []byte{'\n'})
			return m, nil
		}
		if trimmed[0] == ':' {
			continue
		}
		m.Raw = append(m.Raw, trimmed...)
		m.Raw = append(m.Raw, '\n')
		field, value, _ := bytes.Cut(trimmed, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			m.Event = string(value)
		case "data":
			data = append(data, append([]byte(nil), value...)) // the line's memory is the reader's
		}
	}
}

// line reads one line, however long, up to the reader's bound.
func (r *Reader) line() ([]byte, error) {
	var long []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > r.max {
				return nil, fmt.Errorf("%w: a line over %d bytes", ErrEventTooLarge, r.max)
			}
			long = append(long, chunk...)
			continue
		}
		if err != nil {
			return nil, err
		}
		if long != nil {
			return append(long, chunk...), nil
		}
		return chunk, nil
	}
}
