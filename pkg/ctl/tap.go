package ctl

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

const tapUsage = "tap sinks/KEY|sources/KEY [--point delivered] [--limit 10] [--rate N] [--partition N] [--url URL] [--api-key KEY] [--format json|text]"

// pointList collects repeated (or comma-separated) --point flags.
type pointList []string

func (p *pointList) String() string { return strings.Join(*p, ",") }
func (p *pointList) Set(v string) error {
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*p = append(*p, s)
		}
	}
	return nil
}

// runTap streams a connector's live tap: one JSON line per sampled message on stdout (the
// tap.Event shape, which `iggy-connectors test --input` reads back), or a readable line with
// --format text. Dropped counts, unreachable replicas and the end go to stderr. It exits 0 at the
// limit, the server's maximum duration or Ctrl-C, and 1 when the server refuses or the stream
// ends otherwise (the connector stopped).
func runTap(ctx context.Context, args []string, env Env) int {
	fs := newFlagSet("tap", tapUsage, env)
	cf := addClientFlags(fs, env)
	var points pointList
	fs.Var(&points, "point", "tap this point (repeatable): a sink's polled, delivered, dead_lettered; a source's produced, sent, dead_lettered (default: all)")
	limit := fs.Int("limit", 0, "end after this many messages (0: no limit)")
	rate := fs.Int("rate", 0, "at most this many messages a second (the server's default: 100)")
	partition := fs.Int("partition", -1, "a sink's messages of this partition only")
	path, code, ok := target("tap", fs, args, env)
	if !ok {
		return code
	}
	c, err := cf.client()
	if err != nil {
		fmt.Fprintln(env.Stderr, "iggy-connectors tap:", err)
		return ExitUsage
	}
	q := url.Values{}
	for _, p := range points {
		q.Add("point", p)
	}
	if *limit > 0 {
		q.Set("limit", strconv.Itoa(*limit))
	}
	if *rate > 0 {
		q.Set("rate", strconv.Itoa(*rate))
	}
	if *partition >= 0 {
		q.Set("partition", strconv.Itoa(*partition))
	}
	path += "/tap"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	resp, err := c.get(ctx, path)
	if err != nil {
		return failed(ctx, "tap", err, env)
	}
	defer resp.Body.Close()
	fmt.Fprintf(env.Stderr, "iggy-connectors tap: tapping %s at %s; Ctrl-C to stop\n", strings.TrimPrefix(strings.TrimSuffix(path[:strings.Index(path, "/tap")], "/"), "/"), c.base)
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	stream := eventStream{name: "tap", ended: "the stream ended without an end event", notReached: "tapped"}
	return stream.follow(ctx, resp.Body, out, env, func(m tap.Message) (int, bool) {
		switch m.Event {
		case tap.EventMessage:
			if c.text {
				writeEventText(out, m.Data)
			} else {
				out.Write(m.Data)
				out.WriteByte('\n')
			}
			out.Flush() // every message as it comes: a tap is watched live
		case tap.EventDropped:
			var d struct {
				Dropped uint64
				Replica string
			}
			_ = json.Unmarshal(m.Data, &d)
			fmt.Fprintf(env.Stderr, "iggy-connectors tap: %d messages dropped%s: this client did not keep up (lower --rate, or read faster)\n", d.Dropped, replicaSuffix(d.Replica))
		case tap.EventEnd:
			out.Flush()
			var e struct{ Reason string }
			_ = json.Unmarshal(m.Data, &e)
			switch e.Reason {
			case tap.EndLimit:
				return ExitOK, true
			case tap.EndMaxDuration:
				fmt.Fprintln(env.Stderr, "iggy-connectors tap: the server's [http] tap_max_duration passed; tap again to go on")
				return ExitOK, true
			}
			fmt.Fprintf(env.Stderr, "iggy-connectors tap: the stream ended: %s (the connector's runner stopped)\n", e.Reason)
			return ExitMismatch, true
		}
		return 0, false
	})
}

func replicaSuffix(replica string) string {
	if replica == "" {
		return ""
	}
	return " on " + replica
}

// failed reports a failed server call; a cancelled context (Ctrl-C) is no failure.
func failed(ctx context.Context, name string, err error, env Env) int {
	if ctx.Err() != nil {
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "iggy-connectors %s: %v\n", name, err)
	return ExitMismatch
}

// writeEventText writes one tap event as a line for people:
// TIME POINT STREAM/TOPIC pPARTITION @OFFSET id=ID SCHEMA SIZEB [headers] PAYLOAD [error].
func writeEventText(w *bufio.Writer, data []byte) {
	var e tap.Event
	if err := json.Unmarshal(data, &e); err != nil {
		w.Write(data)
		w.WriteByte('\n')
		return
	}
	when := "-"
	if e.Timestamp > 0 {
		when = time.UnixMicro(int64(e.Timestamp)).UTC().Format("15:04:05.000000")
	}
	fmt.Fprintf(w, "%s %-13s %s/%s p%d @%d id=%s %s %dB", when, e.Point, e.Stream, e.Topic, e.Partition, e.Offset, e.ID, e.Schema, e.Size)
	if e.Replica != "" {
		fmt.Fprintf(w, " replica=%s", e.Replica)
	}
	if len(e.Headers) > 0 {
		parts := make([]string, len(e.Headers))
		for i, h := range e.Headers {
			parts[i] = unquote(h.Key) + "=" + unquote(h.Value)
		}
		fmt.Fprintf(w, " [%s]", strings.Join(parts, " "))
	}
	payload := string(e.Payload)
	if e.Encoding != "" {
		payload = e.Encoding + ":" + unquote(e.Payload)
	}
	fmt.Fprintf(w, " %s", payload)
	if e.Error != "" {
		fmt.Fprintf(w, " error=%q", e.Error)
	}
	w.WriteByte('\n')
}

// unquote shows a JSON string as its text, any other value as written.
func unquote(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}
