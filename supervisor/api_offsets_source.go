package supervisor

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/msgpackjson"
	"github.com/iggy-connectors-go/runtime/pkg/state"
)

// sourceState is GET /sources/{key}/offsets: the state the next start loads.
type sourceState struct {
	State     *string         `json:"state"`      // standard base64
	StateJSON json.RawMessage `json:"state_json"` // the state as MessagePack decoded to JSON; null when it is not MessagePack
	UpdatedAt *string         `json:"updated_at"` // RFC 3339, when the state was written
}

func (s *Supervisor) handleSourceOffsets(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	var data []byte
	var at time.Time
	var err error
	if s.iggyState() {
		// The newest record, or the state file the next start would migrate.
		client, ok := connectIggy(w, r, s, iggyclient.Dial)
		if !ok {
			return
		}
		defer client.Close()
		data, at, err = s.iggyStateBackend(client).Current(r.Context(), m.key)
	} else {
		data, at, err = state.Current(s.statePath, m.key)
	}
	if err != nil {
		writeAPIError(w, s.stateError(err))
		return
	}
	out := sourceState{StateJSON: json.RawMessage("null")}
	if data != nil {
		b64 := base64.StdEncoding.EncodeToString(data)
		stamp := at.UTC().Format(time.RFC3339Nano)
		out.State, out.UpdatedAt = &b64, &stamp
		if text, err := msgpackjson.ToJSON(data); err == nil {
			out.StateJSON = text
		}
	}
	body, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, body)
}

func (s *Supervisor) handlePutSourceOffsets(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	body, ok := readJSONBody(w, r)
	if !ok {
		return
	}
	var req struct {
		State     *string         `json:"state"`
		StateJSON json.RawMessage `json:"state_json"`
		UpdatedAt json.RawMessage `json:"updated_at"` // ignored: a GET answer may be sent back
	}
	if err := decodeStrict(body, &req); err != nil {
		writeAPIError(w, badOffsets("Invalid state: %v", err))
		return
	}
	// null is absent, so the GET answer (which has both) can be edited down to one of them.
	hasJSON := len(req.StateJSON) > 0 && string(req.StateJSON) != "null"
	if (req.State != nil) == hasJSON {
		writeAPIError(w, badOffsets("Invalid state: give exactly one of state (base64) and state_json"))
		return
	}
	var data []byte
	if req.State != nil {
		var err error
		if data, err = base64.StdEncoding.DecodeString(*req.State); err != nil {
			writeAPIError(w, badOffsets("Invalid state: state: not standard base64: %v", err))
			return
		}
	} else {
		var err error
		if data, err = msgpackjson.FromJSON(req.StateJSON); err != nil {
			writeAPIError(w, badOffsets("Invalid state: state_json: %v", err))
			return
		}
	}
	if !s.replaceSourceState(w, r, m, data) {
		return
	}
	s.log.Info("source state set", "connector", m.label(), "bytes", len(data))
	w.WriteHeader(http.StatusNoContent)
}

func (s *Supervisor) handleDeleteSourceOffsets(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	if !s.replaceSourceState(w, r, m, nil) {
		return
	}
	s.log.Info("source state deleted", "connector", m.label())
	w.WriteHeader(http.StatusNoContent)
}

// replaceSourceState makes data the state the next start of source m loads (empty data: none)
// in the configured state backend, answering 409 unless m is stopped (whileStopped) and the error
// when the write fails.
func (s *Supervisor) replaceSourceState(w http.ResponseWriter, r *http.Request, m *managed, data []byte) bool {
	if s.iggyState() {
		return s.replaceIggyState(w, r, m, data)
	}
	unlock, ok := whileStopped(w, m)
	if !ok {
		return false
	}
	defer unlock()
	if err := state.Replace(s.statePath, m.key, data); err != nil {
		writeAPIError(w, s.stateError(err))
		return false
	}
	return true
}

// replaceIggyState is replaceSourceState on backend iggy: data is saved as the newest record of
// the source's state topic, as the runner saves it (an Open first migrates a state file into an
// empty topic; the new record is newer). "No state" (empty data) also removes the source's state
// file: while the record is newest the file is ignored, but it must not come back should the
// topic be deleted or the backend be switched back to file.
func (s *Supervisor) replaceIggyState(w http.ResponseWriter, r *http.Request, m *managed, data []byte) bool {
	client, release, ok := connectIggyWhileStopped(w, r, s, m, iggyclient.Dial)
	if !ok {
		return false
	}
	defer release()
	saver, _, err := s.iggyStateBackend(client).Open(r.Context(), m.key)
	if err == nil {
		err = errors.Join(saver.Save(r.Context(), data), saver.Close())
	}
	if err == nil && len(data) == 0 {
		err = state.Delete(s.statePath, m.key)
	}
	if err != nil {
		writeAPIError(w, s.stateError(err))
		return false
	}
	return true
}

// iggyState reports whether sources keep their state in Iggy ([state] backend = "iggy").
func (s *Supervisor) iggyState() bool { return s.runtime.State.Backend == config.StateBackendIggy }

// iggyStateBackend is the state backend a source runner opens on backend iggy, over client. Its
// Dir is the state directory, so a state file a first start would migrate is seen too.
func (s *Supervisor) iggyStateBackend(client iggyclient.Client) state.IggyBackend {
	return state.IggyBackend{Client: client, Stream: s.runtime.State.Stream, Dir: s.statePath, Log: s.log.With("component", "state")}
}

// stateError maps a failed state read or write: a file's problem is the supervisor's own (500),
// anything else on backend iggy is Iggy's (iggyError: 503 or 502).
func (s *Supervisor) stateError(err error) *apiError {
	var pathErr *fs.PathError
	if !s.iggyState() || errors.As(err, &pathErr) {
		return internalError(err)
	}
	return s.iggyError(err)
}
