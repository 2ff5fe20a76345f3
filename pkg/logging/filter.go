package logging

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"unicode/utf8"
)

// Levels beyond slog's four. LevelTrace matches pkg/plugin's level for a
// plugin's TRACE lines; LevelOff is above every record, so it disables.
const (
	LevelTrace = slog.Level(-8)
	LevelOff   = slog.Level(math.MaxInt32)
)

// Well-known targets, named as upstream's tracing targets so one RUST_LOG
// value means the same thing to iggy-connectors upstream and here.
const (
	// TargetRuntime is the default target of supervisor lines.
	TargetRuntime = "iggy_connectors"
	// TargetRunner is the default target of runner lines. It sits under
	// TargetRuntime, so "iggy_connectors=debug" covers runners too.
	TargetRunner = "iggy_connectors::runner"
	// TargetBenchmark is the target of the per-batch benchmark events.
	TargetBenchmark = "iggy_connectors::benchmark"
	// TargetPlugin is the target of lines a plugin logs through the log
	// callback (they carry their own target as connector_target).
	TargetPlugin = "connector"
)

// Attribute keys the handler reads to find a record's target.
const (
	KeyTarget          = "target"
	KeyConnectorTarget = "connector_target"
)

// DefaultFilter applies when RUST_LOG is unset or empty.
const DefaultFilter = "info"

// ErrBadFilter is returned for a filter string that cannot be parsed.
// Upstream falls back to "info" in that case; callers may do the same.
var ErrBadFilter = errors.New("invalid log filter")

// Filter is a parsed RUST_LOG-style directive list: a default level plus a
// level per target. A directive's target matches every target it is a string
// prefix of (as tracing's EnvFilter does), and the longest matching directive
// wins. The zero Filter enables info and above.
type Filter struct {
	def     slog.Level
	targets []targetLevel // longest target first
	min     slog.Level    // the lowest level any directive enables
}

type targetLevel struct {
	target string
	level  slog.Level
}

// ParseFilter parses directives separated by commas: "LEVEL" sets the
// default, "TARGET=LEVEL" the level of a target and "TARGET" alone enables
// everything for it. Levels are trace, debug, info, warn, error and off (any
// case) or 0-5 (off to trace). A later directive for the same target wins.
// Span filters ("target[span]=level") are rejected. "" means DefaultFilter.
func ParseFilter(s string) (Filter, error) {
	if strings.TrimSpace(s) == "" {
		s = DefaultFilter
	}
	f := Filter{def: slog.LevelInfo}
	byTarget := map[string]slog.Level{}
	var order []string
	for _, raw := range strings.Split(s, ",") {
		d := strings.TrimSpace(raw)
		if d == "" {
			continue
		}
		if strings.ContainsAny(d, "[]{}") {
			return Filter{}, fmt.Errorf("%w: directive %q: span filters are not supported", ErrBadFilter, d)
		}
		target, levelText, hasLevel := strings.Cut(d, "=")
		target = strings.TrimSpace(target)
		if !hasLevel {
			if lvl, err := parseLevel(target); err == nil {
				f.def = lvl
				continue
			}
			if err := checkTarget(target); err != nil {
				return Filter{}, fmt.Errorf("%w: directive %q: %w", ErrBadFilter, d, err)
			}
			byTarget[target] = LevelTrace
			order = append(order, target)
			continue
		}
		lvl, err := parseLevel(strings.TrimSpace(levelText))
		if err != nil {
			return Filter{}, fmt.Errorf("%w: directive %q: %w", ErrBadFilter, d, err)
		}
		if err := checkTarget(target); err != nil {
			return Filter{}, fmt.Errorf("%w: directive %q: %w", ErrBadFilter, d, err)
		}
		byTarget[target] = lvl
		order = append(order, target)
	}
	f.min = f.def
	seen := map[string]bool{}
	for _, t := range order {
		if seen[t] {
			continue
		}
		seen[t] = true
		f.targets = append(f.targets, targetLevel{target: t, level: byTarget[t]})
		f.min = min(f.min, byTarget[t])
	}
	// Longest first, so the first prefix match is the most specific one.
	for i := 1; i < len(f.targets); i++ {
		for j := i; j > 0 && len(f.targets[j].target) > len(f.targets[j-1].target); j-- {
			f.targets[j], f.targets[j-1] = f.targets[j-1], f.targets[j]
		}
	}
	return f, nil
}

// MustParseFilter is ParseFilter for constant filters; it panics on error.
func MustParseFilter(s string) Filter {
	f, err := ParseFilter(s)
	if err != nil {
		panic(err)
	}
	return f
}

// Level is the lowest level enabled for target.
func (f Filter) Level(target string) slog.Level {
	for _, t := range f.targets {
		if strings.HasPrefix(target, t.target) {
			return t.level
		}
	}
	return f.def
}

// Enabled reports whether a record of level on target passes.
func (f Filter) Enabled(target string, level slog.Level) bool {
	return level >= f.Level(target)
}

// MinLevel is the lowest level enabled for any target: a cheap first check
// before the target of a record is known.
func (f Filter) MinLevel() slog.Level { return f.min }

// hasTargets reports whether any directive names a target; without one the
// target of a record never matters.
func (f Filter) hasTargets() bool { return len(f.targets) > 0 }

// String renders the filter in directive syntax, default level first.
func (f Filter) String() string {
	parts := []string{strings.ToLower(LevelName(f.def))}
	for _, t := range f.targets {
		parts = append(parts, t.target+"="+strings.ToLower(LevelName(t.level)))
	}
	return strings.Join(parts, ",")
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "trace", "5":
		return LevelTrace, nil
	case "debug", "4":
		return slog.LevelDebug, nil
	case "info", "3":
		return slog.LevelInfo, nil
	case "warn", "2":
		return slog.LevelWarn, nil
	case "error", "1":
		return slog.LevelError, nil
	case "off", "0":
		return LevelOff, nil
	}
	return 0, fmt.Errorf("unknown level %q (want trace, debug, info, warn, error or off)", s)
}

func checkTarget(t string) error {
	if t == "" {
		return errors.New("empty target")
	}
	if !utf8.ValidString(t) {
		return fmt.Errorf("target %q is not UTF-8", t)
	}
	if strings.ContainsAny(t, " \t\"=") {
		return fmt.Errorf("target %q has a space, quote or '='", t)
	}
	return nil
}

// LevelName is the name a level is written with: TRACE, DEBUG, INFO, WARN,
// ERROR, OFF, or slog's "INFO+2" style for levels in between.
func LevelName(l slog.Level) string {
	switch {
	case l == LevelOff:
		return "OFF"
	case l == LevelTrace:
		return "TRACE"
	}
	return l.String()
}
