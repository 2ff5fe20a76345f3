package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

// ReplicaLabel is the label every series read from a runner gains: its endpoint, so the counters
// of two replicas of one connector stay two monotonic series.
const ReplicaLabel = "replica"

// maxAnswer bounds what one runner route may answer.
const maxAnswer = 4 << 20

// health is the runner's GET /health body.
type health struct {
	Key             string `json:"key"`
	ConnectorType   string `json:"connector_type"`
	ConnectorStatus string `json:"connector_status"`
	Role            string `json:"role"`
}

// reading is what one poll of a runner got.
type reading struct {
	health   health
	stats    metrics.ConnectorStats
	config   []byte
	families []*dto.MetricFamily
}

// client calls runner endpoints with the runners' key.
type client struct {
	http        *http.Client
	apiKey      string
	metricsPath string
}

// poll reads the runner's four routes at once; ctx carries the per-runner timeout.
func (c *client) poll(ctx context.Context, endpoint string) (reading, error) {
	var (
		r    reading
		wg   sync.WaitGroup
		errs [4]error
	)
	wg.Add(4)
	go func() { defer wg.Done(); errs[0] = c.getJSON(ctx, endpoint, "/health", &r.health) }()
	go func() { defer wg.Done(); errs[1] = c.getJSON(ctx, endpoint, "/stats", &r.stats) }()
	go func() { defer wg.Done(); r.config, errs[2] = c.get(ctx, endpoint, "/config", "") }()
	go func() { defer wg.Done(); r.families, errs[3] = c.families(ctx, endpoint) }()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return reading{}, err
		}
	}
	if r.health.Key == "" || (r.health.ConnectorType != "sink" && r.health.ConnectorType != "source") {
		return reading{}, fmt.Errorf("%s/health: not a connector runner (key %q, connector_type %q)", endpoint, r.health.Key, r.health.ConnectorType)
	}
	return r, nil
}

func (c *client) get(ctx context.Context, endpoint, path, accept string) ([]byte, error) {
	status, body, err := c.do(ctx, http.MethodGet, endpoint, path, accept)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s%s: status %d: %.200s", endpoint, path, status, body)
	}
	return body, nil
}

func (c *client) getJSON(ctx context.Context, endpoint, path string, into any) error {
	body, err := c.get(ctx, endpoint, path, "")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s%s: %w", endpoint, path, err)
	}
	return nil
}

// families reads the runner's metrics as delimited protobuf (exact, and cheaper than text) and
// labels every series with the replica.
func (c *client) families(ctx context.Context, endpoint string) ([]*dto.MetricFamily, error) {
	format := expfmt.NewFormat(expfmt.TypeProtoDelim)
	body, err := c.get(ctx, endpoint, c.metricsPath, string(format))
	if err != nil {
		return nil, err
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	var out []*dto.MetricFamily
	for {
		f := &dto.MetricFamily{}
		if err := dec.Decode(f); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("GET %s%s: %w", endpoint, c.metricsPath, err)
		}
		for _, m := range f.Metric {
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(ReplicaLabel), Value: proto.String(endpoint)})
		}
		out = append(out, f)
	}
}

// do sends a bodyless request with the runners' key and returns the status and at most
// maxAnswer bytes of the body.
func (c *client) do(ctx context.Context, method, endpoint, path, accept string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, endpoint+path, nil)
	if err != nil {
		return 0, nil, err
	}
	if c.apiKey != "" {
		req.Header.Set("Api-Key", c.apiKey)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its method and URL are said below
		}
		return 0, nil, fmt.Errorf("%s %s%s: %w", method, endpoint, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s%s: %w", method, endpoint, path, err)
	}
	return resp.StatusCode, body, nil
}
