package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// runnerHealth is the runner's /health body (upstream's constant plus the connector status).
type runnerHealth struct {
	Status          string `json:"status"`
	ConnectorStatus string `json:"connector_status"`
}

// The runner's endpoint is addressed by socket; the host part of these URLs is never resolved.
const runnerBaseURL = "http://runner"

func (c *child) getJSON(ctx context.Context, path string, into any) error {
	status, body, err := c.call(ctx, http.MethodGet, path, 1<<20)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("runner pid %d %s: status %d", c.pid, path, status)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("runner pid %d %s: %w", c.pid, path, err)
	}
	return nil
}

// call sends a bodyless request and returns the status code and at most limit bytes of the body.
func (c *child) call(ctx context.Context, method, path string, limit int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, runnerBaseURL+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("runner pid %d %s %s: %w", c.pid, method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, fmt.Errorf("runner pid %d %s %s: %w", c.pid, method, path, err)
	}
	return resp.StatusCode, body, nil
}

func (c *child) health(ctx context.Context) (runnerHealth, error) {
	var h runnerHealth
	err := c.getJSON(ctx, "/health", &h)
	return h, err
}

// errRunnerConflict: the runner answered 409 (it is in that state already, or stopping).
var errRunnerConflict = errors.New("runner answered 409 Conflict")

// errRunnerUnconfirmed: the runner took the request but its connector did not reach the new state
// in time (504): it gets there once ready.
var errRunnerUnconfirmed = errors.New("runner took the request but did not confirm the new state in time")

// post sends a bodyless POST to path (POST /pause, POST /resume) and expects 204.
func (c *child) post(ctx context.Context, path string) error {
	status, body, err := c.call(ctx, http.MethodPost, path, 4<<10)
	switch {
	case err != nil:
		return err
	case status == http.StatusNoContent:
		return nil
	case status == http.StatusConflict:
		return fmt.Errorf("runner pid %d POST %s: %w: %s", c.pid, path, errRunnerConflict, body)
	case status == http.StatusGatewayTimeout:
		return fmt.Errorf("runner pid %d POST %s: %w: %s", c.pid, path, errRunnerUnconfirmed, body)
	}
	return fmt.Errorf("runner pid %d POST %s: status %d: %s", c.pid, path, status, body)
}
