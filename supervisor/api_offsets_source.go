package supervisor

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
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
	data, at, err := state.Current(s.statePath, m.key)
	if err != nil {
		writeAPIError(w, &apiError{status: http.StatusInternalServerError, Code: "error", Reason: err.Error()})
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
	unlock, ok := whileStopped(w, m)
	if !ok {
		return
	}
	defer unlock()
	if err := state.Replace(s.statePath, m.key, data); err != nil {
		writeAPIError(w, &apiError{status: http.StatusInternalServerError, Code: "error", Reason: err.Error()})
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
	unlock, ok := whileStopped(w, m)
	if !ok {
		return
	}
	defer unlock()
	if err := state.Delete(s.statePath, m.key); err != nil {
		writeAPIError(w, &apiError{status: http.StatusInternalServerError, Code: "error", Reason: err.Error()})
		return
	}
	s.log.Info("source state deleted", "connector", m.label())
	w.WriteHeader(http.StatusNoContent)
}
