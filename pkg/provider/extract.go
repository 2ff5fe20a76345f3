package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// extract applies connectors.response (docs/config.md §5.4) to a 2xx body: the
// body must be JSON; a non-null value at errorPath is an "API returned
// error"; the data is the value at dataPath, or the whole body. Paths are
// dot-separated object keys or array indexes. Working on raw JSON keeps the
// member order of objects (transform order) for the decoder.
func extract(body []byte, dataPath, errorPath string, quote func([]byte) string) (json.RawMessage, error) {
	var probe any
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, requestFailed("Failed to parse JSON response: %v", err)
	}
	if errorPath != "" {
		if v, found := navigate(body, errorPath); found && !isJSONNull(v) {
			var s string
			if json.Unmarshal(v, &s) == nil {
				return nil, requestFailed("API returned error: %s", quote([]byte(s)))
			}
			return nil, requestFailed("API returned error: %s", quote([]byte(compactJSON(v))))
		}
	}
	if dataPath == "" {
		return body, nil
	}
	v, found := navigate(body, dataPath)
	if !found {
		return nil, requestFailed("Data path '%s' not found in response. Response structure: %s", dataPath, summarize(body))
	}
	return v, nil
}

func navigate(doc json.RawMessage, path string) (json.RawMessage, bool) {
	current := doc
	for _, part := range strings.Split(path, ".") {
		trimmed := bytes.TrimSpace(current)
		if len(trimmed) == 0 {
			return nil, false
		}
		switch trimmed[0] {
		case '{':
			var obj map[string]json.RawMessage
			if json.Unmarshal(trimmed, &obj) != nil {
				return nil, false
			}
			next, ok := obj[part]
			if !ok {
				return nil, false
			}
			current = next
		case '[':
			index, err := strconv.ParseUint(part, 10, 64)
			if err != nil {
				return nil, false
			}
			var arr []json.RawMessage
			if json.Unmarshal(trimmed, &arr) != nil || index >= uint64(len(arr)) {
				return nil, false
			}
			current = arr[index]
		default:
			return nil, false
		}
	}
	return current, true
}

func isJSONNull(v json.RawMessage) bool {
	return string(bytes.TrimSpace(v)) == "null"
}

// summarize describes the top of a JSON document for the data-path error:
// up to five object keys (sorted, as upstream's map orders them), or the
// kind of value.
func summarize(doc json.RawMessage) string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return "unknown"
	}
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) <= 5 {
			return "{ " + strings.Join(keys, ", ") + " }"
		}
		return fmt.Sprintf("{ %s ... and %d more fields }", strings.Join(keys[:5], ", "), len(keys)-5)
	case []any:
		return fmt.Sprintf("[array of %d items]", len(t))
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

func compactJSON(v json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	return buf.String()
}
