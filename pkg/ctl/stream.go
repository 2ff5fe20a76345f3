package ctl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

// eventStream is what tap and logs say about the server's event stream they follow.
type eventStream struct {
	name       string // the subcommand, for its messages
	ended      string // a stream that ended without its end event
	notReached string // what a replica the server could not reach was not: "tapped", "followed"
}

// follow reads the events of body until handle says it is done, the stream fails, or ctx ends
// (Ctrl-C, no failure). A replica the server could not reach is said on stderr and the stream
// goes on; every other event goes to handle.
func (s eventStream) follow(ctx context.Context, body io.Reader, out *bufio.Writer, env Env, handle func(tap.Message) (exit int, done bool)) int {
	rd := tap.NewReader(body)
	for {
		m, err := rd.Next()
		if err != nil {
			out.Flush()
			if ctx.Err() != nil {
				return ExitOK
			}
			if errors.Is(err, io.EOF) {
				err = errors.New(s.ended)
			}
			fmt.Fprintf(env.Stderr, "iggy-connectors %s: %v\n", s.name, err)
			return ExitMismatch
		}
		if m.Event == tap.EventUnreachable {
			var u struct{ Replica, Error string }
			_ = json.Unmarshal(m.Data, &u)
			fmt.Fprintf(env.Stderr, "iggy-connectors %s: replica %s not %s: %s\n", s.name, u.Replica, s.notReached, u.Error)
			continue
		}
		if exit, done := handle(m); done {
			return exit
		}
	}
}
