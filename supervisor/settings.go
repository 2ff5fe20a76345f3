package supervisor

import (
	"fmt"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// Env holds the supervisor's own variables: how it runs runners. They use the IGGY_SUPERVISOR_
// prefix so that upstream's unknown-IGGY_CONNECTORS_*-variable warning stays meaningful.
type Env struct {
	RunnerPath      string        `env:"IGGY_SUPERVISOR_RUNNER_PATH" help:"the iggy-connector-runner binary; default: next to this executable, else on PATH"`
	RuntimeDir      string        `env:"IGGY_SUPERVISOR_RUNTIME_DIR" help:"directory for the runners' Unix sockets (created 0700); default: a fresh temporary directory"`
	StartTimeout    time.Duration `env:"IGGY_SUPERVISOR_START_TIMEOUT" envDefault:"30s" help:"how long a new runner may take before its endpoint answers"`
	DrainTimeout    time.Duration `env:"IGGY_SUPERVISOR_DRAIN_TIMEOUT" envDefault:"15s" help:"on SIGTERM or restart: how long runners get to stop after SIGTERM before they are killed (sources, then sinks)"`
	BackoffMin      time.Duration `env:"IGGY_SUPERVISOR_RESTART_BACKOFF_MIN" envDefault:"500ms" help:"first pause before restarting a runner that exited (doubles per restart; each pause jittered ±20%)"`
	BackoffMax      time.Duration `env:"IGGY_SUPERVISOR_RESTART_BACKOFF_MAX" envDefault:"30s" help:"cap of the restart pause"`
	StableAfter     time.Duration `env:"IGGY_SUPERVISOR_STABLE_AFTER" envDefault:"30s" help:"a runner that ran this long before exiting is restarted after the first pause again"`
	HealthInterval  time.Duration `env:"IGGY_SUPERVISOR_HEALTH_INTERVAL" envDefault:"1s" help:"how often each connector's status is read from its stats page (for the REST API's status and restart decisions)"`
	RunnerCallLimit time.Duration `env:"IGGY_SUPERVISOR_RUNNER_TIMEOUT" envDefault:"2s" help:"a runner whose heartbeat in its stats page is older than this (it beats every 200ms) counts as down: error in /stats, iggy_connector_up 0"`
	FleetTimeout    time.Duration `env:"IGGY_SUPERVISOR_FLEET_TIMEOUT" envDefault:"500ms" help:"attach mode ([fleet] enabled): the bound of one runner's poll and of one call forwarded to it"`
	RestartLimit    int           `env:"IGGY_SUPERVISOR_RESTART_LIMIT" envDefault:"0" help:"restarts of a connector's runner allowed within IGGY_SUPERVISOR_RESTART_WINDOW; at the next exit it is not restarted but shows status failed until POST .../start or /restart (0: unlimited)"`
	RestartWindow   time.Duration `env:"IGGY_SUPERVISOR_RESTART_WINDOW" envDefault:"10m" help:"the window IGGY_SUPERVISOR_RESTART_LIMIT counts restarts in"`
}

// ParseEnv reads the supervisor's variables from environ ("NAME=value" entries).
func ParseEnv(environ []string) (Env, error) {
	var e Env
	if err := config.ParseEnvStruct(&e, environ); err != nil {
		return Env{}, fmt.Errorf("supervisor environment: %w", err)
	}
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"IGGY_SUPERVISOR_START_TIMEOUT", e.StartTimeout <= 0},
		{"IGGY_SUPERVISOR_DRAIN_TIMEOUT", e.DrainTimeout <= 0},
		{"IGGY_SUPERVISOR_RESTART_BACKOFF_MIN", e.BackoffMin <= 0},
		{"IGGY_SUPERVISOR_RESTART_BACKOFF_MAX", e.BackoffMax < e.BackoffMin},
		{"IGGY_SUPERVISOR_STABLE_AFTER", e.StableAfter <= 0},
		{"IGGY_SUPERVISOR_HEALTH_INTERVAL", e.HealthInterval <= 0},
		{"IGGY_SUPERVISOR_RUNNER_TIMEOUT", e.RunnerCallLimit <= 0},
		{"IGGY_SUPERVISOR_FLEET_TIMEOUT", e.FleetTimeout <= 0},
		{"IGGY_SUPERVISOR_RESTART_LIMIT", e.RestartLimit < 0},
		{"IGGY_SUPERVISOR_RESTART_WINDOW", e.RestartWindow <= 0},
	} {
		if c.bad {
			return Env{}, fmt.Errorf("supervisor environment: %s: value out of range", c.name)
		}
	}
	return e, nil
}

// ErrRunnerNotFound: no runner binary was found.
var ErrRunnerNotFound = runnerproc.ErrRunnerNotFound

// runnerBinary finds the runner: the configured path, else next to this executable, else PATH.
func (e Env) runnerBinary() (string, error) { return runnerproc.FindRunner(e.RunnerPath) }

// SupervisorEnvVars lists the supervisor's own variables in declaration order.
func SupervisorEnvVars() []config.EnvVar { return config.StructEnvVars(Env{}) }
