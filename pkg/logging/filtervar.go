package logging

import (
	"log/slog"
	"strings"
	"sync/atomic"
)

// filterVar holds a handler's filter behind an atomic pointer, read once per record, so a log
// level changed at run time (a runner's PUT /log_level, the supervisor's own) takes effect on the
// next record of every logger built on the handler, without a lock on the logging path.
type filterVar struct{ p atomic.Pointer[Filter] }

func newFilterVar(f Filter) *filterVar {
	v := &filterVar{}
	v.store(f)
	return v
}

func (v *filterVar) load() Filter { return *v.p.Load() }

func (v *filterVar) store(f Filter) { v.p.Store(&f) }

// recordTarget is what a record is filtered by: its target, and for a plugin line (target
// TargetPlugin) the plugin's own target as well (its connector_target).
type recordTarget struct {
	target string
	plugin string // "" unless a plugin line
}

// enabledFor reports whether a record of level passes. A plugin line is judged by the most
// specific directive naming its own target (as the plugin's RUST_LOG would judge it,
// "iggy_connector_stdout_sink=trace"), and without one by the TargetPlugin level, so "connector=debug"
// keeps meaning every plugin's lines.
func (f Filter) enabledFor(t recordTarget, level slog.Level) bool {
	if t.plugin != "" {
		for _, d := range f.targets { // longest first
			if strings.HasPrefix(t.plugin, d.target) && !strings.HasPrefix(TargetPlugin, d.target) {
				return level >= d.level
			}
		}
	}
	return f.Enabled(t.target, level)
}
