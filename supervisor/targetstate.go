package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/atomicfile"
	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Target states: what an operator asked a connector to be (docs/architecture.md, decision 13). They survive a
// supervisor restart in one small file per connector beside the state files.
const (
	targetRunning = "running"
	targetPaused  = "paused"
	targetStopped = "stopped"
)

// targetFile is the JSON document of a target-state file.
type targetFile struct {
	Target    string `json:"target"`
	UpdatedAt string `json:"updated_at"` // RFC 3339, for the operator reading the file
	// LogFilter is a log filter set with "persist": true (overrides.go); absent: none.
	LogFilter *string `json:"log_filter,omitempty"`
}

// targetPath is the target-state file of a connector: <state.path>/<kind>_<key>.target.json,
// beside a source's source_<key>.state.
func (s *Supervisor) targetPath(kind config.ConnectorKind, key string) string {
	return filepath.Join(s.statePath, string(kind)+"_"+key+".target.json")
}

// loadTarget reads a connector's target state: running when it has no file. A file that cannot be
// read or holds no known target makes the connector start paused (nothing consumed or produced
// until an operator resumes it: it may have been stopped on purpose); the reason, naming the
// file, is logged and returned for the connector's last_error.
func (s *Supervisor) loadTarget(kind config.ConnectorKind, key string) (target, problem string) {
	if config.ValidKey(key) != nil {
		return targetRunning, "" // a key that cannot name a file never had one written
	}
	path := s.targetPath(kind, key)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return targetRunning, ""
	}
	var doc targetFile
	if err == nil {
		if err = json.Unmarshal(data, &doc); err == nil {
			switch doc.Target {
			case targetRunning, targetPaused, targetStopped:
				return doc.Target, ""
			}
			err = fmt.Errorf("unknown target %q (want %q, %q or %q)", doc.Target, targetRunning, targetPaused, targetStopped)
		}
	}
	s.log.Error("connector target-state file is unreadable; the connector starts paused until POST /"+kind.Plural()+"/"+key+"/resume",
		"connector", labelOf(kind, key), "file", path, "error", err)
	return targetPaused, fmt.Sprintf("the target-state file %s is unreadable (%v): started paused; POST /%s/%s/resume runs it", path, err, kind.Plural(), key)
}

// saveTarget writes a connector's target state atomically (temporary file, fsync, rename, fsync of
// the directory).
func (s *Supervisor) saveTarget(kind config.ConnectorKind, key, target string) error {
	targetFileMu.Lock()
	defer targetFileMu.Unlock()
	old, _ := s.targetFileDoc(kind, key) // the persisted log filter stays (overrides.go)
	data, _ := json.Marshal(targetFile{Target: target, UpdatedAt: time.Now().UTC().Format(time.RFC3339), LogFilter: old.LogFilter})
	if err := atomicfile.Write(s.targetPath(kind, key), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save the target state of %s: %w", labelOf(kind, key), err)
	}
	return nil
}
