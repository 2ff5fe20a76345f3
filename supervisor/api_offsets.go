package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
)

// iggyDialTimeout bounds reaching Iggy for one offsets request.
const iggyDialTimeout = 3 * time.Second

// offsetRoutes registers GET, PUT and DELETE /{sinks|sources}/{key}/offsets.
func (s *Supervisor) offsetRoutes(mux router, base string, kind config.ConnectorKind) {
	get, put, del := s.handleSinkOffsets, s.handlePutSinkOffsets, s.handleDeleteSinkOffsets
	if kind == config.KindSource {
		get, put, del = s.handleSourceOffsets, s.handlePutSourceOffsets, s.handleDeleteSourceOffsets
	}
	budget := s.slowBudget()
	mux.HandleFunc("GET "+base+"/{key}/offsets", s.offsetsCalls.admit("offsets", s.withBudget(budget, s.withKind(kind, get))))
	mux.HandleFunc("PUT "+base+"/{key}/offsets", s.offsetsCalls.admit("offsets", s.withBudget(budget, s.withKind(kind, put))))
	mux.HandleFunc("DELETE "+base+"/{key}/offsets", s.offsetsCalls.admit("offsets", s.withBudget(budget, s.withKind(kind, del))))
}

// connectorStopped is the rule for rewriting offsets or state: the connector's current status is
// stopped and no runner process of it is alive, so nothing consumes or saves meanwhile. (A
// disabled connector is stopped; so is one stopped through the API.)
func connectorStopped(m *managed) bool {
	sn := m.snapshot()
	return sn.status == statusStopped && !sn.proc.alive()
}

// whileStopped answers 409 unless the connector is stopped (connectorStopped). When it is, it
// holds the connector's operations lock (the one start and restart take) until unlock is called,
// so the connector cannot start between the check and the write.
func whileStopped(w http.ResponseWriter, m *managed) (unlock func(), ok bool) {
	m.ops.Lock()
	if connectorStopped(m) {
		return m.ops.Unlock, true
	}
	m.ops.Unlock()
	writeAPIError(w, &apiError{status: http.StatusConflict, Code: "connector_not_stopped",
		Reason: fmt.Sprintf("%s %q is %s: its offsets can only be changed while it is stopped", m.kind, m.key, m.snapshot().status)})
	return nil, false
}

func badOffsets(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, Code: "invalid_offsets", Reason: fmt.Sprintf(format, args...)}
}

// iggyError maps a failed Iggy call: 503 when the server cannot be reached, else 502 naming it.
func (s *Supervisor) iggyError(err error) *apiError {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, iggyclient.ErrClosed) {
		return &apiError{status: http.StatusServiceUnavailable, Code: "iggy_unavailable",
			Reason: fmt.Sprintf("Iggy at %s cannot be reached: %v", s.runtime.Iggy.Address, err)}
	}
	return &apiError{status: http.StatusBadGateway, Code: "iggy_error", Reason: fmt.Sprintf("Iggy at %s: %v", s.runtime.Iggy.Address, err)}
}

// connectIggy connects for a request with the settings every runner gets ([iggy]), through dial:
// iggyclient.Dial for a Client or iggyclient.DialAdmin for an Admin. It answers 503 or 502 when
// Iggy cannot be reached.
func connectIggy[T any](w http.ResponseWriter, r *http.Request, s *Supervisor, dial func(context.Context, iggyclient.Options) (T, error)) (conn T, ok bool) {
	i := s.runtime.Iggy
	token, err := i.ResolveToken()
	if err != nil {
		writeAPIError(w, s.iggyError(fmt.Errorf("iggy.token: %w", err)))
		return conn, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), iggyDialTimeout)
	defer cancel()
	conn, err = dial(ctx, iggyclient.Options{
		Address: i.Address, Username: i.Username, Password: i.Password, Token: token,
		TLSEnabled: i.TLS.Enabled, TLSCAFile: i.TLS.CAFile, TLSDomain: i.TLS.Domain, Protocol: i.Protocol, RequestTimeout: i.RequestTimeout,
		HeartbeatInterval: -1, Logger: s.log.With("component", "iggy"),
	})
	if err != nil {
		writeAPIError(w, s.iggyError(err))
		return conn, false
	}
	return conn, true
}

// connectIggyWhileStopped is connectIggy for a write: it answers 409 unless the connector is
// stopped and holds the connector's operations lock until release (whileStopped), which also
// closes the connection.
func connectIggyWhileStopped[T interface{ Close() error }](w http.ResponseWriter, r *http.Request, s *Supervisor, m *managed, dial func(context.Context, iggyclient.Options) (T, error)) (conn T, release func(), ok bool) {
	unlock, ok := whileStopped(w, m)
	if !ok {
		return conn, nil, false
	}
	if conn, ok = connectIggy(w, r, s, dial); !ok {
		unlock()
		return conn, nil, false
	}
	return conn, func() { conn.Close(); unlock() }, true
}

// decodeStrict decodes body into v, refusing unknown members, with errors naming the body.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: expected %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return err
	}
	return nil
}
