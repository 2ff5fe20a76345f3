package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// RateLimit is a connector's [rate_limit] section (ours, docs/runtime-changes.md): how many
// messages and payload bytes a second the connector moves at most. A sink waits before it hands a
// batch to its plugin, a source before it sends a batch to Iggy. Absent keys are nil (no limit on
// that measure); an absent section is a nil *RateLimit, and every answer keeps upstream's shape.
type RateLimit struct {
	MessagesPerSecond *float64
	BytesPerSecond    *float64

	// Declared holds the keys as written (int64 or float64), so a config renders back as it came.
	Declared RateLimitDeclared
}

// RateLimitDeclared holds the section's values as written; nil means absent.
type RateLimitDeclared struct {
	MessagesPerSecond, BytesPerSecond any
}

// rateLimitKeys are the section's keys, in the order they are written back.
var rateLimitKeys = []string{"messages_per_second", "bytes_per_second"}

// MaxRate bounds a rate_limit figure: beyond it a limit would limit nothing.
const MaxRate = 1e15

// decodeRateLimit reads the optional [rate_limit] table; nil when absent.
func decodeRateLimit(file string, doc map[string]any) (*RateLimit, error) {
	v, ok := doc["rate_limit"]
	if !ok || v == nil {
		return nil, nil
	}
	table, isTable := v.(map[string]any)
	if !isTable {
		r := fieldReader{file: file, table: doc}
		return nil, r.fail("rate_limit", "expected a table ([rate_limit]), got %s", describeValue(v))
	}
	r := fieldReader{file: file, prefix: "rate_limit.", table: table}
	for _, k := range sortedKeys(table) {
		if !slices.Contains(rateLimitKeys, k) {
			return nil, r.fail(k, "unknown key, expected one of %v", rateLimitKeys)
		}
	}
	l := &RateLimit{}
	var err error
	if l.MessagesPerSecond, l.Declared.MessagesPerSecond, err = r.rate("messages_per_second"); err != nil {
		return nil, err
	}
	if l.BytesPerSecond, l.Declared.BytesPerSecond, err = r.rate("bytes_per_second"); err != nil {
		return nil, err
	}
	return l, nil
}

// rate reads an optional positive number (integer or float) of the section.
func (r fieldReader) rate(key string) (*float64, any, error) {
	v, ok, _ := r.get(key, false)
	if !ok {
		return nil, nil, nil
	}
	f, err := RateValue(v)
	if err != nil {
		return nil, nil, r.fail(key, "%v", err)
	}
	return &f, v, nil
}

// RateValue checks one rate_limit figure as decoded from TOML or JSON (int64, uint64 or float64):
// a finite number above zero and at most MaxRate. It is also what the run-time routes check.
func RateValue(v any) (float64, error) {
	var f float64
	switch t := v.(type) {
	case int64:
		f = float64(t)
	case uint64:
		f = float64(t)
	case float64:
		f = t
	default:
		return 0, rateError("expected a number, got " + describeValue(v))
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, rateError("must be a finite number")
	case f <= 0:
		return 0, rateError("must be greater than 0, got " + strconv.FormatFloat(f, 'g', -1, 64) + " (leave the key out for no limit)")
	case f > MaxRate:
		return 0, rateError("must be at most 1e15, got " + strconv.FormatFloat(f, 'g', -1, 64))
	}
	return f, nil
}

type rateError string

func (e rateError) Error() string { return string(e) }

// document is the section as written, for env overrides and the encoders.
func (l *RateLimit) document() map[string]any {
	m := map[string]any{}
	if v := l.Declared.MessagesPerSecond; v != nil {
		m["messages_per_second"] = v
	}
	if v := l.Declared.BytesPerSecond; v != nil {
		m["bytes_per_second"] = v
	}
	return m
}

// jsonObject is the section in API answers: its keys as written, in rateLimitKeys order.
func (l *RateLimit) jsonObject() orderedObject {
	doc := l.document()
	obj := orderedObject{}
	for _, k := range rateLimitKeys {
		if v, ok := doc[k]; ok {
			obj = append(obj, kv{k, v})
		}
	}
	return obj
}

// clone copies the section (its pointers point at values nobody changes).
func (l *RateLimit) clone() *RateLimit {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

// rateLimitEnvFields are the section's IGGY_CONNECTORS_<TYPE>_<KEY>_RATE_LIMIT_* overrides; their
// text is read as a number by applyRateLimitEnv.
var rateLimitEnvFields = []envField{
	{"RATE_LIMIT_MESSAGES_PER_SECOND", "messages_per_second", envString},
	{"RATE_LIMIT_BYTES_PER_SECOND", "bytes_per_second", envString},
}

// applyRateLimitEnv sets the section's override variables on a raw document, creating the section
// when a variable names it. A value that is not a number is kept as text, so decoding names the
// key.
func applyRateLimitEnv(doc map[string]any, prefix string, vars map[string]string) error {
	set, err := readEnvFields(prefix, rateLimitEnvFields, vars)
	if err != nil || set == nil {
		return err
	}
	section, isTable := doc["rate_limit"].(map[string]any)
	if !isTable {
		section = map[string]any{}
		doc["rate_limit"] = section
	}
	for k, v := range set {
		section[k] = envNumber(v.(string))
	}
	return nil
}

// envNumber reads a variable's text as an integer, else a float, else leaves it text.
func envNumber(s string) any {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
}

// ErrBadRateLimit wraps every refusal of a run-time rate limit body (ParseRateLimitJSON).
var ErrBadRateLimit = errors.New("invalid rate limit")

// ParseRateLimitJSON reads the body of a run-time rate limit change (PUT .../rate_limit): the
// [rate_limit] section as a JSON object ({"messages_per_second": 100, "bytes_per_second": null};
// an absent or null key is no limit on that measure, {} no limit at all), or JSON null, which
// asks for the connector's configured section again (reset).
func ParseRateLimitJSON(data []byte) (limit *RateLimit, reset bool, err error) {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrBadRateLimit, err)
	}
	if dec.More() {
		return nil, false, fmt.Errorf("%w: trailing data after the JSON value", ErrBadRateLimit)
	}
	if raw == nil {
		return nil, true, nil
	}
	obj, ok := normalizeValue(raw).(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf(`%w: expected an object such as {"messages_per_second": 100, "bytes_per_second": null}, or null for the configured limit`, ErrBadRateLimit)
	}
	l, err := decodeRateLimit("request body", map[string]any{"rate_limit": obj})
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s", ErrBadRateLimit, strings.TrimPrefix(err.Error(), ErrInvalidConnector.Error()+": request body: key "))
	}
	return l, false, nil
}

// RateLimitJSON is a rate limit as the run-time routes show it: both keys, null for no limit.
func RateLimitJSON(l *RateLimit) []byte {
	var m, b *float64
	if l != nil {
		m, b = l.MessagesPerSecond, l.BytesPerSecond
	}
	return appendJSON(nil, orderedObject{{"messages_per_second", floatOrNil(m)}, {"bytes_per_second", floatOrNil(b)}})
}

func floatOrNil(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
