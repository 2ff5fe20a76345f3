package testkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// ErrPromQL is returned by PrometheusProc.Query when Prometheus refuses the query.
var ErrPromQL = errors.New("prometheus refused the query")

// PrometheusProc is a real Prometheus server (the system's `prometheus` binary, Debian's package)
// started by a test.
type PrometheusProc struct {
	process
	URL string // http://127.0.0.1:PORT
}

// StartPrometheus writes config (a prometheus.yml) into a temporary directory, starts Prometheus
// with it on a free loopback port and its storage in that directory, and waits until /-/ready
// answers. The process is killed at test cleanup.
func StartPrometheus(tb testing.TB, config string) *PrometheusProc {
	tb.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		tb.Fatalf("prometheus is not installed (make test installs Debian's prometheus package): %v", err)
	}
	dir := tb.TempDir()
	file := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
		tb.Fatal(err)
	}
	addr := FreeLoopbackAddr(tb)
	p := &PrometheusProc{URL: "http://" + addr}
	cmd := exec.Command(bin, "--config.file="+file, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Env = cleanEnviron()
	p.start(tb, "prometheus", cmd)
	msg := waitCond(30*time.Second, pollMax, func() bool {
		resp, err := http.Get(p.URL + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, p.exitedWhy)
	if msg != "" {
		tb.Fatalf("prometheus not ready: %s; logs:\n%s", msg, p.Logs())
	}
	return p
}

// Query evaluates an instant query through the HTTP API and returns how many series (or 1 for a
// scalar) it gave. A query Prometheus cannot parse or evaluate gives an error wrapping ErrPromQL.
func (p *PrometheusProc) Query(query string) (int, error) {
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(p.URL + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	var answer struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return 0, fmt.Errorf("query %q: %d %s: %w", query, resp.StatusCode, body, err)
	}
	if answer.Status != "success" {
		return 0, fmt.Errorf("query %q: %w: %s", query, ErrPromQL, answer.Error)
	}
	if answer.Data.ResultType == "scalar" || answer.Data.ResultType == "string" {
		return 1, nil
	}
	var series []json.RawMessage
	if err := json.Unmarshal(answer.Data.Result, &series); err != nil {
		return 0, fmt.Errorf("query %q: result: %w", query, err)
	}
	return len(series), nil
}

// Targets returns the health and last scrape error of every active target.
func (p *PrometheusProc) Targets() (map[string]string, error) {
	resp, err := http.Get(p.URL + "/api/v1/targets?state=active")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var answer struct {
		Data struct {
			ActiveTargets []struct {
				ScrapeURL string `json:"scrapeUrl"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, t := range answer.Data.ActiveTargets {
		out[t.ScrapeURL] = t.Health + " " + t.LastError
	}
	return out, nil
}
