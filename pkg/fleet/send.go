package fleet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Send makes one request with a JSON body to one runner within timeout (the run-time changes the
// supervisor forwards: PUT /log_level, PUT /rate_limit) and answers the status and at most
// maxAnswer bytes of the body. A nil body sends none.
func (f *Fleet) Send(ctx context.Context, timeout time.Duration, method, endpoint, path string, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint+path, r)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if f.client.apiKey != "" {
		req.Header.Set("Api-Key", f.client.apiKey)
	}
	resp, err := f.client.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s%s: %w", method, endpoint, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s%s: %w", method, endpoint, path, err)
	}
	return resp.StatusCode, out, nil
}
