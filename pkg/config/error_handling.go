package config

import (
	"slices"
	"time"
)

// Error tolerances of the [error_handling] section (docs/architecture.md, decision 14).
const (
	// ToleranceNone retries, then fails the connector (docs/architecture.md, decision 1; the default).
	ToleranceNone = "none"
	// ToleranceAll isolates the records that fail and sends them to the dead-letter topic.
	ToleranceAll = "all"
)

// ErrorHandling is a connector's [error_handling] section. Optional keys that are absent are
// nil: the runner then keeps its own settings (IGGY_CONNECTOR_CONSUME_RETRIES, ...), so a
// section that only sets tolerance changes nothing else.
type ErrorHandling struct {
	Tolerance       string // ToleranceNone or ToleranceAll (effective)
	MaxRetries      *uint32
	RetryBackoff    *time.Duration
	MaxRetryBackoff *time.Duration
	// DeadLetterStream and DeadLetterTopic are both set or both empty.
	DeadLetterStream, DeadLetterTopic string

	Declared ErrorHandlingDeclared
}

// ErrorHandlingDeclared holds the section's keys as written; nil means absent.
type ErrorHandlingDeclared struct {
	Tolerance, RetryBackoff, MaxRetryBackoff, DeadLetterStream, DeadLetterTopic *string
	MaxRetries                                                                  *uint32
}

// HasDeadLetterTopic says whether failed records go to a topic rather than only to the log.
func (e *ErrorHandling) HasDeadLetterTopic() bool { return e != nil && e.DeadLetterTopic != "" }

// errorHandlingKeys are the section's keys, in the order they are written back.
var errorHandlingKeys = []string{"tolerance", "max_retries", "retry_backoff", "max_retry_backoff",
	"dead_letter_stream", "dead_letter_topic"}

// maxIdentifierLen is the longest stream or topic name Iggy carries.
const maxIdentifierLen = 255

// decodeErrorHandling reads the optional [error_handling] table; nil when absent.
func decodeErrorHandling(file string, doc map[string]any) (*ErrorHandling, error) {
	v, ok := doc["error_handling"]
	if !ok || v == nil {
		return nil, nil
	}
	table, isTable := v.(map[string]any)
	r := fieldReader{file: file, table: doc}
	if !isTable {
		return nil, r.fail("error_handling", "expected a table ([error_handling]), got %s", describeValue(v))
	}
	r = fieldReader{file: file, prefix: "error_handling.", table: table}
	for _, k := range sortedKeys(table) {
		if !slices.Contains(errorHandlingKeys, k) {
			return nil, r.fail(k, "unknown key, expected one of %v", errorHandlingKeys)
		}
	}
	e := &ErrorHandling{Tolerance: ToleranceNone}
	d := &e.Declared
	var err error
	if d.Tolerance, err = r.enum("tolerance", false, []string{ToleranceNone, ToleranceAll}); err != nil {
		return nil, err
	}
	if d.Tolerance != nil {
		e.Tolerance = *d.Tolerance
	}
	retries, err := r.unsigned("max_retries", false, 1_000_000)
	if err != nil {
		return nil, err
	}
	if retries != nil {
		n := uint32(*retries)
		d.MaxRetries, e.MaxRetries = &n, &n
	}
	duration := func(key string, dst **string, out **time.Duration) error {
		s, err := r.str(key, false)
		if err != nil || s == nil {
			return err
		}
		v, perr := ParseDuration(*s)
		if perr != nil {
			return r.fail(key, "invalid duration %q: %v", *s, perr)
		}
		if v <= 0 {
			return r.fail(key, "must be longer than zero, got %q", *s)
		}
		*dst, *out = s, &v
		return nil
	}
	if err := duration("retry_backoff", &d.RetryBackoff, &e.RetryBackoff); err != nil {
		return nil, err
	}
	if err := duration("max_retry_backoff", &d.MaxRetryBackoff, &e.MaxRetryBackoff); err != nil {
		return nil, err
	}
	if e.RetryBackoff != nil && e.MaxRetryBackoff != nil && *e.MaxRetryBackoff < *e.RetryBackoff {
		return nil, r.fail("max_retry_backoff", "%s is shorter than retry_backoff %s", *d.MaxRetryBackoff, *d.RetryBackoff)
	}
	name := func(key string, dst **string, out *string) error {
		s, err := r.str(key, false)
		if err != nil || s == nil {
			return err
		}
		if *s == "" || len(*s) > maxIdentifierLen {
			return r.fail(key, "must be 1 to %d bytes long, got %d", maxIdentifierLen, len(*s))
		}
		*dst, *out = s, *s
		return nil
	}
	if err := name("dead_letter_stream", &d.DeadLetterStream, &e.DeadLetterStream); err != nil {
		return nil, err
	}
	if err := name("dead_letter_topic", &d.DeadLetterTopic, &e.DeadLetterTopic); err != nil {
		return nil, err
	}
	switch {
	case (d.DeadLetterStream == nil) != (d.DeadLetterTopic == nil):
		missing := "dead_letter_topic"
		if d.DeadLetterStream == nil {
			missing = "dead_letter_stream"
		}
		return nil, r.fail(missing, "required when the other dead_letter_* key is set")
	case d.DeadLetterTopic != nil && e.Tolerance != ToleranceAll:
		return nil, r.fail("dead_letter_topic", "needs tolerance = %q (with %q nothing is dead-lettered)", ToleranceAll, e.Tolerance)
	}
	return e, nil
}

// document is the section as written, for env overrides and the encoders.
func (e *ErrorHandling) document() map[string]any {
	m := map[string]any{}
	d := e.Declared
	set := func(key string, p *string) {
		if p != nil {
			m[key] = *p
		}
	}
	set("tolerance", d.Tolerance)
	if d.MaxRetries != nil {
		m["max_retries"] = int64(*d.MaxRetries)
	}
	set("retry_backoff", d.RetryBackoff)
	set("max_retry_backoff", d.MaxRetryBackoff)
	set("dead_letter_stream", d.DeadLetterStream)
	set("dead_letter_topic", d.DeadLetterTopic)
	return m
}

// jsonObject is the section in API answers: its keys as written, in errorHandlingKeys order.
func (e *ErrorHandling) jsonObject() orderedObject {
	doc := e.document()
	obj := orderedObject{}
	for _, k := range errorHandlingKeys {
		if v, ok := doc[k]; ok {
			obj = append(obj, kv{k, v})
		}
	}
	return obj
}

// clone copies the section (its pointers point at values nobody changes).
func (e *ErrorHandling) clone() *ErrorHandling {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}

// errorHandlingEnvFields are the section's IGGY_CONNECTORS_<TYPE>_<KEY>_ERROR_HANDLING_* overrides.
var errorHandlingEnvFields = []envField{
	{"ERROR_HANDLING_TOLERANCE", "tolerance", envString},
	{"ERROR_HANDLING_MAX_RETRIES", "max_retries", envU32},
	{"ERROR_HANDLING_RETRY_BACKOFF", "retry_backoff", envString},
	{"ERROR_HANDLING_MAX_RETRY_BACKOFF", "max_retry_backoff", envString},
	{"ERROR_HANDLING_DEAD_LETTER_STREAM", "dead_letter_stream", envString},
	{"ERROR_HANDLING_DEAD_LETTER_TOPIC", "dead_letter_topic", envString},
}

// applyErrorHandlingEnv sets the section's override variables on a raw document, creating the
// section when a variable names it.
func applyErrorHandlingEnv(doc map[string]any, prefix string, vars map[string]string) error {
	set, err := readEnvFields(prefix, errorHandlingEnvFields, vars)
	if err != nil || set == nil {
		return err
	}
	section, isTable := doc["error_handling"].(map[string]any)
	if !isTable {
		section = map[string]any{}
		doc["error_handling"] = section
	}
	for k, v := range set {
		section[k] = v
	}
	return nil
}
