package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
	"github.com/iggy-connectors-go/runtime/supervisor/console"
)

// routes registers every route of docs/http-api.md §3, and ours (docs/architecture.md, decision 13): the lifecycle, offsets,
// validate and preview routes.
func (s *Supervisor) routes() (*routeTable, error) {
	mux := newRouteTable()
	if err := s.baseRoutes(mux, s.handleStats, s.handleMetrics); err != nil {
		return nil, err
	}
	slow := s.slowBudget()
	for _, kind := range []config.ConnectorKind{config.KindSink, config.KindSource} {
		base := "/" + kind.Plural()
		mux.HandleFunc("GET "+base, s.withKind(kind, s.handleList))
		mux.HandleFunc("GET "+base+"/{key}", s.withKind(kind, s.handleGet))
		mux.HandleFunc("GET "+base+"/{key}/transforms", s.withKind(kind, s.handleTransforms))
		mux.HandleFunc("GET "+base+"/{key}/configs", s.withBudget(slow, s.withKind(kind, s.handleVersions)))
		mux.HandleFunc("POST "+base+"/{key}/configs", s.withBudget(slow, s.withKind(kind, s.handleCreate)))
		mux.HandleFunc("DELETE "+base+"/{key}/configs", s.withBudget(slow, s.withKind(kind, s.handleDelete)))
		mux.HandleFunc("GET "+base+"/{key}/configs/{version}", s.withBudget(slow, s.withKind(kind, s.handleVersion)))
		mux.HandleFunc("GET "+base+"/{key}/configs/active", s.withKind(kind, s.handleActive))
		mux.HandleFunc("PUT "+base+"/{key}/configs/active", s.withBudget(slow, s.withKind(kind, s.handleSetActive)))
		mux.HandleFunc("GET "+base+"/{key}/configs/plugin", s.withKind(kind, s.handlePluginConfig))
		mux.HandleFunc("POST "+base+"/{key}/restart", s.withBudget(slow, s.withKind(kind, s.connectorOp(s.restart))))
		s.lifecycleRoutes(mux, base, kind, slow)
		s.offsetRoutes(mux, base, kind)    // api_offsets.go
		s.validateRoutes(mux, base, kind)  // api_validate.go
		s.previewRoutes(mux, base, kind)   // api_preview.go
		s.logLevelRoutes(mux, base, kind)  // api_loglevel.go
		s.rateLimitRoutes(mux, base, kind) // api_ratelimit.go
		s.tapRoutes(mux, base, kind)       // api_tap.go, api_logs.go
	}
	s.globalLogLevelRoutes(mux)
	return mux, nil
}

// baseRoutes registers /, /health, /stats, the console and the metrics route, in both modes.
func (s *Supervisor) baseRoutes(mux router, stats, metrics http.HandlerFunc) error {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "Connector Runtime API")
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, []byte(`{"status":"healthy"}`))
	})
	mux.HandleFunc("GET /stats", s.withBudget(s.env.RunnerCallLimit, stats))
	s.consoleRoutes(mux) // api_console.go
	if m := s.runtime.HTTP.Metrics; m.Enabled {
		if !strings.HasPrefix(m.Endpoint, "/") {
			return fmt.Errorf("http.metrics.endpoint %q: must start with /", m.Endpoint)
		}
		switch m.Endpoint {
		case "/", "/health", "/stats", "/sinks", "/sources":
			return fmt.Errorf("http.metrics.endpoint %q: clashes with an API route", m.Endpoint)
		}
		if m.Endpoint+"/" == console.Path || strings.HasPrefix(m.Endpoint, console.Path) {
			return fmt.Errorf("http.metrics.endpoint %q: clashes with the console under %s", m.Endpoint, console.Path)
		}
		mux.HandleFunc("GET "+m.Endpoint, s.withBudget(s.env.RunnerCallLimit, metrics))
	}
	return nil
}

type kindHandler func(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind)

func (s *Supervisor) withKind(kind config.ConnectorKind, h kindHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { h(w, r, kind) }
}

// apiError is upstream's application error body.
type apiError struct {
	status int
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

func (e *apiError) Error() string { return e.Reason }

func writeAPIError(w http.ResponseWriter, e *apiError) {
	body, _ := json.Marshal(e)
	writeJSON(w, e.status, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

func title(kind config.ConnectorKind) string {
	if kind == config.KindSource {
		return "Source"
	}
	return "Sink"
}

func notRunning(kind config.ConnectorKind, key string) *apiError {
	return &apiError{status: http.StatusNotFound, Code: string(kind) + "_not_found",
		Reason: fmt.Sprintf("%s not found with key: %s", title(kind), key)}
}

// configProblem is a config error's text without the config.ErrInvalidConnector prefix, as the
// answers name the problem.
func configProblem(err error) string {
	return strings.TrimPrefix(err.Error(), config.ErrInvalidConnector.Error()+": ")
}

func invalidConfiguration(msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, Code: "invalid_configuration", Reason: "Invalid configuration: " + msg}
}

// internalError is a failure of the supervisor's own: 500 with upstream's generic code.
func internalError(err error) *apiError {
	return &apiError{status: http.StatusInternalServerError, Code: "error", Reason: err.Error()}
}

// providerError maps a provider failure to upstream's status and code. A missing version is 404
// (docs/architecture.md, decision 6; upstream answers 500).
func providerError(kind config.ConnectorKind, err error) *apiError {
	var nf *provider.NotFoundError
	switch {
	case errors.As(err, &nf):
		return &apiError{status: http.StatusNotFound, Code: string(kind) + "_config_not_found", Reason: nf.Error()}
	case errors.Is(err, provider.ErrNotFound):
		return &apiError{status: http.StatusNotFound, Code: string(kind) + "_config_not_found", Reason: err.Error()}
	case errors.Is(err, provider.ErrRequestFailed):
		return &apiError{status: http.StatusInternalServerError, Code: "http_request_failed", Reason: err.Error()}
	case errors.Is(err, provider.ErrInvalid):
		return invalidConfiguration(configProblem(err))
	}
	return internalError(err)
}

// running finds the connector of the path's key or answers 404.
func (s *Supervisor) running(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) (*managed, bool) {
	key := r.PathValue("key")
	m, ok := s.lookup(kind, key)
	if !ok {
		writeAPIError(w, notRunning(kind, key))
	}
	return m, ok
}

// infoObject is an element of GET /sinks (docs/http-api.md §5.4).
type infoObject struct {
	ID                 uint32             `json:"id"`
	Key                string             `json:"key"`
	Name               string             `json:"name"`
	Path               string             `json:"path"`
	Enabled            bool               `json:"enabled"`
	Status             string             `json:"status"`
	LastError          *metrics.LastError `json:"last_error,omitempty"`
	PluginConfigFormat string             `json:"plugin_config_format,omitempty"`
}

// detailObject is GET /sinks/{key}: the info object plus the running config's streams.
type detailObject struct {
	infoObject
	Streams json.RawMessage `json:"streams"`
}

func info(m *managed) infoObject {
	sn := m.snapshot()
	return infoObject{ID: sn.id, Key: m.key, Name: sn.cfg.Name, Path: sn.path, Enabled: sn.cfg.Enabled,
		Status: sn.status, LastError: sn.lastErr, PluginConfigFormat: sn.cfg.PluginConfigFormat}
}

func (s *Supervisor) handleList(w http.ResponseWriter, _ *http.Request, kind config.ConnectorKind) {
	list := make([]infoObject, 0, len(s.connectors[kind]))
	for _, m := range s.ordered {
		if m.kind == kind {
			list = append(list, info(m))
		}
	}
	body, _ := json.Marshal(list)
	writeJSON(w, http.StatusOK, body)
}

func (s *Supervisor) handleGet(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	cfg := m.snapshot().cfg
	streams, err := configMember(cfg, "streams")
	if err != nil {
		writeAPIError(w, internalError(err))
		return
	}
	body, _ := json.Marshal(detailObject{infoObject: info(m), Streams: streams})
	writeJSON(w, http.StatusOK, body)
}

// configMember is one member of the config object (§5.5) as raw JSON.
func configMember(cfg config.Connector, name string) (json.RawMessage, error) {
	doc, err := cfg.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("render %s %q: %w", cfg.Kind, cfg.Key, err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil {
		return nil, fmt.Errorf("render %s %q: %w", cfg.Kind, cfg.Key, err)
	}
	return members[name], nil
}

func (s *Supervisor) handleTransforms(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	writeTransforms(w, m.snapshot().cfg)
}

// writeTransforms answers GET .../transforms: cfg's transforms in file order.
func writeTransforms(w http.ResponseWriter, cfg config.Connector) {
	type item struct {
		Type   string `json:"type"`
		Config any    `json:"config"`
	}
	items := make([]item, 0, len(cfg.TransformOrder))
	for _, name := range cfg.TransformOrder {
		if body, ok := cfg.Transforms[name]; ok {
			items = append(items, item{Type: name, Config: body})
		}
	}
	body, _ := json.Marshal(items)
	writeJSON(w, http.StatusOK, body)
}

func (s *Supervisor) handleVersions(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	versions, err := s.provider.Versions(r.Context(), kind, m.key)
	if err != nil {
		writeAPIError(w, providerError(kind, err))
		return
	}
	isRunning := m.snapshot().runs
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, v := range versions {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(v.MaskSecrets(s.secrets()).VersionJSON(isRunning(v.Version)))
	}
	buf.WriteByte(']')
	writeJSON(w, http.StatusOK, buf.Bytes())
}

// readJSONBody applies axum's Json extractor rules: 415 without a JSON content type, 413 over
// the body limit (http.max_body_bytes, applied by Handler), 400 for a syntax error. On failure the
// answer is written and ok is false.
func readJSONBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		writeText(w, http.StatusUnsupportedMediaType, "Expected request with `Content-Type: application/json`")
		return nil, false
	}
	body, ok, err := httplimit.ReadBody(w, r)
	if !ok {
		return nil, false
	}
	if err != nil {
		writeText(w, http.StatusBadRequest, "Failed to buffer the request body: "+err.Error())
		return nil, false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&v); err != nil {
		writeText(w, http.StatusBadRequest, "Failed to parse the request body as JSON: "+err.Error())
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		writeText(w, http.StatusBadRequest, "Failed to parse the request body as JSON: trailing characters after the JSON value")
		return nil, false
	}
	return body, true
}

func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	if mt == "application/json" {
		return true
	}
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && strings.HasSuffix(sub, "+json")
}

func shapeError(detail string) (int, string) {
	return http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: " + detail
}

func (s *Supervisor) handleCreate(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	key := r.PathValue("key")
	body, ok := readJSONBody(w, r)
	if !ok {
		return
	}
	if err := config.ValidKey(key); err != nil {
		writeAPIError(w, invalidConfiguration(configProblem(err)))
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		status, text := shapeError("expected a JSON object: " + err.Error())
		writeText(w, status, text)
		return
	}
	cfg, err := config.ParseCreateBody(kind, key, body)
	if err == nil {
		err = s.checkRenderable(cfg)
	}
	if errors.Is(err, config.ErrOverLimit) {
		writeAPIError(w, invalidConfiguration(configProblem(err)))
		return
	}
	if err != nil {
		status, text := shapeError(configProblem(err))
		writeText(w, status, text)
		return
	}
	// A version whose plugin could never be started is refused now, not at its restart.
	if _, err := s.pluginPath(cfg.Path); err != nil {
		writeAPIError(w, invalidConfiguration(err.Error()))
		return
	}
	if cfg.PluginConfig, err = s.unmaskSecrets(r.Context(), cfg); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			writeAPIError(w, ae)
		} else {
			writeAPIError(w, providerError(kind, err))
		}
		return
	}
	stored, err := s.provider.Create(r.Context(), kind, key, cfg)
	if err != nil {
		writeAPIError(w, providerError(kind, err))
		return
	}
	writeJSON(w, http.StatusOK, stored.MaskSecrets(s.secrets()).VersionJSON(false))
}

// secrets are what the config routes mask (nothing with http.reveal_secrets).
func (s *Supervisor) secrets() config.SecretKeys { return s.runtime.HTTP.Secrets() }

// unmaskSecrets gives every masked secret of a posted config's plugin_config its real value: the
// one at the same path in the running config (what GET .../configs/active showed), else in the
// newest stored version, provided that config loads the same plugin and its plugin_config equals
// the posted one everywhere but at the masked values (config.SecretKeys.Unmask). Otherwise the
// masked secrets are refused (400, naming each and the first difference), so "******" is never
// stored as a password, nor a stored secret sent along with any change of where it goes.
// With http.reveal_secrets nothing is masked, so nothing is restored: "******" is then a literal
// value.
func (s *Supervisor) unmaskSecrets(ctx context.Context, posted config.Connector) (map[string]any, error) {
	sec := s.secrets()
	kind, key := posted.Kind, posted.Key
	var previous []map[string]any
	samePlugin := func(c config.Connector) bool { return c.Path == posted.Path }
	if m, ok := s.lookup(kind, key); ok {
		if sn := m.snapshot(); !sn.placeholder && samePlugin(sn.cfg) {
			previous = append(previous, sn.cfg.PluginConfig)
		}
	}
	out, missing := sec.Unmask(posted.PluginConfig, previous...)
	if len(missing) == 0 {
		return out, nil
	}
	versions, err := s.provider.Versions(ctx, kind, key)
	if err != nil {
		return nil, err
	}
	for i := len(versions) - 1; i >= 0; i-- {
		if samePlugin(versions[i]) {
			previous = append(previous, versions[i].PluginConfig)
		}
	}
	out, missing = sec.Unmask(posted.PluginConfig, previous...)
	if len(missing) > 0 {
		why := fmt.Sprintf("no earlier version of %s %q with the same plugin path exists", kind, key)
		if len(previous) > 0 {
			changed, _ := sec.Differs(posted.PluginConfig, previous[0])
			why = fmt.Sprintf("the rest of plugin_config is not that of an earlier version of %s %q with the same plugin path (%s differs from the latest)",
				kind, key, changed)
		}
		return nil, invalidConfiguration(fmt.Sprintf("%s is the masked value %q: a masked secret is kept only when everything else in plugin_config is unchanged, and %s; send the real value of each",
			strings.Join(missing, ", "), config.MaskedValue, why))
	}
	return out, nil
}

func (s *Supervisor) handleDelete(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	key := r.PathValue("key")
	var version *uint64
	if q := r.URL.Query(); q.Has("version") {
		v, err := strconv.ParseUint(q.Get("version"), 10, 64)
		if err != nil {
			writeText(w, http.StatusBadRequest, "Failed to deserialize query string: version: "+numErr(err))
			return
		}
		version = &v
	}
	if err := config.ValidKey(key); err != nil {
		writeAPIError(w, providerError(kind, &provider.NotFoundError{Kind: kind, Key: key}))
		return
	}
	if err := s.provider.Delete(r.Context(), kind, key, version); err != nil {
		writeAPIError(w, providerError(kind, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func numErr(err error) string {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err.Error()
	}
	return err.Error()
}

func (s *Supervisor) handleVersion(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	raw := r.PathValue("version")
	v, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Invalid URL: Cannot parse value at index 1 with value `%s` to a `u64`", raw))
		return
	}
	c, err := s.provider.GetVersion(r.Context(), kind, m.key, v)
	if err != nil {
		writeAPIError(w, providerError(kind, err))
		return
	}
	writeJSON(w, http.StatusOK, c.MaskSecrets(s.secrets()).VersionJSON(m.snapshot().runs(c.Version)))
}

func (s *Supervisor) handleActive(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	sn := m.snapshot()
	if sn.placeholder {
		// Its config does not load: there is no running config to show.
		writeAPIError(w, providerError(kind, &provider.NotFoundError{Kind: kind, Key: m.key}))
		return
	}
	writeJSON(w, http.StatusOK, m.withRollback(sn.cfg.MaskSecrets(s.secrets()).VersionJSON(true))) // activation.go
}

func (s *Supervisor) handleSetActive(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	key := r.PathValue("key")
	body, ok := readJSONBody(w, r)
	if !ok {
		return
	}
	var req struct {
		Version *uint64 `json:"version"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeText(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: "+err.Error())
		return
	}
	if req.Version == nil {
		writeText(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: missing field `version`")
		return
	}
	if err := config.ValidKey(key); err != nil {
		writeAPIError(w, providerError(kind, &provider.NotFoundError{Kind: kind, Key: key, Version: *req.Version}))
		return
	}
	// The version to activate may have been stored before the allow-list changed.
	target, err := s.provider.GetVersion(r.Context(), kind, key, *req.Version)
	if err != nil {
		writeAPIError(w, providerError(kind, err))
		return
	}
	if _, err := s.pluginPath(target.Path); err != nil {
		writeAPIError(w, invalidConfiguration(err.Error()))
		return
	}
	if a, err := s.activationOf(r, body); err != nil { // a probe window: activation.go
		writeActivationError(w, err)
		return
	} else if a.probe > 0 {
		s.activateWithProbe(w, r, kind, target, a)
		return
	}
	if err := s.provider.SetActive(r.Context(), kind, key, *req.Version); err != nil {
		writeAPIError(w, providerError(kind, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Supervisor) handlePluginConfig(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	s.writePluginConfig(w, r, m.snapshot().cfg.MaskSecrets(s.secrets()))
}

// writePluginConfig answers GET .../configs/plugin for cfg (its secrets already masked): in the
// ?format asked for, else the config's own.
func (s *Supervisor) writePluginConfig(w http.ResponseWriter, r *http.Request, cfg config.Connector) {
	format := cfg.PluginConfigFormat
	if q := r.URL.Query(); q.Has("format") {
		format = q.Get("format")
		switch format {
		case "json", "yaml", "toml", "text":
		default:
			writeText(w, http.StatusBadRequest, fmt.Sprintf("Failed to deserialize query string: format: unknown variant `%s`, expected one of `json`, `yaml`, `toml`, `text`", format))
			return
		}
	}
	if format == "" {
		format = "toml"
	}
	if cfg.PluginConfig == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	body, contentType, err := renderPluginConfig(cfg, format, s.bodyLimit())
	if errors.Is(err, config.ErrOverLimit) {
		writeAPIError(w, &apiError{status: http.StatusBadRequest, Code: "error", Reason: "Cannot convert configuration: " + configProblem(err)})
		return
	}
	if err != nil {
		writeAPIError(w, &apiError{status: http.StatusBadRequest, Code: "error", Reason: "Cannot convert configuration"})
		return
	}
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(body)
}

// renderPluginConfig writes plugin_config in format; a YAML or TOML rendering larger than limit
// bytes (http.max_body_bytes) is refused (config.ErrOverLimit).
func renderPluginConfig(cfg config.Connector, format string, limit int) ([]byte, string, error) {
	switch format {
	case "json":
		return cfg.PluginConfigJSON(), "application/json", nil
	case "text":
		return cfg.PluginConfigJSON(), "text/plain", nil
	case "yaml":
		out, err := config.RenderYAML("plugin_config", cfg.PluginConfig, limit)
		return out, "application/yaml", err
	default:
		if hasNull(cfg.PluginConfig) {
			return nil, "", errors.New("null cannot be written as TOML")
		}
		out, err := config.RenderTOML("plugin_config", cfg.PluginConfig, limit)
		return out, "application/toml", err
	}
}

func hasNull(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range t {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}
