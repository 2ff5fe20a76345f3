package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// tapClient is the live-tap client a tap case's runner has open while it is measured.
type tapClient struct {
	name, about string
	query       string // GET /tap's query
	stalled     bool   // reads the answer's headers, then nothing
}

var (
	tapFast    = tapClient{name: "tap", about: "a tap client reading every event (default rate 100/s, every point)", query: ""}
	tapEvery   = tapClient{name: "tap-all", about: "a tap client reading every message at polled and delivered (rate 1,000,000/s)", query: "rate=1000000"}
	tapStalled = tapClient{name: "tap-stalled", about: "a tap client that never reads (rate 1,000,000/s: the buffer fills, the rest is dropped)", query: "rate=1000000", stalled: true}
)

// openTap is an open tap stream, closed after the measurement.
type openTap struct {
	conn   net.Conn
	done   chan struct{}
	events int
}

// open starts the client on the runner's endpoint and returns once the stream is open (its
// headers came, so the runner's hub has it); a zero tapClient opens nothing.
func (tc tapClient) open(r *runnerProc) (*openTap, error) {
	t := &openTap{done: make(chan struct{})}
	if tc.name == "" {
		close(t.done)
		return t, nil
	}
	conn, err := net.Dial("unix", r.socket)
	if err != nil {
		return nil, fmt.Errorf("tap: %w", err)
	}
	if tc.stalled {
		_ = conn.(*net.UnixConn).SetReadBuffer(4096)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://runner/tap?"+tc.query, nil)
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("tap: %w", err)
	}
	br := bufio.NewReaderSize(conn, 4096)
	_ = conn.SetReadDeadline(time.Now().Add(startLimit))
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("tap: %w", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("tap: status %d", resp.StatusCode)
	}
	t.conn = conn
	if tc.stalled {
		close(t.done)
		return t, nil
	}
	go func() {
		defer close(t.done)
		rd := tap.NewReader(resp.Body)
		for {
			if _, err := rd.Next(); err != nil {
				return
			}
			t.events++
		}
	}()
	return t, nil
}

func (t *openTap) close() {
	if t.conn != nil {
		t.conn.Close()
	}
	<-t.done
}
