package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/plugin"
	"github.com/iggy-connectors-go/runtime/pkg/pluginpath"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// checkIggyTimeout bounds connecting to Iggy and looking the sink's topics up in a check.
const checkIggyTimeout = 10 * time.Second

// Problem is one reason the connector would not start: the field of the connector document it is
// about ("streams[0].batch_length", "transforms.add_fields", "path", "plugin_config"), or "iggy"
// (the server cannot be reached) or "config" (the settings as a whole), and why.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// CheckMain is `iggy-connector-runner --check`: Check over environ, one "field: message" line per
// problem on stdout, exit status runnerproc.ExitOK when there is none, ExitConfig otherwise.
func CheckMain(ctx context.Context, environ []string, stdout io.Writer) int {
	defer logging.RouteStdlib(slog.New(slog.DiscardHandler))() // the SDK's chatter is no problem line
	problems := Check(ctx, environ)
	for _, p := range problems {
		fmt.Fprintln(stdout, runnerproc.CheckLine(p.Field, p.Message))
	}
	if len(problems) > 0 {
		return runnerproc.ExitConfig
	}
	return runnerproc.ExitOK
}

// Check makes every check a start makes, without starting anything: the settings and the
// connector document (schemas, transforms, durations), the plugin path (it resolves and is in an
// allowed directory), the library (it loads and exports the symbols of its kind; loading runs its
// initialisers, but nothing is opened) and, for a sink, that every stream and topic exists on
// Iggy. It returns every problem found; none means the connector would start.
func Check(ctx context.Context, environ []string) []Problem {
	loadCtx, cancel := context.WithTimeout(ctx, time.Minute)
	s, err := LoadSettings(loadCtx, environ)
	cancel()
	if err != nil {
		return []Problem{problemOf(err, "config")}
	}
	var problems []Problem
	if _, err := buildSpec(s.Connector); err != nil {
		problems = append(problems, problemOf(err, "config"))
	}
	if p := checkPlugin(s); p != nil {
		problems = append(problems, *p)
	}
	if s.Connector.Kind == config.KindSink {
		problems = append(problems, checkSinkTopics(ctx, s)...)
	}
	return problems
}

// problemOf is err as a problem of the field it names, else of fallback.
func problemOf(err error, fallback string) Problem {
	field, msg := config.ErrorField(err.Error())
	if field == "" {
		field = fallback
	}
	return Problem{Field: field, Message: msg}
}

// checkPlugin checks what runSink and runSource check before they open the plugin.
func checkPlugin(s Settings) *Problem {
	c := s.Connector
	if c.Path == "" {
		return nil // buildSpec reported it
	}
	bad := func(err error) *Problem { return &Problem{Field: "path", Message: err.Error()} }
	path, err := pluginpath.ResolvePath(c.Path)
	if err != nil {
		return bad(fmt.Errorf("Failed to resolve plugin path: %w", err))
	}
	if _, err := pluginAllowList(s.Runtime.Plugins.AllowedDirs, c.Path).Check(path); err != nil {
		return bad(err)
	}
	if c.Kind == config.KindSink {
		_, err = plugin.LoadSink(path)
	} else {
		_, err = plugin.LoadSource(path)
	}
	if err != nil {
		return bad(err)
	}
	return nil
}

// checkSinkTopics checks that every stream and topic the sink reads exists (a sink never creates
// them, docs/pipeline.md §1.1).
func checkSinkTopics(ctx context.Context, s Settings) []Problem {
	ctx, cancel := context.WithTimeout(ctx, checkIggyTimeout)
	defer cancel()
	admin, err := iggyclient.DialAdmin(ctx, s.Iggy.options(s.Env, slog.New(slog.DiscardHandler)))
	if err != nil {
		return []Problem{{Field: "iggy", Message: fmt.Sprintf("cannot check the streams and topics: %v", err)}}
	}
	defer admin.Close()
	var problems []Problem
	for i, e := range s.Connector.Streams {
		if e.Stream == "" {
			continue // buildSpec reported it
		}
		for j, topic := range e.Topics {
			_, err := admin.Partitions(ctx, e.Stream, topic)
			if err == nil {
				continue
			}
			if !errors.Is(err, iggyclient.ErrNotFound) {
				problems = append(problems, Problem{Field: fmt.Sprintf("streams[%d].topics[%d]", i, j), Message: err.Error()})
				continue
			}
			if exists, serr := admin.StreamExists(ctx, e.Stream); serr == nil && !exists {
				problems = append(problems, Problem{Field: fmt.Sprintf("streams[%d].stream", i),
					Message: fmt.Sprintf("stream %q does not exist on Iggy at %s (a sink never creates it)", e.Stream, s.Iggy.Address)})
				break
			}
			problems = append(problems, Problem{Field: fmt.Sprintf("streams[%d].topics[%d]", i, j),
				Message: fmt.Sprintf("topic %q does not exist in stream %q on Iggy at %s (a sink never creates it)", topic, e.Stream, s.Iggy.Address)})
		}
	}
	return problems
}
