package dryrun

import (
	"fmt"
	"strings"
)

// What a Problem is about.
const (
	InputConfig  = "config"  // the connector config (the runtime settings included)
	InputSamples = "samples" // one sample; Line says which
)

// Problem is one reason a dry run refused its input: a field of the connector config, or a field
// of one sample. The runner's dry-run mode writes each as a JSON line (with exit status 2);
// callers render them for their own inputs (Where).
type Problem struct {
	Input   string `json:"input"`          // InputConfig or InputSamples
	Line    int    `json:"line,omitempty"` // samples: the 1-based line (or list index + 1)
	Field   string `json:"field"`          // "streams[0].schema", "payload", "headers[1].kind"; "" for the whole line
	Message string `json:"message"`
}

func (p *Problem) Error() string {
	var b strings.Builder
	if p.Input == InputSamples {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Where renders the problem for an operator: prefixed by the connector file's name
// ("connector.toml: streams[0].schema: ...") or the samples file's with the line
// ("samples.jsonl:3: payload: ...").
func (p *Problem) Where(configName, samplesName string) string {
	var b strings.Builder
	if p.Input == InputSamples {
		fmt.Fprintf(&b, "%s:%d: ", samplesName, p.Line)
	} else {
		b.WriteString(configName + ": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}
