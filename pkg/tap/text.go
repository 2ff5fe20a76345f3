package tap

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Text is e on one line for people (`--format text`): the point, the place, the id, the schema
// and size, the payload (JSON text; base64 marked as such), the headers and the error, e.g.
//
//	delivered  s/t  partition 2  offset 40  id 7  json 19 B  {"n":1}  headers: a="x", b=513
//
// Payloads and header values are JSON text (a string key without quotes); base64 text is marked
// "base64:".
func (e *Event) Text() string {
	var b strings.Builder
	b.WriteString(e.Point)
	if e.Replica != "" {
		b.WriteString("  replica " + e.Replica)
	}
	if e.Stream != "" || e.Topic != "" {
		b.WriteString("  " + e.Stream + "/" + e.Topic)
	}
	b.WriteString("  partition " + strconv.FormatUint(uint64(e.Partition), 10))
	b.WriteString("  offset " + strconv.FormatUint(e.Offset, 10))
	b.WriteString("  id " + e.ID)
	if e.Timestamp != 0 {
		b.WriteString("  timestamp " + strconv.FormatUint(e.Timestamp, 10))
	}
	b.WriteString("  " + e.Schema + " " + strconv.Itoa(e.Size) + " B  ")
	if e.Encoding != "" {
		b.WriteString(e.Encoding + ":")
	}
	b.Write(e.Payload)
	if len(e.Headers) > 0 {
		b.WriteString("  headers: ")
		for i, h := range e.Headers {
			if i > 0 {
				b.WriteString(", ")
			}
			var key string
			switch {
			case h.KeyEncoding != "":
				b.WriteString(h.KeyEncoding + ":")
				b.Write(h.Key)
			case h.KeyKind == "" && json.Unmarshal(h.Key, &key) == nil:
				b.WriteString(key) // a string key, nearly every one: without quotes
			default:
				b.Write(h.Key)
			}
			b.WriteByte('=')
			if h.Encoding != "" {
				b.WriteString(h.Encoding + ":")
			}
			b.Write(h.Value)
		}
	}
	if e.Error != "" {
		b.WriteString("  error: " + e.Error)
	}
	return b.String()
}
