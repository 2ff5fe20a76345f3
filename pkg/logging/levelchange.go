package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// LevelChange is the body of a run-time log level change (PUT /log_level on a runner, PUT
// .../log_level and PUT /log_level on the supervisor): a JSON string holding a RUST_LOG-style
// filter ("debug", "info,iggy_connector_stdout_sink=trace"), or {"filter": ..., "persist": bool}.
// A null filter asks for the configured filter again.
type LevelChange struct {
	Filter  *string // nil: back to the configured filter
	Persist bool    // keep it across restarts (the supervisor's target-state file)
	parsed  Filter
}

// ErrBadLevelChange wraps every refusal of a LevelChange body.
var ErrBadLevelChange = errors.New("invalid log level change")

// ParseLevelChange reads a LevelChange body and checks its filter (ErrBadFilter inside).
func ParseLevelChange(body []byte) (LevelChange, error) {
	body = bytes.TrimSpace(body)
	var c LevelChange
	switch {
	case len(body) > 0 && body[0] == '{':
		var obj struct {
			Filter  *string `json:"filter"`
			Persist *bool   `json:"persist"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&obj); err != nil {
			return LevelChange{}, fmt.Errorf(`%w: %v (want a JSON string such as "debug", or {"filter": "debug", "persist": false})`, ErrBadLevelChange, err)
		}
		c.Filter = obj.Filter
		c.Persist = obj.Persist != nil && *obj.Persist
	default:
		if err := json.Unmarshal(body, &c.Filter); err != nil {
			return LevelChange{}, fmt.Errorf(`%w: %v (want a JSON string such as "debug", or {"filter": "debug", "persist": false})`, ErrBadLevelChange, err)
		}
	}
	if c.Filter != nil {
		f, err := ParseFilter(*c.Filter)
		if err != nil {
			return LevelChange{}, fmt.Errorf("%w: filter %q: %w", ErrBadLevelChange, *c.Filter, err)
		}
		c.parsed = f
	}
	return c, nil
}

// Parsed is the change's filter, parsed (the zero Filter when Filter is nil).
func (c LevelChange) Parsed() Filter { return c.parsed }

// LevelState is what GET /log_level answers: the filter in force, the configured one a restart
// returns to, and (a runner's) the filter its plugin was opened with, which bounds what the plugin
// sends (plugins filter their own lines from their first open on).
type LevelState struct {
	Filter       string `json:"filter"`
	Configured   string `json:"configured"`
	PluginFilter string `json:"plugin_filter,omitempty"`
	Persisted    bool   `json:"persisted,omitempty"`
}
