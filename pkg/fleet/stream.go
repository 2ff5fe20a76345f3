package fleet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Open starts a long GET (a tap or a followed log) on one runner with the runners' key: the
// answer's headers must come within timeout (the fleet's Timeout when 0), the body then lasts as
// long as ctx. A status other than 200 is an error naming it and the start of the body.
func (f *Fleet) Open(ctx context.Context, timeout time.Duration, endpoint, path string) (*http.Response, error) {
	if timeout <= 0 {
		timeout = f.opts.Timeout
	}
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	if f.client.apiKey != "" {
		req.Header.Set("Api-Key", f.client.apiKey)
	}
	late := time.AfterFunc(timeout, cancel)
	resp, err := f.client.http.Do(req)
	if !late.Stop() && err != nil {
		cancel()
		return nil, fmt.Errorf("GET %s%s: no answer within %s", endpoint, path, timeout)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("GET %s%s: %w", endpoint, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("GET %s%s: status %d: %s", endpoint, path, resp.StatusCode, body)
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends the request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
