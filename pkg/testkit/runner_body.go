package testkit

import (
	"bytes"
	"io"
	"net/http"
)

// DoBody sends a request with a JSON body to path on the runner's endpoint (PUT /log_level, PUT
// /rate_limit) and returns the status code and the answer's body.
func (p *RunnerProc) DoBody(method, path string, header http.Header, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, "http://runner"+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}
