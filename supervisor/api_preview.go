package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/dryrun"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// maxPreviewMessages is the most sample messages one preview takes.
const maxPreviewMessages = 100

// previewRoutes registers POST /{sinks|sources}/{key}/preview: a dry run of a config over sample
// messages (docs/dry-runs.md), in the runner binary, as validate runs its check.
func (s *Supervisor) previewRoutes(mux router, base string, kind config.ConnectorKind) {
	mux.HandleFunc("POST "+base+"/{key}/preview", s.previews.admit("preview", s.withBudget(s.slowBudget()+checkTimeout, s.withKind(kind, s.handlePreview))))
}

// fleetPreviewRoutes answers the preview routes in attach mode: 409, since the configs, the schema
// files they name and the runner binary are where the orchestrator runs the connectors.
func fleetPreviewRoutes(mux router, base string) {
	mux.HandleFunc("POST "+base+"/{key}/preview", ownedByOrchestrator("the connector configs and the schema files they name",
		"run `iggy-connectors test CONNECTOR_FILE --input SAMPLES.jsonl` where the runners are deployed (docs/dry-runs.md)"))
}

// previewBody is what POST .../preview takes: the samples, and optionally a config version as
// POST .../configs takes it (else ?version=N, else the running config).
type previewBody struct {
	Config   json.RawMessage   `json:"config"`
	Messages []json.RawMessage `json:"messages"`
}

// handlePreview answers what the connector's decode → transforms → encode would make of the
// messages, as JSON lines (application/x-ndjson, pkg/tap.Event each), the output of
// `iggy-connectors test`. Nothing is stored or started; no plugin is loaded and Iggy is not asked.
func (s *Supervisor) handlePreview(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	key := r.PathValue("key")
	raw, ok := readJSONBody(w, r)
	if !ok {
		return
	}
	if err := config.ValidKey(key); err != nil {
		writeAPIError(w, invalidConfiguration(configProblem(err)))
		return
	}
	var body previewBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		status, text := shapeError(`expected {"config": {...}, "messages": [...]}: ` + err.Error())
		writeText(w, status, text)
		return
	}
	samples, apiErr := previewSamples(body.Messages)
	if apiErr != nil {
		writeAPIError(w, apiErr)
		return
	}
	cfg, apiErr := s.previewConfig(r, kind, key, body.Config)
	if apiErr != nil {
		writeAPIError(w, apiErr)
		return
	}
	out, apiErr := s.preview(r.Context(), cfg, samples)
	if apiErr != nil {
		writeAPIError(w, apiErr)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// previewSamples checks the messages as the dry run reads them and returns them as JSON lines.
func previewSamples(messages []json.RawMessage) ([]byte, *apiError) {
	switch {
	case len(messages) == 0:
		return nil, invalidMessages(`messages: at least one sample message is required, e.g. [{"payload": {"id": 1}}]`)
	case len(messages) > maxPreviewMessages:
		return nil, invalidMessages(fmt.Sprintf("messages: %d sample messages, at most %d in one preview", len(messages), maxPreviewMessages))
	}
	var lines bytes.Buffer
	for i, m := range messages {
		if _, err := dryrun.ParseSample(m, i+1); err != nil {
			return nil, invalidMessages(sampleProblem(err, i+1))
		}
		if err := json.Compact(&lines, m); err != nil {
			return nil, invalidMessages(fmt.Sprintf("messages[%d]: %v", i, err))
		}
		lines.WriteByte('\n')
	}
	return lines.Bytes(), nil
}

// sampleProblem names a sample problem by its place in "messages".
func sampleProblem(err error, line int) string {
	var p *dryrun.Problem
	if !errors.As(err, &p) {
		return fmt.Sprintf("messages[%d]: %v", line-1, err)
	}
	at := fmt.Sprintf("messages[%d]", p.Line-1)
	if p.Field != "" {
		at += "." + p.Field
	}
	return at + ": " + p.Message
}

func invalidMessages(msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, Code: "invalid_messages", Reason: "Invalid sample messages: " + msg}
}

// previewConfig is the config to preview: the body's, a stored version (?version=N), or the
// running one.
func (s *Supervisor) previewConfig(r *http.Request, kind config.ConnectorKind, key string, body json.RawMessage) (config.Connector, *apiError) {
	q := r.URL.Query()
	hasConfig := len(body) > 0 && string(body) != "null"
	switch {
	case hasConfig && q.Has("version"):
		return config.Connector{}, &apiError{status: http.StatusBadRequest, Code: "invalid_request",
			Reason: "give either a config in the body or ?version=N, not both"}
	case hasConfig:
		cfg, err := config.ParseCreateBody(kind, key, body)
		if err != nil {
			p := problemOf(err)
			return config.Connector{}, invalidConfiguration(p.Field + ": " + p.Message)
		}
		return cfg, nil
	case q.Has("version"):
		v, err := strconv.ParseUint(q.Get("version"), 10, 64)
		if err != nil {
			return config.Connector{}, &apiError{status: http.StatusBadRequest, Code: "invalid_request",
				Reason: "Failed to deserialize query string: version: " + numErr(err)}
		}
		cfg, err := s.provider.GetVersion(r.Context(), kind, key, v)
		if err != nil {
			return config.Connector{}, providerError(kind, err)
		}
		return cfg, nil
	}
	m, ok := s.lookup(kind, key)
	if !ok {
		return config.Connector{}, notRunning(kind, key)
	}
	sn := m.snapshot()
	if sn.placeholder {
		return config.Connector{}, providerError(kind, &provider.NotFoundError{Kind: kind, Key: key})
	}
	return sn.cfg, nil
}

// preview runs `iggy-connector-runner --dry-run` with the environment a runner of cfg would get
// and answers its output lines.
func (s *Supervisor) preview(ctx context.Context, cfg config.Connector, samples []byte) ([]byte, *apiError) {
	doc, err := cfg.MarshalDocumentWithin("json", s.bodyLimit())
	if errors.Is(err, config.ErrOverLimit) {
		return nil, invalidConfiguration(configProblem(err))
	}
	if err != nil {
		return nil, internalError(fmt.Errorf("render the config for the preview: %w", err))
	}
	handover, err := s.writeHandover("preview", doc)
	if err != nil {
		return nil, internalError(err)
	}
	defer os.Remove(handover)
	// The dry run serves nothing; the address only has to parse. Payloads are masked as the
	// API masks configs (and as the tap masks them).
	env, secrets, err := s.runnerBaseEnv("unix:"+filepath.Join(s.sockDir, "preview.sock"), "preview")
	if err != nil {
		return nil, internalError(err)
	}
	defer removeAll(secrets)
	env = append(env, runnerproc.EnvConfigPath+"="+handover)
	if keys := s.secrets(); len(keys) > 0 {
		env = append(env, "IGGY_CONNECTORS_HTTP_SECRET_KEYS="+strings.Join(keys, ","), "IGGY_CONNECTORS_HTTP_REVEAL_SECRETS=false")
	} else {
		env = append(env, "IGGY_CONNECTORS_HTTP_REVEAL_SECRETS=true")
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	res, err := dryrun.Run(ctx, dryrun.Request{Runner: s.runnerBin, Env: env, Samples: bytes.NewReader(samples)})
	if err != nil {
		return nil, internalError(err)
	}
	if len(res.Problems) > 0 {
		var configs, messages []string
		for _, p := range res.Problems {
			if p.Input == dryrun.InputSamples {
				messages = append(messages, sampleProblem(p, p.Line))
				continue
			}
			field := p.Field
			if field == "" {
				field = "config"
			}
			configs = append(configs, field+": "+p.Message)
		}
		if len(configs) > 0 {
			return nil, invalidConfiguration(strings.Join(configs, "; "))
		}
		return nil, invalidMessages(strings.Join(messages, "; "))
	}
	return res.Output, nil
}
