package runner

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// parseLevel maps IGGY_CONNECTOR_LOG_LEVEL to a slog level.
func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "trace", "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown level (want debug, info, warn or error)")
}

// NewLogger builds the process logger: format "json" or "text" (IGGY_CONNECTORS_LOGGING_FORMAT),
// level from IGGY_CONNECTOR_LOG_LEVEL.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	lvl, err := parseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("logging format %q: must be text or json", format)
}
