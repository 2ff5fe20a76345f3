package supervisor

import (
	"strings"

	"github.com/iggy-connectors-go/runtime/supervisor/console"
)

// consoleRoutes serves the operations console (package console) under /ui/ in both modes, unless
// [http.ui] enabled = false. The page holds no data and pkg/httpguard lets it through without the
// key; everything it shows comes from the API routes, with the key a script would send.
func (s *Supervisor) consoleRoutes(mux router) {
	if !s.runtime.HTTP.UI.Enabled {
		return
	}
	h := console.Handler()
	mux.Handle("GET "+console.Path, h)
	mux.Handle("GET "+strings.TrimSuffix(console.Path, "/"), h) // redirected to the path with its slash
}

// consoleURL is the console's address on the bound listener, for the startup line; "" when off.
func (s *Supervisor) consoleURL(bound string) string {
	h := s.runtime.HTTP
	if !h.UI.Enabled {
		return ""
	}
	scheme := "http"
	if h.TLS.Enabled {
		scheme = "https"
	}
	return scheme + "://" + bound + console.Path
}
