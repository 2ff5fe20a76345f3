package logging

import (
	stdlog "log"
	"log/slog"
)

// RouteStdlib sends what libraries print with the standard log package (the Iggy SDK does) through
// log at debug level, tagged component=iggy_sdk, so every output line keeps the process's format
// and the SDK's chatter stays out of info. The returned func restores the previous output.
func RouteStdlib(log *slog.Logger) (restore func()) {
	prevOut, prevFlags := stdlog.Writer(), stdlog.Flags()
	stdlog.SetFlags(0)
	stdlog.SetOutput(slog.NewLogLogger(log.With("component", "iggy_sdk").Handler(), slog.LevelDebug).Writer())
	return func() {
		stdlog.SetOutput(prevOut)
		stdlog.SetFlags(prevFlags)
	}
}
