package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/fleet"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// Answer headers of attach mode (additive): how old the snapshot behind an answer is, and
// whether it may be behind (a refresh is running, or the last is overdue).
const (
	headerFleetStale = "Iggy-Fleet-Stale"
	headerFleetAge   = "Iggy-Fleet-Age-Ms"
)

// fleetRoutes registers the API of attach mode: the same routes and shapes as the spawn mode's,
// read from the last fleet snapshot; what would change a config or a process answers 409, since
// the orchestrator owns both.
func (s *Supervisor) fleetRoutes() (*routeTable, error) {
	mux := newRouteTable()
	if err := s.baseRoutes(mux, s.fleetRead(s.handleFleetStats), s.fleetRead(s.handleFleetMetrics)); err != nil {
		return nil, err
	}
	// A runner answers POST /pause once its batch in flight settled, as in the spawn mode.
	forward := s.env.DrainTimeout + time.Second
	for _, kind := range []config.ConnectorKind{config.KindSink, config.KindSource} {
		base := "/" + kind.Plural()
		read := func(h fleetHandler) http.HandlerFunc { return s.fleetRead(s.withKind(kind, s.fleetConnector(h))) }
		mux.HandleFunc("GET "+base, s.fleetRead(s.withKind(kind, s.handleFleetList)))
		mux.HandleFunc("GET "+base+"/{key}", read(s.handleFleetGet))
		mux.HandleFunc("GET "+base+"/{key}/transforms", read(s.handleFleetTransforms))
		mux.HandleFunc("GET "+base+"/{key}/configs", read(s.handleFleetVersions))
		mux.HandleFunc("GET "+base+"/{key}/configs/{version}", read(s.handleFleetVersion))
		mux.HandleFunc("GET "+base+"/{key}/configs/active", read(s.handleFleetActive))
		mux.HandleFunc("GET "+base+"/{key}/configs/plugin", read(s.handleFleetPluginConfig))
		for _, route := range []string{"POST " + base + "/{key}/configs", "PUT " + base + "/{key}/configs/active",
			"DELETE " + base + "/{key}/configs", "POST " + base + "/{key}/configs/validate"} {
			mux.HandleFunc(route, ownedByOrchestrator("the connector configs", "change them where the runners are deployed (their IGGY_CONNECTOR_CONFIG or config file)"))
		}
		fleetPreviewRoutes(mux, base) // api_preview.go
		for _, op := range []string{opStop, opStart, "restart"} {
			mux.HandleFunc("POST "+base+"/{key}/"+op, ownedByOrchestrator("the runner processes", "scale, stop or restart them there"))
		}
		for _, op := range []string{opPause, opResume} {
			mux.HandleFunc("POST "+base+"/{key}/"+op, s.withBudget(forward, s.fleetRead(s.withKind(kind, s.fleetConnector(s.fleetForward("/"+op))))))
		}
		offsetsGet := http.HandlerFunc(ownedByOrchestrator("the source state", "read it from the runner's state backend"))
		if kind == config.KindSink {
			offsetsGet = s.offsetsCalls.admit("offsets", s.withBudget(s.slowBudget(), read(s.handleFleetSinkOffsets)))
		}
		mux.HandleFunc("GET "+base+"/{key}/offsets", offsetsGet)
		for _, method := range []string{"PUT", "DELETE"} {
			mux.HandleFunc(method+" "+base+"/{key}/offsets", ownedByOrchestrator("the runner processes",
				"offsets change only while the connector is stopped: stop its runners there, then change them with a supervisor that runs the connector or with Iggy's tools"))
		}
		s.fleetRuntimeRoutes(mux, base, kind) // log_level, rate_limit: fleet_runtime.go
		s.tapRoutes(mux, base, kind)          // api_tap.go, api_logs.go: merged over the replicas
	}
	s.globalLogLevelRoutes(mux)
	return mux, nil
}

// ownedByOrchestrator answers 409: in attach mode the orchestrator owns what, so do that there.
func ownedByOrchestrator(what, doThere string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, &apiError{status: http.StatusConflict, Code: "attach_mode",
			Reason: fmt.Sprintf("attach mode ([fleet] enabled): the orchestrator owns %s, so %s %s is not served here; %s", what, r.Method, r.URL.Path, doThere)})
	}
}

// fleetRead marks an answer with the age of the snapshot it was built from.
func (s *Supervisor) fleetRead(h http.HandlerFunc) http.HandlerFunc {
	view := s.fleet.view
	return func(w http.ResponseWriter, r *http.Request) {
		age := time.Since(view.Snapshot().Taken)
		w.Header().Set(headerFleetAge, strconv.FormatInt(age.Milliseconds(), 10))
		w.Header().Set(headerFleetStale, strconv.FormatBool(view.Stale()))
		h(w, r)
	}
}

// fleetHandler serves a route of one connector of the snapshot.
type fleetHandler func(w http.ResponseWriter, r *http.Request, c fleetConnector)

// fleetConnector is one connector of the fleet: its replicas and the config they run.
type fleetConnector struct {
	kind     config.ConnectorKind
	id       uint32
	replicas []fleet.Replica
	cfg      config.Connector
	hasCfg   bool
	primary  fleet.Replica // the replica the connector's status, pid and error come from
}

// fleetConnector finds the path's connector in the snapshot or answers 404.
func (s *Supervisor) fleetConnector(h fleetHandler) kindHandler {
	return func(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
		key := r.PathValue("key")
		for _, c := range s.fleetConnectors(kind) {
			if c.primary.Key == key {
				h(w, r, c)
				return
			}
		}
		writeAPIError(w, notRunning(kind, key))
	}
}

// fleetConnectors lists the connectors of kind in the current snapshot, numbered from 1 in key
// order, sources first, as the spawn mode numbers them.
func (s *Supervisor) fleetConnectors(kind config.ConnectorKind) []fleetConnector {
	snap := s.fleet.view.Snapshot()
	id := uint32(0)
	var out []fleetConnector
	for _, k := range []config.ConnectorKind{config.KindSource, config.KindSink} {
		for _, c := range snap.Connectors(string(k)) {
			id++
			if k == kind {
				out = append(out, s.newFleetConnector(k, id, c.Replicas))
			}
		}
	}
	return out
}

func (s *Supervisor) newFleetConnector(kind config.ConnectorKind, id uint32, replicas []fleet.Replica) fleetConnector {
	c := fleetConnector{kind: kind, id: id, replicas: replicas, primary: primaryReplica(replicas)}
	// The config of the primary replica, else of any replica that showed one.
	for _, r := range append([]fleet.Replica{c.primary}, replicas...) {
		if len(r.Config) == 0 {
			continue
		}
		cfg, err := config.ParseConnectorBody(r.Endpoint+"/config", kind, r.Config)
		if err != nil {
			s.log.Warn("fleet: a runner's GET /config does not parse", "endpoint", r.Endpoint, "error", err)
			continue
		}
		c.cfg, c.hasCfg = cfg.MaskSecrets(s.secrets()), true
		break
	}
	return c
}

// primaryReplica is the replica that speaks for the connector: an active running one, else a
// running one, else a reachable one, else the most recently seen.
func primaryReplica(replicas []fleet.Replica) fleet.Replica {
	rank := func(r fleet.Replica) int {
		switch {
		case r.Status == statusRunning && r.Role != "standby":
			return 0
		case r.Status == statusRunning:
			return 1
		case r.Reachable():
			return 2
		}
		return 3
	}
	best := replicas[0]
	for _, r := range replicas[1:] {
		if rank(r) < rank(best) || (rank(r) == rank(best) && r.LastSeen.After(best.LastSeen)) {
			best = r
		}
	}
	return best
}

// replicaObject is an element of the "replicas" member attach mode adds to a connector's object.
type replicaObject struct {
	Endpoint  string             `json:"endpoint"`
	Status    string             `json:"status"`
	Role      string             `json:"role,omitempty"`
	PID       int32              `json:"pid"`
	LastSeen  uint64             `json:"last_seen"` // µs since epoch; 0 if never
	LastError *metrics.LastError `json:"last_error,omitempty"`
}

func replicaObjects(replicas []fleet.Replica) []replicaObject {
	out := make([]replicaObject, len(replicas))
	for i, r := range replicas {
		out[i] = replicaObject{Endpoint: r.Endpoint, Status: r.Status, Role: r.Role, PID: r.PID, LastError: r.LastError}
		if !r.LastSeen.IsZero() {
			out[i].LastSeen = uint64(r.LastSeen.UnixMicro())
		}
	}
	return out
}

// info is the connector's GET /sinks element, as the spawn mode's.
func (c fleetConnector) info() infoObject {
	p := c.primary
	o := infoObject{ID: c.id, Key: p.Key, Name: p.Stats.Name, Enabled: p.Stats.Enabled, Status: p.Status}
	if c.hasCfg {
		o.Name, o.Path, o.Enabled, o.PluginConfigFormat = c.cfg.Name, c.cfg.Path, c.cfg.Enabled, c.cfg.PluginConfigFormat
	}
	if p.Status != statusRunning {
		o.LastError = p.LastError
	}
	return o
}

type fleetInfoObject struct {
	infoObject
	Replicas []replicaObject `json:"replicas"`
}

type fleetDetailObject struct {
	detailObject
	Replicas []replicaObject `json:"replicas"`
}

func (s *Supervisor) handleFleetList(w http.ResponseWriter, _ *http.Request, kind config.ConnectorKind) {
	conns := s.fleetConnectors(kind)
	list := make([]fleetInfoObject, len(conns))
	for i, c := range conns {
		list[i] = fleetInfoObject{infoObject: c.info(), Replicas: replicaObjects(c.replicas)}
	}
	body, _ := json.Marshal(list)
	writeJSON(w, http.StatusOK, body)
}

// needConfig answers 404 (as for a missing config) when no replica showed its config yet.
func needConfig(w http.ResponseWriter, c fleetConnector) bool {
	if !c.hasCfg {
		writeAPIError(w, &apiError{status: http.StatusNotFound, Code: string(c.kind) + "_config_not_found",
			Reason: fmt.Sprintf("no runner of %s %q has shown its config (GET /config) yet", c.kind, c.primary.Key)})
	}
	return c.hasCfg
}

func (s *Supervisor) handleFleetGet(w http.ResponseWriter, _ *http.Request, c fleetConnector) {
	streams := json.RawMessage("[]")
	if c.hasCfg {
		var err error
		if streams, err = configMember(c.cfg, "streams"); err != nil {
			writeAPIError(w, internalError(err))
			return
		}
	}
	body, _ := json.Marshal(fleetDetailObject{detailObject: detailObject{infoObject: c.info(), Streams: streams}, Replicas: replicaObjects(c.replicas)})
	writeJSON(w, http.StatusOK, body)
}

func (s *Supervisor) handleFleetTransforms(w http.ResponseWriter, _ *http.Request, c fleetConnector) {
	if needConfig(w, c) {
		writeTransforms(w, c.cfg)
	}
}

// handleFleetVersions lists the one version the runners run: the orchestrator keeps the others.
func (s *Supervisor) handleFleetVersions(w http.ResponseWriter, _ *http.Request, c fleetConnector) {
	if needConfig(w, c) {
		writeJSON(w, http.StatusOK, append(append([]byte{'['}, c.cfg.VersionJSON(true)...), ']'))
	}
}

func (s *Supervisor) handleFleetVersion(w http.ResponseWriter, r *http.Request, c fleetConnector) {
	raw := r.PathValue("version")
	v, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Invalid URL: Cannot parse value at index 1 with value `%s` to a `u64`", raw))
		return
	}
	if !needConfig(w, c) {
		return
	}
	if c.cfg.Version != v {
		writeAPIError(w, &apiError{status: http.StatusNotFound, Code: string(c.kind) + "_config_not_found",
			Reason: fmt.Sprintf("attach mode: the runners of %s %q run version %d; other versions are kept by the orchestrator", c.kind, c.primary.Key, c.cfg.Version)})
		return
	}
	writeJSON(w, http.StatusOK, c.cfg.VersionJSON(true))
}

func (s *Supervisor) handleFleetActive(w http.ResponseWriter, _ *http.Request, c fleetConnector) {
	if needConfig(w, c) {
		writeJSON(w, http.StatusOK, c.cfg.VersionJSON(true))
	}
}

func (s *Supervisor) handleFleetPluginConfig(w http.ResponseWriter, r *http.Request, c fleetConnector) {
	if needConfig(w, c) {
		s.writePluginConfig(w, r, c.cfg)
	}
}

func (s *Supervisor) handleFleetSinkOffsets(w http.ResponseWriter, r *http.Request, c fleetConnector) {
	if needConfig(w, c) {
		s.writeSinkOffsets(w, r, c.cfg)
	}
}

// fleetForward sends POST path to every replica of the connector at once: 204 when all took it
// (or were in that state already), else 502 naming each replica that did not and why.
func (s *Supervisor) fleetForward(path string) fleetHandler {
	return func(w http.ResponseWriter, r *http.Request, c fleetConnector) {
		failures := make([]string, len(c.replicas))
		var wg sync.WaitGroup
		for i, rep := range c.replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, body, err := s.fleet.view.Call(context.WithoutCancel(r.Context()), s.env.DrainTimeout, http.MethodPost, rep.Endpoint, path)
				switch {
				case err != nil:
					failures[i] = fmt.Sprintf("%s: %v", rep.Endpoint, err)
				case status != http.StatusNoContent && status != http.StatusConflict:
					failures[i] = fmt.Sprintf("%s: status %d: %.200s", rep.Endpoint, status, body)
				}
			}()
		}
		wg.Wait()
		s.fleet.view.Kick() // the replicas' new status shows at the next refresh, started now
		var failed []string
		for _, f := range failures {
			if f != "" {
				failed = append(failed, f)
			}
		}
		if len(failed) > 0 {
			writeAPIError(w, &apiError{status: http.StatusBadGateway, Code: "replicas_failed",
				Reason: fmt.Sprintf("POST %s reached %d of %d replicas of %s %q; not taken by: %s",
					path, len(c.replicas)-len(failed), len(c.replicas), c.kind, c.primary.Key, strings.Join(failed, "; "))})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}
