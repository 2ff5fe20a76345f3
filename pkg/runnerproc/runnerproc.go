// Package runnerproc is the process contract between the supervisor and the runners it spawns:
// exit statuses, the variables that hand a runner its connector, the last line a runner
// writes on stderr to say why it exits, the --check and --dry-run arguments, the --check output
// lines, finding the runner binary, the secret-bearing variables a runner drops from its
// environment once read, and the private file in which a supervisor hands its runners their
// secrets instead of the environment (secrets.go).
package runnerproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Exit statuses of a runner process. A Go runtime crash (an unrecovered panic, a fatal signal)
// exits 2 as well, so the status alone does not mean a configuration error: a runner refused its
// configuration when it exited ExitConfig after a ConfigErrorLine and no crash report followed.
const (
	ExitOK     = 0 // graceful stop
	ExitFatal  = 1 // the connector failed; a supervisor restarts it
	ExitConfig = 2 // the configuration is missing or invalid: restarting does not help
)

// The variables that hand a runner its connector: exactly one of a file, an inline document
// (TOML or JSON), or a type and key to fetch from the configured provider.
const (
	EnvConfigPath = "IGGY_CONNECTOR_CONFIG_PATH"
	EnvConfig     = "IGGY_CONNECTOR_CONFIG"
	EnvType       = "IGGY_CONNECTOR_TYPE"
	EnvKey        = "IGGY_CONNECTOR_KEY"
)

// A supervisor hands its runners their connector in a private file named by EnvConfigPath (the
// 128 KiB limit of one variable does not apply there, and processes a plugin spawns do not
// inherit it); EnvConfig is for runners deployed on their own.

// secretSuffixes end the names of variables that carry secrets.
var secretSuffixes = []string{"_PASSWORD", "_TOKEN", "_API_KEY"}

// SecretVar reports whether the variable called name carries a secret a runner must not pass on
// to what its plugin spawns: *_PASSWORD, *_TOKEN, *_API_KEY (in any case) and the inline
// connector document, EnvConfig.
func SecretVar(name string) bool {
	upper := strings.ToUpper(name)
	if upper == EnvConfig {
		return true
	}
	for _, suffix := range secretSuffixes {
		if strings.HasSuffix(upper, suffix) {
			return true
		}
	}
	return false
}

// UnsetSecrets removes every SecretVar from this process's environment, the C library's
// included (a cgo program's os.Unsetenv reaches it), so neither a plugin's getenv nor a process it
// forks sees them. A runner calls it once it has read its settings. It returns the names removed.
func UnsetSecrets() []string {
	var removed []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if SecretVar(name) {
			_ = os.Unsetenv(name)
			removed = append(removed, name)
		}
	}
	return removed
}

// EnvInstanceID is the plugin instance id the supervisor numbered for this start (as upstream
// numbers them: sources first, from 1), so the id a plugin logs is the one GET /sinks shows.
const EnvInstanceID = "IGGY_CONNECTOR_INSTANCE_ID"

// EnvStatsPage is the path of the stats page the supervisor created for this connector
// (pkg/metrics' page): the runner counts into it, the supervisor reads it.
const EnvStatsPage = "IGGY_CONNECTOR_STATS_PAGE"

// EnvStartPaused ("true") starts the runner paused (docs/architecture.md, decision 13): a sink polls nothing and a
// source opens no plugin until POST /resume. The supervisor sets it for a connector an operator
// paused, so a paused runner that crashed comes back paused.
const EnvStartPaused = "IGGY_CONNECTOR_START_PAUSED"

// SupervisorVars are the variables a supervisor sets for each runner itself and never passes on
// from its own environment: the connector selectors, the secrets file, the stats page, the
// instance id and the start-paused flag.
var SupervisorVars = []string{EnvConfigPath, EnvConfig, EnvType, EnvKey, EnvSecretsPath, EnvStatsPage, EnvInstanceID, EnvStartPaused}

// The runner's last line on stderr before it exits: the reason, after a prefix saying which kind.
const (
	FatalPrefix       = "iggy-connector-runner: fatal: "                 // before ExitFatal
	ConfigErrorPrefix = "iggy-connector-runner: invalid configuration: " // before ExitConfig
)

// ConfigErrorLine is the line announcing a configuration error: ConfigErrorPrefix and the reason
// on one line (line breaks in it become "; ").
func ConfigErrorLine(reason string) string { return ConfigErrorPrefix + oneLine(reason) }

// oneLine joins the lines of s with "; ", dropping empty ones.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	return strings.Join(lines, "; ")
}

// ArgCheck makes a runner check its configuration instead of running it: it writes one
// CheckLine per problem on stdout and exits ExitOK when there is none, ExitConfig otherwise.
const ArgCheck = "--check"

// CheckLine is one problem as `--check` writes it: the field of the connector document (or the
// area, "iggy", "config") and the message, on one line.
func CheckLine(field, message string) string { return field + ": " + oneLine(message) }

// ParseCheckLine splits a CheckLine into its field and message.
func ParseCheckLine(line string) (field, message string) {
	field, message, _ = strings.Cut(line, ": ")
	return field, message
}

// ArgDryRun makes a runner dry-run its connector instead of running it: the samples (a file
// named by the next argument, or standard input when there is none or it is "-") go through the
// connector's decode, transforms and encode, with no Iggy and no plugin, and each outcome is
// written as one pkg/tap.Event JSON line on stdout (exit ExitOK); bad configuration or samples
// give one pkg/dryrun.Problem JSON line each instead (exit ExitConfig).
const ArgDryRun = "--dry-run"

// EnvRunnerPath names the runner binary for the programs that start one (the supervisor, and
// `iggy-connectors test`).
const EnvRunnerPath = "IGGY_SUPERVISOR_RUNNER_PATH"

// ErrRunnerNotFound: no runner binary was found.
var ErrRunnerNotFound = errors.New("iggy-connector-runner binary not found")

// RunnerName is the runner binary's file name.
const RunnerName = "iggy-connector-runner"

// FindRunner finds the runner binary: configured (the value of EnvRunnerPath) when set, else
// next to this executable, else on PATH. The path returned is absolute.
func FindRunner(configured string) (string, error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			return "", fmt.Errorf("%s=%q: %w: %w", EnvRunnerPath, configured, ErrRunnerNotFound, err)
		}
		return filepath.Abs(configured)
	}
	if exe, err := os.Executable(); err == nil {
		candidate := filepath.Join(filepath.Dir(exe), RunnerName)
		if fi, err := os.Stat(candidate); err == nil && !fi.IsDir() {
			return candidate, nil
		}
	}
	p, err := exec.LookPath(RunnerName)
	if err != nil {
		return "", fmt.Errorf("%w next to %s or on PATH (set %s)", ErrRunnerNotFound, filepath.Base(os.Args[0]), EnvRunnerPath)
	}
	return filepath.Abs(p)
}
