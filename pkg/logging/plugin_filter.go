package logging

import (
	"log/slog"
	"strings"
)

// PluginFilter is the RUST_LOG a plugin should be opened with under host filter f: plugins filter
// their own lines from their first open on (upstream's SDK reads RUST_LOG then, and so does the
// C plugins' helper), so the plugin is told what the host lets through of its lines, the
// TargetPlugin level as its default and every directive naming a plugin's own target. A ceiling
// more verbose than that (IGGY_CONNECTOR_PLUGIN_LOG_CEILING; LevelOff for none) lowers them all
// to it, so a later run-time change up to the ceiling reaches the plugin's lines too, at the cost
// of the plugin formatting and handing over lines the host then drops.
func PluginFilter(f Filter, ceiling slog.Level) string {
	def := min(f.Level(TargetPlugin), ceiling)
	parts := []string{strings.ToLower(LevelName(def))}
	for i := len(f.targets) - 1; i >= 0; i-- { // shortest first: the later, more specific, wins
		t := f.targets[i]
		if strings.HasPrefix(t.target, TargetRuntime) || strings.HasPrefix(TargetPlugin, t.target) {
			continue // the host's own targets mean nothing inside a plugin
		}
		parts = append(parts, t.target+"="+strings.ToLower(LevelName(min(t.level, ceiling))))
	}
	return strings.Join(parts, ",")
}

// ParseLevel reads one level word (trace, debug, info, warn, error, off or 5..0), as a RUST_LOG
// directive's level.
func ParseLevel(s string) (slog.Level, error) { return parseLevel(strings.TrimSpace(s)) }
