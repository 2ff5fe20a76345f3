package supervisor

import "net/http"

// router is what the route tables register on (api.go for the spawn mode, fleet_api.go for attach
// mode): an http.ServeMux, or a routeTable that also keeps the patterns.
type router interface {
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
	Handle(pattern string, handler http.Handler)
}

// routeTable is the API's ServeMux with the patterns registered on it, in order ("GET
// /sinks/{key}"), so the two modes' tables can be compared (routes_internal_test.go).
type routeTable struct {
	*http.ServeMux
	patterns []string
}

func newRouteTable() *routeTable { return &routeTable{ServeMux: http.NewServeMux()} }

// HandleFunc registers handler for pattern and keeps the pattern.
func (t *routeTable) HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request)) {
	t.patterns = append(t.patterns, pattern)
	t.ServeMux.HandleFunc(pattern, handler)
}

// Handle registers handler for pattern and keeps the pattern.
func (t *routeTable) Handle(pattern string, handler http.Handler) {
	t.patterns = append(t.patterns, pattern)
	t.ServeMux.Handle(pattern, handler)
}
