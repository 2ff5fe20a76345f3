package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Operation names: the keys of connectors.url_templates (docs/config.md §5.2).
const (
	OpGetActiveConfigs      = "get_active_configs"
	OpGetActiveVersions     = "get_active_versions"
	OpCreateSink            = "create_sink"
	OpCreateSource          = "create_source"
	OpGetSinkConfigs        = "get_sink_configs"
	OpGetSourceConfigs      = "get_source_configs"
	OpGetSinkConfig         = "get_sink_config"
	OpGetSourceConfig       = "get_source_config"
	OpGetActiveSinkConfig   = "get_active_sink_config"
	OpGetActiveSourceConfig = "get_active_source_config"
	OpSetActiveSink         = "set_active_sink"
	OpSetActiveSource       = "set_active_source"
	OpDeleteSinkConfig      = "delete_sink_config"
	OpDeleteSourceConfig    = "delete_source_config"
)

// DefaultURLTemplates are upstream's templates, appended to base_url.
var DefaultURLTemplates = map[string]string{
	OpGetActiveConfigs:      "/configs/active",
	OpGetActiveVersions:     "/configs/active/versions",
	OpCreateSink:            "/sinks/{key}/configs",
	OpCreateSource:          "/sources/{key}/configs",
	OpGetSinkConfigs:        "/sinks/{key}/configs",
	OpGetSourceConfigs:      "/sources/{key}/configs",
	OpGetSinkConfig:         "/sinks/{key}/configs/{version}",
	OpGetSourceConfig:       "/sources/{key}/configs/{version}",
	OpGetActiveSinkConfig:   "/sinks/{key}/configs/active",
	OpGetActiveSourceConfig: "/sources/{key}/configs/active",
	OpSetActiveSink:         "/sinks/{key}/configs/active",
	OpSetActiveSource:       "/sources/{key}/configs/active",
	OpDeleteSinkConfig:      "/sinks/{key}/configs",
	OpDeleteSourceConfig:    "/sources/{key}/configs",
}

// HTTP is the remote config API provider (docs/config.md §5). Every call is one
// HTTP request, retried on transient failures with capped, jittered
// exponential backoff; each attempt has its own timeout.
type HTTP struct {
	baseURL   string
	templates map[string]string
	headers   http.Header
	timeout   time.Duration
	retry     config.Retry
	dataPath  string
	errorPath string
	client    *http.Client
	log       *slog.Logger

	// secrets are masked in error texts, which quote served documents.
	secrets config.SecretKeys

	mu     sync.Mutex
	broken []Broken // the bad entries of the latest List answer
}

// NewHTTP builds the provider from the [connectors] section. Invalid
// request headers and an initial backoff above the maximum are errors.
func NewHTTP(c config.Connectors, log *slog.Logger) (*HTTP, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if c.BaseURL == "" {
		return nil, fmt.Errorf("%w: connectors.base_url is required for the http provider", ErrInvalid)
	}
	if c.Retry.Enabled && c.Retry.InitialBackoff > c.Retry.MaxBackoff {
		return nil, fmt.Errorf("%w: connectors.retry.initial_backoff %s is larger than max_backoff %s",
			ErrInvalid, c.Retry.InitialBackoff, c.Retry.MaxBackoff)
	}
	headers := http.Header{}
	for _, name := range slices.Sorted(maps.Keys(c.RequestHeaders)) {
		value := c.RequestHeaders[name]
		if !validHeaderName(name) {
			return nil, fmt.Errorf("%w: Invalid header name '%s'", ErrInvalid, name)
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return nil, fmt.Errorf("%w: Invalid header value for '%s'", ErrInvalid, name)
		}
		headers.Set(name, value)
	}
	templates := make(map[string]string, len(DefaultURLTemplates))
	for op, t := range DefaultURLTemplates {
		templates[op] = t
		if custom, ok := c.URLTemplates[op]; ok {
			templates[op] = custom
		}
	}
	return &HTTP{
		baseURL:   c.BaseURL,
		templates: templates,
		headers:   headers,
		timeout:   c.Timeout,
		retry:     c.Retry,
		dataPath:  c.Response.DataPath,
		errorPath: c.Response.ErrorPath,
		client:    &http.Client{CheckRedirect: sameOriginRedirect},
		log:       log,
		secrets:   config.DefaultSecretKeys,
	}, nil
}

// sameOriginRedirect follows a redirect only to the origin (scheme, host and port) of the first
// request: the request headers (an X-Api-Key, say) are copied to where a redirect points, and the
// config service's redirects must not hand them to another host.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("refused a redirect to another origin (%s://%s), which would receive the request headers", req.URL.Scheme, req.URL.Host)
	}
	return nil
}

func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// url fills an operation's template. {version} is only substituted for
// the single-config GETs, as upstream does; values are not URL-encoded
// (keys are checked by config.ValidKey before they get here).
func (h *HTTP) url(op, key string, version *uint64) string {
	t := strings.ReplaceAll(h.templates[op], "{key}", key)
	if version != nil && (op == OpGetSinkConfig || op == OpGetSourceConfig) {
		t = strings.ReplaceAll(t, "{version}", strconv.FormatUint(*version, 10))
	}
	return h.baseURL + t
}

func pick(kind config.ConnectorKind, sinkOp, sourceOp string) string {
	if kind == config.KindSink {
		return sinkOp
	}
	return sourceOp
}

// response is one finished HTTP exchange.
type response struct {
	status int
	body   []byte
}

func requestFailed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRequestFailed, fmt.Sprintf(format, args...))
}

// transientStatus reports the statuses worth retrying: 5xx, 408 and 429.
func transientStatus(code int) bool {
	return code >= 500 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests
}

// retryDelays hands out the delays before the retries of one request (docs/config.md §5.5).
type retryDelays struct {
	bounds *backoff.Backoff // min(max, initial*multiplier^n), unjittered
	low    time.Duration    // initial/2: upstream's jitter never goes below it
}

func (h *HTTP) retryDelays() retryDelays {
	r := h.retry
	return retryDelays{
		bounds: backoff.New(backoff.Policy{Min: r.InitialBackoff, Max: r.MaxBackoff, Multiplier: max(float64(r.BackoffMultiplier), 1)}),
		low:    r.InitialBackoff / 2,
	}
}

// next is the delay before the next retry: upstream's bounded jitter, uniform in [initial/2,
// bound], rather than pkg/backoff's symmetric one.
func (d retryDelays) next() time.Duration {
	bound := d.bounds.Next()
	if bound <= d.low {
		return d.low
	}
	return d.low + rand.N(bound-d.low)
}

// do sends one request, with retries. A status that is still transient
// after the last retry is returned like any other status.
func (h *HTTP) do(ctx context.Context, method, url string, body []byte) (response, error) {
	var retries uint32
	if h.retry.Enabled {
		retries = h.retry.MaxAttempts
	}
	delays := h.retryDelays()
	for attempt := uint32(0); ; attempt++ {
		resp, err := h.attempt(ctx, method, url, body)
		if ctx.Err() != nil {
			return response{}, requestFailed("%v", ctx.Err())
		}
		retryable := err != nil || transientStatus(resp.status)
		if !retryable || attempt >= retries {
			if err != nil {
				if attempt > 0 {
					return response{}, requestFailed("Request failed after %d retries: %v", attempt, err)
				}
				return response{}, requestFailed("%v", err)
			}
			return resp, nil
		}
		delay := delays.next()
		if err != nil {
			h.log.Debug("config API request failed; retrying", "method", method, "url", h.secrets.MaskURLs(url), "error", err, "retry", attempt+1, "delay", delay)
		} else {
			h.log.Debug("config API answered a transient status; retrying", "method", method, "url", h.secrets.MaskURLs(url), "status", resp.status, "retry", attempt+1, "delay", delay)
		}
		if backoff.Sleep(ctx, delay) != nil {
			return response{}, requestFailed("%v", ctx.Err())
		}
	}
}

func (h *HTTP) attempt(ctx context.Context, method, url string, body []byte) (response, error) {
	if h.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.timeout)
		defer cancel()
	}
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, reader)
	if err != nil {
		return response{}, err
	}
	for name, values := range h.headers {
		req.Header[name] = values
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	// One byte past the limit tells an answer of exactly the limit from a longer one.
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return response{}, fmt.Errorf("read response: %w", err)
	}
	if len(data) > MaxResponseBytes {
		return response{}, requestFailed("the answer from %s is larger than %d bytes", h.secrets.MaskURLs(url), MaxResponseBytes)
	}
	return response{status: resp.StatusCode, body: data}, nil
}

// MaxResponseBytes bounds what is read of one answer from the config service,
// so a broken or hostile service cannot exhaust the supervisor's memory.
const MaxResponseBytes = 16 << 20

// statusError is the error for a non-2xx answer, its body quoted (masked, cut short).
func (h *HTTP) statusError(r response) error {
	return requestFailed("HTTP %d %s - %s", r.status, http.StatusText(r.status), h.quote(r.body))
}

// maxQuoted bounds how much of a served body an error quotes: errors reach logs and the API's
// reason fields, and an answer may be 16 MiB.
const maxQuoted = 1 << 10

func ok(r response) bool { return r.status >= 200 && r.status < 300 }

// fetch runs a request whose answer carries data, and extracts it.
// notFoundIs404 turns a 404 into the given not-found error.
func (h *HTTP) fetch(ctx context.Context, method, url string, body []byte, onNotFound error) (json.RawMessage, error) {
	r, err := h.do(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	if r.status == http.StatusNotFound && onNotFound != nil {
		return nil, onNotFound
	}
	if !ok(r) {
		return nil, h.statusError(r)
	}
	return extract(r.body, h.dataPath, h.errorPath, h.quote)
}

// decodeConnector decodes one config from extracted data.
func (h *HTTP) decodeConnector(kind config.ConnectorKind, data json.RawMessage) (config.Connector, error) {
	c, err := config.ParseConnectorBody("config API response", kind, data)
	if err != nil {
		return config.Connector{}, requestFailed("Failed to deserialize data: %v. Value: %s", err, h.quote(data))
	}
	return c, nil
}

// quote is a served document as error texts show it (the text reaches logs and API answers):
// compact when it is JSON, the values of secret keys masked (as JSON, and as key=value,
// key: value or "key": "value" pairs of any text: config.SecretKeys.MaskText), URL credentials
// masked, our own request-header values masked (a service may echo what it was sent), cut to
// about maxQuoted bytes.
func (h *HTTP) quote(data []byte) string {
	text := h.redactHeaders(h.secrets.MaskText(string(h.secrets.MaskJSON(data))))
	if len(text) <= maxQuoted {
		return text
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes in all)", text[:cut], len(data))
}

// Header values this short are not redacted in quoted text: masking every "1" or "yes" of an
// answer would hide the answer, and such a value is no credential.
const minRedactedValue = 4

// redactHeaderWord: a word of a header value at least this long is redacted on its own too, so
// "Bearer <token>" echoed as the token alone is caught.
const redactHeaderWord = 8

// redactHeaders masks every configured request-header value in text, and every long word of
// one.
func (h *HTTP) redactHeaders(text string) string {
	for _, values := range h.headers {
		for _, v := range values {
			if len(v) >= minRedactedValue {
				text = strings.ReplaceAll(text, v, config.MaskedValue)
			}
			for _, w := range strings.Fields(v) {
				if len(w) >= redactHeaderWord {
					text = strings.ReplaceAll(text, w, config.MaskedValue)
				}
			}
		}
	}
	return text
}

// List fetches get_active_configs. An entry that does not decode (or whose
// map key is not a valid key) is left out and reported by Broken; an answer
// that is not the expected object fails the call.
func (h *HTTP) List(ctx context.Context) ([]config.Connector, error) {
	url := h.url(OpGetActiveConfigs, "", nil)
	data, err := h.fetch(ctx, http.MethodGet, url, nil, nil)
	if err != nil {
		return nil, err
	}
	var active struct {
		Sinks   map[string]json.RawMessage `json:"sinks"`
		Sources map[string]json.RawMessage `json:"sources"`
	}
	if err := json.Unmarshal(data, &active); err != nil {
		return nil, requestFailed("Failed to deserialize data: %v. Value: %s", err, h.quote(data))
	}
	var out []config.Connector
	var broken []Broken
	for _, group := range []struct {
		kind    config.ConnectorKind
		configs map[string]json.RawMessage
	}{{config.KindSink, active.Sinks}, {config.KindSource, active.Sources}} {
		for _, key := range slices.Sorted(maps.Keys(group.configs)) {
			bad := func(err error) {
				b := Broken{Kind: group.kind, Key: safeKey(key), Source: url, Err: fmt.Errorf("%s %q from %s: %w", group.kind, key, url, err)}
				var doc map[string]any
				_ = json.Unmarshal(group.configs[key], &doc) // what it says in the right type, if anything
				b.Name, _ = doc["name"].(string)
				b.Path, _ = doc["path"].(string)
				b.Enabled, _ = doc["enabled"].(bool)
				broken = append(broken, b)
			}
			if err := config.ValidKey(key); err != nil {
				bad(requestFailed("Failed to deserialize data: %v", err))
				continue
			}
			c, err := h.decodeConnector(group.kind, group.configs[key])
			if err != nil {
				bad(err)
				continue
			}
			if c.Key != key {
				h.log.Warn("active config's key differs from its map key; using the map key", "kind", group.kind, "map_key", key, "key", c.Key)
				c.Key = key
			}
			out = append(out, c)
		}
	}
	sortBroken(broken)
	h.mu.Lock()
	h.broken = broken
	h.mu.Unlock()
	return out, nil
}

// Broken returns the bad entries of the latest List answer.
func (h *HTTP) Broken(ctx context.Context) []Broken {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.broken)
}

// Get fetches get_active_<kind>_config; 404 is ErrNotFound.
func (h *HTTP) Get(ctx context.Context, kind config.ConnectorKind, key string) (config.Connector, error) {
	if err := checkKindKey(kind, key); err != nil {
		return config.Connector{}, err
	}
	op := pick(kind, OpGetActiveSinkConfig, OpGetActiveSourceConfig)
	data, err := h.fetch(ctx, http.MethodGet, h.url(op, key, nil), nil, notFound(kind, key, 0))
	if err != nil {
		return config.Connector{}, err
	}
	return h.decodeConnector(kind, data)
}

// Versions fetches get_<kind>_configs, sorted by version.
func (h *HTTP) Versions(ctx context.Context, kind config.ConnectorKind, key string) ([]config.Connector, error) {
	if err := checkKindKey(kind, key); err != nil {
		return nil, err
	}
	op := pick(kind, OpGetSinkConfigs, OpGetSourceConfigs)
	data, err := h.fetch(ctx, http.MethodGet, h.url(op, key, nil), nil, nil)
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, requestFailed("Failed to deserialize data: %v. Value: %s", err, h.quote(data))
	}
	out := make([]config.Connector, 0, len(items))
	for _, item := range items {
		c, err := h.decodeConnector(kind, item)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b config.Connector) int {
		switch {
		case a.Version < b.Version:
			return -1
		case a.Version > b.Version:
			return 1
		}
		return 0
	})
	return out, nil
}

// GetVersion fetches get_<kind>_config; 404 is ErrNotFound.
func (h *HTTP) GetVersion(ctx context.Context, kind config.ConnectorKind, key string, version uint64) (config.Connector, error) {
	if err := checkKindKey(kind, key); err != nil {
		return config.Connector{}, err
	}
	op := pick(kind, OpGetSinkConfig, OpGetSourceConfig)
	data, err := h.fetch(ctx, http.MethodGet, h.url(op, key, &version), nil, notFound(kind, key, version))
	if err != nil {
		return config.Connector{}, err
	}
	return h.decodeConnector(kind, data)
}

// Create validates c and posts it as the create body; the server assigns
// the version and answers with the stored config.
func (h *HTTP) Create(ctx context.Context, kind config.ConnectorKind, key string, c config.Connector) (config.Connector, error) {
	if err := checkKindKey(kind, key); err != nil {
		return config.Connector{}, err
	}
	if c.Kind != "" && c.Kind != kind {
		return config.Connector{}, fmt.Errorf("%w: a %s config cannot be stored as %s %q", ErrInvalid, c.Kind, kind, key)
	}
	c = c.Clone()
	c.Kind, c.Key, c.Version = kind, key, 0
	body := c.CreateBodyJSON()
	// Read the body back the way the server's answer will be read, so what
	// we could not load later is refused before it is sent.
	checked, err := config.ParseCreateBody(kind, key, body)
	if err != nil {
		return config.Connector{}, err
	}
	if err := checked.CheckStart(); err != nil {
		return config.Connector{}, err
	}
	op := pick(kind, OpCreateSink, OpCreateSource)
	data, err := h.fetch(ctx, http.MethodPost, h.url(op, key, nil), body, nil)
	if err != nil {
		return config.Connector{}, err
	}
	return h.decodeConnector(kind, data)
}

// SetActive puts {"version": N} to set_active_<kind>. Any 2xx succeeds; a
// 404 is ErrNotFound.
func (h *HTTP) SetActive(ctx context.Context, kind config.ConnectorKind, key string, version uint64) error {
	if err := checkKindKey(kind, key); err != nil {
		return err
	}
	op := pick(kind, OpSetActiveSink, OpSetActiveSource)
	body := []byte(`{"version":` + strconv.FormatUint(version, 10) + `}`)
	return h.command(ctx, http.MethodPut, h.url(op, key, nil), body, notFound(kind, key, version))
}

// Delete sends delete_<kind>_config, with ?version=N when given (&version=N
// when the template already has a query). Any 2xx succeeds; 404 is
// ErrNotFound.
func (h *HTTP) Delete(ctx context.Context, kind config.ConnectorKind, key string, version *uint64) error {
	if err := checkKindKey(kind, key); err != nil {
		return err
	}
	op := pick(kind, OpDeleteSinkConfig, OpDeleteSourceConfig)
	url := h.url(op, key, nil)
	var missing uint64
	if version != nil {
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		url += sep + "version=" + strconv.FormatUint(*version, 10)
		missing = *version
	}
	return h.command(ctx, http.MethodDelete, url, nil, notFound(kind, key, missing))
}

func (h *HTTP) command(ctx context.Context, method, url string, body []byte, onNotFound error) error {
	r, err := h.do(ctx, method, url, body)
	if err != nil {
		return err
	}
	if r.status == http.StatusNotFound {
		return onNotFound
	}
	if !ok(r) {
		return h.statusError(r)
	}
	return nil
}

var _ Provider = (*HTTP)(nil)
