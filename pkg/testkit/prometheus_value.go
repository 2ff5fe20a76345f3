package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// QueryValue evaluates an instant query that gives one value (a scalar, or a vector of one
// series, as a KEDA Prometheus trigger's query must) and returns it; ok is false for an empty
// vector. More than one series, or a query Prometheus refuses (ErrPromQL), is an error.
func (p *PrometheusProc) QueryValue(query string) (value float64, ok bool, err error) {
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(p.URL + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false, err
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
		return 0, false, fmt.Errorf("query %q: %d %s: %w", query, resp.StatusCode, body, err)
	}
	if answer.Status != "success" {
		return 0, false, fmt.Errorf("query %q: %w: %s", query, ErrPromQL, answer.Error)
	}
	var sample [2]any // [time, "value"]
	switch answer.Data.ResultType {
	case "scalar":
		if err := json.Unmarshal(answer.Data.Result, &sample); err != nil {
			return 0, false, fmt.Errorf("query %q: result: %w", query, err)
		}
	case "vector":
		var series []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(answer.Data.Result, &series); err != nil {
			return 0, false, fmt.Errorf("query %q: result: %w", query, err)
		}
		switch len(series) {
		case 0:
			return 0, false, nil
		case 1:
			sample = series[0].Value
		default:
			return 0, false, fmt.Errorf("query %q: %d series, want one", query, len(series))
		}
	default:
		return 0, false, fmt.Errorf("query %q: a %s, want a scalar or a vector", query, answer.Data.ResultType)
	}
	text, _ := sample[1].(string)
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, false, fmt.Errorf("query %q: value %v: %w", query, sample[1], err)
	}
	return v, true, nil
}
