package runner

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/telemetry"
)

// levelDirective checks IGGY_CONNECTOR_LOG_LEVEL and returns it as a filter directive. Unlike
// RUST_LOG it is a single level: a bare word would otherwise be read as a target name.
func levelDirective(level string) (string, error) {
	switch l := strings.ToLower(strings.TrimSpace(level)); l {
	case "":
		return logging.DefaultFilter, nil
	case "trace", "debug", "info", "warn", "error", "off":
		return l, nil
	case "warning":
		return "warn", nil
	}
	return "", fmt.Errorf("unknown level (want trace, debug, info, warn, error or off)")
}

// logFilter is the runner's log filter: RUST_LOG when set (as upstream), else the level of
// IGGY_CONNECTOR_LOG_LEVEL (validated by ParseEnv).
func logFilter(environ []string, level string) string {
	if rustLog := strings.TrimSpace(config.EnvMap(environ)["RUST_LOG"]); rustLog != "" {
		return rustLog
	}
	d, err := levelDirective(level)
	if err != nil {
		return logging.DefaultFilter
	}
	return d
}

// newProcessLogger builds the runner's logger: text or JSON lines on w filtered by filter (a bad
// RUST_LOG falls back to the default with a warning line, as upstream), every line carrying the
// connector's key and type, every record also handed to the telemetry log bridge when enabled
// and kept in ring (GET /logs) when not nil.
func newProcessLogger(w io.Writer, s Settings, filter string, tel *telemetry.Telemetry, ring *logging.Ring) (*slog.Logger, error) {
	also := []slog.Handler{tel.LogHandler()}
	if ring != nil {
		also = append(also, logging.NewRingHandler(ring, logging.OriginRunner, logging.TargetRunner, s.Runtime.HTTP.Secrets()))
	}
	h, err := logging.NewHandler(w, logging.Options{
		Format:        s.LogFormat,
		Filter:        filter,
		LenientFilter: true,
		Target:        logging.TargetRunner,
		Also:          also,
		Attrs: []slog.Attr{
			slog.String("connector_key", s.Connector.Key),
			slog.String("connector_type", string(s.Connector.Kind)),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("IGGY_CONNECTORS_LOGGING_FORMAT: %w", err)
	}
	return slog.New(h), nil
}
