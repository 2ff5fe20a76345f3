package logging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
)

// Formats of the log output ([logging] format).
const (
	FormatText = "text"
	FormatJSON = "json"
)

// ErrBadFormat is returned for a format other than "text" or "json".
var ErrBadFormat = errors.New("invalid logging format")

// Options configures NewHandler.
type Options struct {
	// Format is FormatText (also when empty) or FormatJSON.
	Format string
	// Filter is a RUST_LOG-style directive list (see ParseFilter); "" means
	// DefaultFilter.
	Filter string
	// Target is the target of records that name none (no "target" or
	// "connector_target" attribute). Empty means TargetRuntime.
	Target string
	// Also receive every record that passes the filter, after the output
	// (for example the OpenTelemetry log bridge). Nil entries are skipped.
	Also []slog.Handler
	// Attrs are added to every line (a runner passes its connector key).
	Attrs []slog.Attr
	// LenientFilter: an unparsable Filter falls back to DefaultFilter, as
	// upstream does with a bad RUST_LOG, and the first line written is a
	// warning naming the problem. Otherwise it is an error.
	LenientFilter bool
}

// Handler is a slog.Handler that filters records per target, writes the
// survivors as text or one JSON object per line, and hands them to any extra
// handlers.
type Handler struct {
	filter  *filterVar // shared by every handler derived from one NewHandler: SetFilter reaches them all
	target  string     // target of records that name none; set by WithAttrs too
	plugin  string     // the plugin's own target when WithAttrs set a connector_target
	grouped bool       // inside WithGroup: record attributes cannot name a target
	outs    []slog.Handler
}

// New returns a logger writing to w in format ("text" or "json") filtered by
// filter (RUST_LOG style), with attrs on every line.
func New(w io.Writer, format, filter string, attrs ...slog.Attr) (*slog.Logger, error) {
	h, err := NewHandler(w, Options{Format: format, Filter: filter, Attrs: attrs})
	if err != nil {
		return nil, err
	}
	return slog.New(h), nil
}

// NewHandler builds a Handler writing to w.
func NewHandler(w io.Writer, o Options) (*Handler, error) {
	f, err := ParseFilter(o.Filter)
	var filterProblem error
	if err != nil {
		if !o.LenientFilter {
			return nil, err
		}
		filterProblem, f = err, MustParseFilter(DefaultFilter)
	}
	// The filter decides; the formatter writes whatever reaches it.
	fo := &slog.HandlerOptions{Level: slog.Level(math.MinInt32), ReplaceAttr: nameLevel}
	var out slog.Handler
	switch o.Format {
	case "", FormatText:
		out = slog.NewTextHandler(w, fo)
	case FormatJSON:
		out = slog.NewJSONHandler(w, fo)
	default:
		return nil, fmt.Errorf("%w %q: must be %q or %q", ErrBadFormat, o.Format, FormatText, FormatJSON)
	}
	h := &Handler{filter: newFilterVar(f), target: o.Target, outs: []slog.Handler{out}}
	if h.target == "" {
		h.target = TargetRuntime
	}
	for _, extra := range o.Also {
		if extra != nil {
			h.outs = append(h.outs, extra)
		}
	}
	if len(o.Attrs) > 0 {
		h = h.WithAttrs(o.Attrs).(*Handler)
	}
	if filterProblem != nil {
		slog.New(h).Warn("log filter ignored; using the default", "filter", o.Filter, "default", DefaultFilter, "error", filterProblem)
	}
	return h, nil
}

// nameLevel writes LevelTrace as "TRACE" instead of slog's "DEBUG-4".
func nameLevel(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok {
			return slog.String(slog.LevelKey, LevelName(l))
		}
	}
	return a
}

// OutputOnly is the same handler without the extra handlers, sharing the
// output (and its lock). The supervisor relays runner lines through it: a
// runner exports its own records, so the supervisor must not export them
// again.
func (h *Handler) OutputOnly() *Handler {
	c := *h
	c.outs = h.outs[:1:1]
	return &c
}

// Filter returns the handler's current filter.
func (h *Handler) Filter() Filter { return h.filter.load() }

// SetFilter replaces the filter of this handler and of every handler derived from the same
// NewHandler (WithAttrs, WithGroup, OutputOnly, loggers built on them), from the next record on:
// a log level changed at run time (filtervar.go).
func (h *Handler) SetFilter(f Filter) { h.filter.store(f) }

// Enabled is true when some target enables level; Handle then decides by the
// record's own target.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.filter.load().min
}

// Handle filters r by its target and passes it to every output.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	f := h.filter.load()
	if !f.enabledFor(h.recordTarget(f, r), r.Level) {
		return nil
	}
	var errs []error
	for _, out := range h.outs {
		if !out.Enabled(ctx, r.Level) {
			continue
		}
		if err := out.Handle(ctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// recordTarget is the record's "target" attribute, else TargetPlugin for a
// plugin line (it has "connector_target", kept as the plugin's own target),
// else the handler's target.
func (h *Handler) recordTarget(f Filter, r slog.Record) recordTarget {
	if !f.hasTargets() || h.grouped {
		return recordTarget{target: h.target, plugin: h.plugin}
	}
	t := recordTarget{target: h.target, plugin: h.plugin}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case KeyTarget:
			t = recordTarget{target: a.Value.String()}
			return false
		case KeyConnectorTarget:
			t = recordTarget{target: TargetPlugin, plugin: a.Value.String()}
		}
		return true
	})
	return t
}

// WithAttrs returns a handler whose records carry attrs; a "target"
// attribute becomes the target of its records.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	c := h.clone()
	if !h.grouped {
		for _, a := range attrs {
			switch a.Key {
			case KeyTarget:
				c.target, c.plugin = a.Value.String(), ""
			case KeyConnectorTarget:
				c.target, c.plugin = TargetPlugin, a.Value.String()
			}
		}
	}
	for i, out := range c.outs {
		c.outs[i] = out.WithAttrs(attrs)
	}
	return c
}

// WithGroup returns a handler that nests later attributes under name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := h.clone()
	c.grouped = true
	for i, out := range c.outs {
		c.outs[i] = out.WithGroup(name)
	}
	return c
}

func (h *Handler) clone() *Handler {
	c := *h
	c.outs = append([]slog.Handler(nil), h.outs...)
	return &c
}
