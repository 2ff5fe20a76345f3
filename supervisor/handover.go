package supervisor

import (
	"errors"
	"fmt"
	"os"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// The connector document reaches a spawned runner in a file, not in IGGY_CONNECTOR_CONFIG: one
// environment variable is limited to 128 KiB on Linux, and the environment is inherited by every
// process a plugin spawns. The file is private (0600, in the 0700 socket directory) and lives
// only while the runner reads it.

// bodyLimit is http.max_body_bytes as an int (0: no limit).
func (s *Supervisor) bodyLimit() int { return int(s.runtime.HTTP.Limits.MaxBodyBytes) }

// runnerDocument renders the document a runner of cfg starts with (its plugin path resolved), and
// refuses (config.ErrOverLimit) one larger than http.max_body_bytes, so the size is known to be
// fine before a running connector is stopped for it.
func (s *Supervisor) runnerDocument(cfg config.Connector, path string) ([]byte, error) {
	run := cfg.Clone()
	run.Path = path
	doc, err := run.MarshalDocumentWithin("json", s.bodyLimit())
	if err != nil {
		return nil, fmt.Errorf("render the config for the runner: %w", err)
	}
	return doc, nil
}

// writeHandover writes doc to a new private file in the socket directory, named after prefix,
// and returns its path; the caller removes it once the runner has read it.
func (s *Supervisor) writeHandover(prefix string, doc []byte) (string, error) {
	f, err := os.CreateTemp(s.sockDir, prefix+"-*.json") // created 0600
	if err != nil {
		return "", fmt.Errorf("connector config file for the runner: %w", err)
	}
	_, err = f.Write(doc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("connector config file for the runner: %w", err)
	}
	return f.Name(), nil
}

// checkRenderable refuses (config.ErrOverLimit) a config whose JSON or TOML document, what a
// runner or the local provider's file gets, is larger than http.max_body_bytes. Other rendering
// errors (a null TOML cannot hold) are left to the provider, which knows its format.
func (s *Supervisor) checkRenderable(cfg config.Connector) error {
	for _, format := range []string{"json", "toml"} {
		if _, err := cfg.MarshalDocumentWithin(format, s.bodyLimit()); errors.Is(err, config.ErrOverLimit) {
			return err
		}
	}
	return nil
}

// removeAll removes the handover files of a start that did not happen, or that is over.
func removeAll(files []string) {
	for _, f := range files {
		_ = os.Remove(f)
	}
}
