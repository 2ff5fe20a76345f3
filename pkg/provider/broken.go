package provider

import (
	"bufio"
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Broken is a connector config that does not load (a bad file of the local provider, a bad
// entry served by the HTTP provider). The connector is left out of List, and the rest load as
// usual, so one bad file does not keep the others from running.
type Broken struct {
	Kind config.ConnectorKind
	// Key is the document's key when it is a valid key, else one made from the file name (or
	// the map key of the config service), so it is always safe in paths, URLs and variables.
	Key string
	// Source is the file, or the config service's URL.
	Source string
	// Name, Path and Enabled are what the document says, where it says it in the right type.
	Name    string
	Path    string
	Enabled bool
	Err     error
}

// sortBroken orders broken configs as List orders connectors: sinks first, then by key and
// source.
func sortBroken(list []Broken) {
	slices.SortFunc(list, func(a, b Broken) int {
		if c := compareIDs(connectorID{a.Kind, a.Key}, connectorID{b.Kind, b.Key}); c != 0 {
			return c
		}
		return strings.Compare(a.Source, b.Source)
	})
}

// brokenFile describes a connector file that does not load, as far as it can be read: its own
// type and key when they are readable and valid, else a kind and key taken from the file name.
func brokenFile(path string, data []byte, err error) Broken {
	doc := readableTopLevel(data)
	b := Broken{Source: path, Err: err}
	b.Kind = kindHint(path)
	if t, ok := doc["type"].(string); ok {
		if k, kerr := config.ParseKind(t); kerr == nil {
			b.Kind = k
		}
	}
	b.Key = keyFromFileName(path)
	if k, ok := doc["key"].(string); ok && config.ValidKey(k) == nil {
		b.Key = k
	}
	b.Name, _ = doc["name"].(string)
	b.Path, _ = doc["path"].(string)
	b.Enabled, _ = doc["enabled"].(bool)
	return b
}

// topLevelLine is a `key = value` line before the first table header.
var topLevelLine = regexp.MustCompile(`^\s*(type|key|name|path|enabled)\s*=`)

// readableTopLevel decodes what it can of a connector document: all of it when it is valid TOML,
// else each identity line (type, key, name, path, enabled) before the first table on its own.
func readableTopLevel(data []byte) map[string]any {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err == nil {
		return doc
	}
	doc = map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "[") {
			break
		}
		if !topLevelLine.MatchString(line) {
			continue
		}
		var one map[string]any
		if _, err := toml.Decode(line, &one); err == nil {
			for k, v := range one {
				doc[k] = v
			}
		}
	}
	return doc
}

// kindHint guesses the kind from the file name, then its directory: a "source" or "sources"
// word (separated by _ - . or the path) makes a source; anything else is a sink.
func kindHint(path string) config.ConnectorKind {
	for _, name := range []string{strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), filepath.Base(filepath.Dir(path))} {
		words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
		for _, w := range words {
			switch w {
			case "source", "sources":
				return config.KindSource
			case "sink", "sinks":
				return config.KindSink
			}
		}
	}
	return config.KindSink
}

// createdFileName is the name Create gives a version's file: <kind>_<key>_<version>.
var createdFileName = regexp.MustCompile(`^(?:sink|source)_(.+)_\d+(?:-\d+)?$`)

// keyFromFileName makes a valid key from a file name: the key part of a name Create wrote, else
// the name without its extension, with every character a key may not hold replaced by '_'.
func keyFromFileName(path string) string {
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if m := createdFileName.FindStringSubmatch(stem); m != nil {
		stem = m[1]
	}
	return safeKey(stem)
}

// safeKey turns any text into a valid connector key (config.ValidKey).
func safeKey(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			b[i] = '_'
		}
	}
	out := strings.TrimLeft(string(b), "-.")
	if len(out) > 128 {
		out = out[:128]
	}
	if out == "" {
		return "unnamed"
	}
	return out
}
