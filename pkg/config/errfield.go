package config

import (
	"regexp"
	"strings"
)

// Patterns of the connector config errors this package, the transforms and the runner produce.
var (
	// The source a message is about: a file, IGGY_CONNECTOR_CONFIG, a create body, a connector.
	errPrefix = regexp.MustCompile(`^(?:invalid connector configuration: |(?:new )?(?:sink|source)(?: config)? "[^"]*": |IGGY_[A-Z0-9_]+(?:=\S*)?: |\S+\.(?:toml|json|ya?ml): )`)
	// A field path: streams[0].batch_length, transforms.add_fields, plugin_config.
	errField = regexp.MustCompile(`^(?:key )?([a-z_][a-z0-9_]*(?:\[\d+\])*(?:\.[A-Za-z0-9_$-]+(?:\[\d+\])*)*): (.*)$`)
	// A transform that failed to build, and a path inside its config.
	errTransform = regexp.MustCompile(`^Failed to load transforms: transform "([^"]+)": (.*)$`)
)

// ErrorField splits the text of a connector config error into the field it is about, as a path
// into the connector document ("streams[0].batch_length", "transforms.add_fields.fields[0]",
// "plugin_config", "path"), and the message without the prefixes naming the document. Text that
// names no field gives field "" and the message as it is, prefixes removed.
func ErrorField(text string) (field, message string) {
	msg := text
	for {
		loc := errPrefix.FindStringIndex(msg)
		if loc == nil || loc[1] == len(msg) {
			break
		}
		msg = msg[loc[1]:]
	}
	if m := errTransform.FindStringSubmatch(msg); m != nil {
		field, rest := "transforms."+m[1], strings.TrimPrefix(m[2], "invalid transform config: ")
		if f := errField.FindStringSubmatch(rest); f != nil {
			return field + "." + f[1], f[2]
		}
		return field, rest
	}
	if m := errField.FindStringSubmatch(msg); m != nil {
		return m[1], m[2]
	}
	return "", msg
}
