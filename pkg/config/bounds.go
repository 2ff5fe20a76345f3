package config

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// Bounds of a connector document, from any source (API body, file, HTTP provider, env): a small
// body nested thousands deep renders as a TOML file growing with the square of the depth, so
// depth and size are refused before anything is rendered or stored.
const (
	// MaxNestingDepth is the deepest a value may sit, counting the document itself as level 1.
	MaxNestingDepth = 64
	// MaxElements is the most values (tables, arrays and scalars) one document may hold.
	MaxElements = 100_000
)

// ErrOverLimit marks a connector document refused for its depth, its number of values or the
// size of its rendering; such an error is an ErrInvalidConnector too.
var ErrOverLimit = errors.New("over a limit")

// limitError is a connector document over one of the bounds.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

func (e *limitError) Is(target error) bool {
	return target == ErrOverLimit || target == ErrInvalidConnector
}

func overLimit(format string, args ...any) error {
	return &limitError{msg: ErrInvalidConnector.Error() + ": " + fmt.Sprintf(format, args...)}
}

// checkBounds walks a decoded document (this package's JSON-like values) and refuses it when a
// value sits deeper than MaxNestingDepth or it holds more than MaxElements values. The error
// names the source and the key.
func checkBounds(name string, doc map[string]any) error {
	count := 0
	var walk func(v any, path []string) error
	walk = func(v any, path []string) error {
		count++
		if count > MaxElements {
			return overLimit("%s: key %s: the document holds more than %d values (the limit)", name, boundsPath(path), MaxElements)
		}
		if len(path) >= MaxNestingDepth {
			return overLimit("%s: key %s: nested deeper than %d levels (the limit)", name, boundsPath(path), MaxNestingDepth)
		}
		switch t := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(t) {
				if err := walk(t[k], append(path, k)); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range t {
				if err := walk(e, append(path, fmt.Sprintf("[%d]", i))); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(doc, nil)
}

// boundsPath writes a key path for an error, its first steps only (it may be 64 keys long).
func boundsPath(path []string) string {
	const shown = 6
	var b strings.Builder
	for i, step := range path {
		if i == shown {
			fmt.Fprintf(&b, "... (%d levels)", len(path))
			break
		}
		if i > 0 && !strings.HasPrefix(step, "[") {
			b.WriteByte('.')
		}
		b.WriteString(step)
	}
	return b.String()
}

// limitWriter is a buffer that refuses to grow past limit bytes (0: no limit), so an encoder
// writing into it stops as soon as its output is too large instead of building all of it.
type limitWriter struct {
	buf   bytes.Buffer
	limit int
	over  bool // a write was refused; every later one is too
}

var errRenderLimit = errors.New("rendering over the limit")

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.over || w.limit > 0 && w.buf.Len()+len(p) > w.limit {
		w.over = true
		return 0, errRenderLimit
	}
	return w.buf.Write(p)
}

func (w *limitWriter) WriteString(s string) { _, _ = w.Write([]byte(s)) }

// renderTooLarge is the error for a TOML rendering of key (in the connector name, when given)
// that outgrew limit bytes.
func renderTooLarge(name, key string, limit int) error {
	if name != "" {
		name += ": "
	}
	return overLimit("%skey %s: its TOML rendering is larger than %d bytes (http.max_body_bytes, the limit)", name, key, limit)
}

// RenderTOML writes a table (a plugin_config, say) as TOML, refusing (ErrOverLimit, naming key)
// an output larger than limit bytes; 0 is no limit. The encoder stops at the limit, so a table
// whose rendering would be huge costs no more than limit bytes of work.
func RenderTOML(key string, table map[string]any, limit int) ([]byte, error) {
	w := &limitWriter{limit: limit}
	if err := toml.NewEncoder(w).Encode(table); err != nil {
		if errors.Is(err, errRenderLimit) {
			return nil, renderTooLarge("", key, limit)
		}
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// RenderYAML is MarshalYAML refusing (ErrOverLimit, naming key) an output larger than limit
// bytes; 0 is no limit. YAML output grows linearly with the value, which the parse bounds
// keep small, so it is measured once written.
func RenderYAML(key string, v any, limit int) ([]byte, error) {
	out := MarshalYAML(v)
	if limit > 0 && len(out) > limit {
		return nil, overLimit("key %s: its YAML rendering is larger than %d bytes (http.max_body_bytes, the limit)", key, limit)
	}
	return out, nil
}

// MarshalDocumentWithin is MarshalDocument refusing (ErrOverLimit) a document larger than limit
// bytes, naming its largest section; 0 is no limit.
func (c Connector) MarshalDocumentWithin(format string, limit int) ([]byte, error) {
	if format == "toml" {
		return c.MarshalTOMLWithin(limit)
	}
	doc, err := c.MarshalDocument(format)
	if err != nil || limit <= 0 || len(doc) <= limit {
		return doc, err
	}
	largest, size := "streams", 0
	for key, v := range map[string]any{"plugin_config": c.PluginConfig, "transforms": c.Transforms, "streams": c.document()["streams"]} {
		if n := len(appendJSON(nil, v)); n > size {
			largest, size = key, n
		}
	}
	return nil, overLimit("%s %q: key %s: the %s document is %d bytes, larger than %d bytes (http.max_body_bytes, the limit)",
		c.Kind, c.Key, largest, format, len(doc), limit)
}
