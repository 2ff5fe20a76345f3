package ctl

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
)

const logsUsage = "logs sinks/KEY|sources/KEY [--tail N] [--level warn] [--follow] [--url URL] [--api-key KEY] [--format json|text]"

// runLogs prints a connector's recent log records, oldest first: JSON lines (the server's record
// shape), or readable lines with --format text. --follow then goes on with every new record until
// Ctrl-C.
func runLogs(ctx context.Context, args []string, env Env) int {
	fs := newFlagSet("logs", logsUsage, env)
	cf := addClientFlags(fs, env)
	tail := fs.Int("tail", 0, "the last N records (0: every record the server keeps)")
	level := fs.String("level", "", "records at this level or above: trace, debug, info, warn, error")
	follow := fs.Bool("follow", false, "go on printing new records as they come")
	path, code, ok := target("logs", fs, args, env)
	if !ok {
		return code
	}
	c, err := cf.client()
	if err == nil && *level != "" {
		_, err = logging.ParseRecordLevel(*level)
		if err != nil {
			err = fmt.Errorf("--%w", err)
		}
	}
	if err == nil && *tail < 0 {
		err = fmt.Errorf("--tail %d: want 0 or more", *tail)
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "iggy-connectors logs:", err)
		return ExitUsage
	}
	q := url.Values{}
	if *tail > 0 {
		q.Set("tail", strconv.Itoa(*tail))
	}
	if *level != "" {
		q.Set("level", *level)
	}
	if *follow {
		q.Set("follow", "true")
	}
	path += "/logs"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	resp, err := c.get(ctx, path)
	if err != nil {
		return failed(ctx, "logs", err, env)
	}
	defer resp.Body.Close()
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	emit := func(line []byte) {
		if c.text {
			writeRecordText(out, line)
		} else {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	if !*follow {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			emit(sc.Bytes())
		}
		if err := sc.Err(); err != nil {
			return failed(ctx, "logs", err, env)
		}
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "iggy-connectors logs: following %s at %s; Ctrl-C to stop\n", strings.TrimPrefix(path[:strings.Index(path, "/logs")], "/"), c.base)
	stream := eventStream{name: "logs", ended: "the server ended the stream", notReached: "followed"}
	return stream.follow(ctx, resp.Body, out, env, func(m tap.Message) (int, bool) {
		switch m.Event {
		case tap.EventLog:
			emit(m.Data)
			out.Flush()
		case tap.EventEnd:
			out.Flush()
			fmt.Fprintln(env.Stderr, "iggy-connectors logs: the server is shutting down")
			return ExitOK, true
		}
		return 0, false
	})
}

// writeRecordText writes one log record as a line for people:
// TIME LEVEL [origin replica] target: message key=value ...
func writeRecordText(w *bufio.Writer, line []byte) {
	var r logging.Record
	if err := json.Unmarshal(line, &r); err != nil {
		w.Write(line)
		w.WriteByte('\n')
		return
	}
	who := r.Origin
	if r.Replica != "" {
		who += " " + r.Replica
	}
	fmt.Fprintf(w, "%s %-5s [%s] %s: %s", r.Time, r.Level, who, r.Target, r.Message)
	keys := make([]string, 0, len(r.Fields))
	for k := range r.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := r.Fields[k]
		var text string
		if s, ok := v.(string); ok {
			text = s
			if strings.ContainsAny(s, " \t\"=") || s == "" {
				text = strconv.Quote(s)
			}
		} else {
			b, _ := json.Marshal(v)
			text = string(b)
		}
		fmt.Fprintf(w, " %s=%s", k, text)
	}
	w.WriteByte('\n')
}
