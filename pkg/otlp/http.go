package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const contentTypeProtobuf = "application/x-protobuf"

// userAgent names this exporter in requests.
const userAgent = "iggy-connectors-go OTLP exporter"

// HTTPStatusError is a collector's non-2xx answer over OTLP/HTTP.
type HTTPStatusError struct {
	URL        string
	StatusCode int
	Status     string
	Body       string // trimmed, "(empty)" when there was none
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("collector at %s answered %s (body: %s)", e.URL, e.Status, e.Body)
}

// newTransport is the HTTP transport of one exporter, dialling and TLS
// bounded as the OpenTelemetry exporters bound them.
func newTransport(tlsConfig *tls.Config) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConns:        100,
		IdleConnTimeout:     90 * time.Second,
	}
}

// poster is what both senders share: the URL posted to, the configured
// headers and compression, and the client.
type poster struct {
	url     string
	what    string // "spans" or "log records", for partial-success errors
	headers map[string]string
	gzip    bool
	client  *http.Client
}

// request is a POST of body with the configured headers, then ours (which
// win).
func (p *poster) request(ctx context.Context, body []byte, ours ...string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range p.headers {
		req.Header.Set(k, v)
	}
	for i := 0; i+1 < len(ours); i += 2 {
		req.Header.Set(ours[i], ours[i+1])
	}
	return req, nil
}

func (p *poster) close() { p.client.CloseIdleConnections() }

// httpSender posts protobuf export requests to one OTLP/HTTP URL
// (<endpoint>/v1/traces or /v1/logs), HTTP/1.1 or HTTP/2 as the server
// offers.
type httpSender struct{ poster }

func newHTTPSender(url, what string, tlsConfig *tls.Config, headers map[string]string, gzip bool) *httpSender {
	tr := newTransport(tlsConfig)
	tr.Proxy = http.ProxyFromEnvironment
	tr.ForceAttemptHTTP2 = true
	return &httpSender{poster{url: url, what: what, headers: headers, gzip: gzip, client: &http.Client{Transport: tr}}}
}

func (s *httpSender) prefixLen() int { return 0 }

func (s *httpSender) finish(body []byte) ([]byte, error) {
	if !s.gzip {
		return body, nil
	}
	return gzipped(nil, body)
}

// gzipped appends b compressed to dst.
func gzipped(dst, b []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	zw := gzip.NewWriter(buf)
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("gzip request: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip request: %w", err)
	}
	return buf.Bytes(), nil
}

// send makes one attempt. 2xx is success, unless the reply reports a partial
// success; 429, 502, 503 and 504 (with Retry-After honoured) and temporary
// network errors are retryable; anything else fails the export.
func (s *httpSender) send(ctx context.Context, body []byte) error {
	ours := []string{"Content-Type", contentTypeProtobuf, "User-Agent", userAgent}
	if s.gzip {
		ours = append(ours, "Content-Encoding", "gzip")
	}
	req, err := s.request(ctx, body, ours...)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var temp interface{ Temporary() bool }
		if errors.As(err, &temp) && temp.Temporary() {
			return retryable(err, 0)
		}
		return err
	}
	defer resp.Body.Close()
	reply, readErr := readBounded(resp.Body)
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if readErr != nil {
			return fmt.Errorf("read collector reply: %w", readErr)
		}
		if len(reply) == 0 || resp.Header.Get("Content-Type") != contentTypeProtobuf {
			return nil
		}
		return partialSuccess(reply, s.what)
	}
	text := strings.TrimSpace(string(reply))
	if text == "" {
		text = "(empty)"
	}
	statusErr := &HTTPStatusError{URL: s.url, StatusCode: resp.StatusCode, Status: resp.Status, Body: text}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return retryable(statusErr, retryAfter(resp.Header.Get("Retry-After")))
	}
	return statusErr
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
		return time.Duration(min(secs, int64(time.Duration(1<<63-1)/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
