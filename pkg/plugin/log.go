package plugin

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/ebitengine/purego"
)

// LevelTrace is the slog level of plugin TRACE lines (below slog.LevelDebug).
const LevelTrace = slog.Level(-8)

// maxLogField bounds how much of a plugin's target or message is copied, so a
// bogus length cannot make the host read or allocate without limit.
const maxLogField = 64 << 10

var (
	pluginLogger   atomic.Pointer[slog.Logger]
	logCallbackPtr uintptr
	logCallbackSet sync.Once
)

// SetLogger sets where plugin log lines go. The caller attaches the connector
// key (l.With("connector", key)); each line carries the plugin's log target
// as connector_target. Until SetLogger is called, and after SetLogger(nil),
// slog.Default() is used.
func SetLogger(l *slog.Logger) { pluginLogger.Store(l) }

func currentLogger() *slog.Logger {
	if l := pluginLogger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// logCallback returns the process-wide log_cb. Plugins latch the callback of
// their first open for good, so there must be exactly one.
func logCallback() uintptr {
	logCallbackSet.Do(func() { logCallbackPtr = purego.NewCallback(onPluginLog) })
	return logCallbackPtr
}

// pluginLevel maps the ABI level byte; unknown values are errors, as upstream.
func pluginLevel(b uint8) slog.Level {
	switch b {
	case 0:
		return LevelTrace
	case 1:
		return slog.LevelDebug
	case 2:
		return slog.LevelInfo
	case 3:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// onPluginLog is the log_cb. It runs on plugin threads, concurrently; it copies
// both buffers before returning and never lets a panic escape into C.
//
// The record is handed to the logger synchronously, as upstream's tracing
// layer does: a line a plugin logs just before it crashes ("crashing at batch
// N") must reach the output, which a queue drained by a goroutine would lose.
// The callback therefore blocks only as long as the logger's handler does;
// it takes no lock of its own and never calls into a plugin.
func onPluginLog(level uint8, target *byte, targetLen uintptr, msg *byte, msgLen uintptr) {
	defer func() { _ = recover() }()
	lvl := pluginLevel(level)
	l := currentLogger()
	if !l.Enabled(context.Background(), lvl) {
		return // below every level the logger enables: nothing copied
	}
	tgt := copyText(target, targetLen, "connector")
	text := copyText(msg, msgLen, "<invalid utf8>")
	if lim := pluginLogLimit.Load(); lim != nil {
		ok, dropped := lim.admit(time.Now())
		if dropped > 0 {
			l.Warn("plugin log lines dropped over the limit", "dropped", dropped, "limit_per_second", lim.perSecond)
		}
		if !ok {
			return
		}
	}
	l.Log(context.Background(), lvl, text, slog.String("connector_target", tgt))
}

// copyText copies a plugin-owned byte range into a Go string, substituting
// invalid when it is not UTF-8 (upstream's behaviour).
func copyText(p *byte, n uintptr, invalid string) string {
	if p == nil || n == 0 {
		return ""
	}
	if n > maxLogField {
		n = maxLogField
	}
	s := string(unsafe.Slice(p, n))
	if !utf8.ValidString(s) {
		if n == maxLogField {
			return strings.ToValidUTF8(s, "\uFFFD") // cut mid-rune by the bound
		}
		return invalid
	}
	return s
}
