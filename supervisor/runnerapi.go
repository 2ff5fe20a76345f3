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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, runnerBaseURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("runner pid %d %s: %w", c.pid, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("runner pid %d %s: %w", c.pid, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("runner pid %d %s: status %s", c.pid, path, resp.Status)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("runner pid %d %s: %w", c.pid, path, err)
	}
	return nil
}

func (c *child) health(ctx context.Context) (runnerHealth, error) {
	var h runnerHealth
	err := c.getJSON(ctx, "/health", &h)
	return h, err
}

// errRunnerConflict: the runner answered 409 (it is in that state already, or stopping).
var errRunnerConflict = errors.New("runner answered 409 Conflict")

// post sends a bodyless POST to path (POST /pause, POST /resume) and expects 204.
func (c *child) post(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, runnerBaseURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("runner pid %d POST %s: %w", c.pid, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	switch resp.StatusCode {
	case http.StatusNoContent:
		return nil
	case http.StatusConflict:
		return fmt.Errorf("runner pid %d POST %s: %w: %s", c.pid, path, errRunnerConflict, body)
	}
	return fmt.Errorf("runner pid %d POST %s: status %s: %s", c.pid, path, resp.Status, body)
}
