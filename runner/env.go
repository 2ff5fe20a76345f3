package runner

import (
	"fmt"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// Env holds the runner's own variables: where the connector config comes from, and the
// runner-specific timeouts and retry limits. The runtime sections (IGGY_CONNECTORS_IGGY_*,
// IGGY_CONNECTORS_HTTP_*, ...) are read by pkg/config with the supervisor's names.
type Env struct {
	// RuntimeConfigPath is an optional runtime config file (upstream's config.toml); env overrides it.
	RuntimeConfigPath string `env:"IGGY_CONNECTORS_CONFIG_PATH" help:"optional runtime config file (TOML), read before the IGGY_CONNECTORS_* overrides"`

	// The connector: exactly one of ConfigPath, ConfigInline or Type+Key.
	ConfigPath   string `env:"IGGY_CONNECTOR_CONFIG_PATH" help:"one connector file (TOML, or JSON when it ends in .json)"`
	ConfigInline string `env:"IGGY_CONNECTOR_CONFIG" help:"one connector config inline, TOML or JSON (JSON when it starts with '{')"`
	Type         string `env:"IGGY_CONNECTOR_TYPE" help:"sink or source; with IGGY_CONNECTOR_KEY fetches the active config from the configured provider"`
	Key          string `env:"IGGY_CONNECTOR_KEY" help:"connector key to fetch from the provider (with IGGY_CONNECTOR_TYPE)"`
	// SecretsPath is read (and removed) before the rest by runnerproc.MergeSecrets; it is listed
	// here for --help.
	SecretsPath string `env:"IGGY_CONNECTOR_SECRETS_PATH" help:"a private file (a JSON object of variable names and values) whose variables are read as if set, then the file is removed: how a supervisor hands its runners their secrets outside the environment"`

	LogLevel string `env:"IGGY_CONNECTOR_LOG_LEVEL" envDefault:"info" help:"log level (trace, debug, info, warn, error or off) when RUST_LOG is unset; RUST_LOG takes target directives as upstream"`

	PluginCallTimeout time.Duration `env:"IGGY_CONNECTOR_PLUGIN_TIMEOUT" envDefault:"60s" help:"longest a single plugin call (open, consume, batch result, close) may take before the connector is declared hung; 0 = no limit"`
	ShutdownTimeout   time.Duration `env:"IGGY_CONNECTOR_SHUTDOWN_TIMEOUT" envDefault:"10s" help:"time to settle the in-flight batch and close the plugin after SIGTERM/SIGINT (one budget for both)"`
	ConsumeRetries    int           `env:"IGGY_CONNECTOR_CONSUME_RETRIES" envDefault:"5" help:"sink: retries of a failed consume call before the connector goes to error and the runner exits"`
	SendRetries       int           `env:"IGGY_CONNECTOR_SEND_RETRIES" envDefault:"3" help:"source: retries of a failed send to Iggy before the batch is NACKed"`
	RetryBackoffMin   time.Duration `env:"IGGY_CONNECTOR_RETRY_BACKOFF_MIN" envDefault:"100ms" help:"first pause between retries (doubles per attempt; each pause jittered ±20%)"`
	RetryBackoffMax   time.Duration `env:"IGGY_CONNECTOR_RETRY_BACKOFF_MAX" envDefault:"5s" help:"cap of the retry pause"`
	ReconnectMin      time.Duration `env:"IGGY_CONNECTOR_RECONNECT_MIN" envDefault:"100ms" help:"first pause before reconnecting to Iggy after the connection dropped (doubles per attempt; each pause jittered ±20%)"`
	ReconnectMax      time.Duration `env:"IGGY_CONNECTOR_RECONNECT_MAX" envDefault:"1s" help:"cap of the reconnect pause (as Kafka's reconnect.backoff.max.ms): a runner is back within about this long after Iggy returns"`
	HeartbeatInterval time.Duration `env:"IGGY_CONNECTOR_HEARTBEAT_INTERVAL" envDefault:"5s" help:"how often the runner pings Iggy, busy or idle; a server with [heartbeat] enabled drops a client silent for 1.2 of its intervals, so keep this below that"`
	StallNacks        int           `env:"IGGY_CONNECTOR_STALL_NACKS" envDefault:"5" help:"source: consecutive NACKs after which the plugin's poll loop has stopped (SDK limit 5) and the runner exits"`
	CPUProfile        string        `env:"IGGY_CONNECTOR_CPU_PROFILE" help:"write a Go CPU profile of the whole run to this file (for performance work)"`
	StatsPage         string        `env:"IGGY_CONNECTOR_STATS_PAGE" help:"stats page file the supervisor created for this connector: counters, histograms and status go there, where the supervisor reads them and they outlive a crash; unset: kept in memory"`
	InstanceID        uint32        `env:"IGGY_CONNECTOR_INSTANCE_ID" help:"plugin instance id to open the plugin with (the supervisor numbers them as upstream does, as GET /sinks shows them); 0 or unset: 1"`
	SourceQueue       int           `env:"IGGY_CONNECTOR_SOURCE_QUEUE" envDefault:"2" help:"source: batches buffered between the plugin thread and the sender; a full queue rejects the batch"`
	PluginLogRate     int           `env:"IGGY_CONNECTOR_PLUGIN_LOG_RATE" envDefault:"10000" help:"most plugin log lines a second; more are dropped and counted (log_lines_dropped in /stats, iggy_connector_log_lines_dropped_total); 0 = no limit"`
	StartPaused       bool          `env:"IGGY_CONNECTOR_START_PAUSED" envDefault:"false" help:"start paused (as after POST /pause): a sink polls nothing and a source opens no plugin until POST /resume; the supervisor sets it for a connector an operator paused"`
	PluginLogCeiling  string        `env:"IGGY_CONNECTOR_PLUGIN_LOG_CEILING" help:"the most verbose level (trace, debug, ...) the plugin is asked to send from its first open, so PUT /log_level can raise its lines up to it later (each line the filter then drops costs ~0.6 µs); unset: what the log filter takes"`
}

// connector-config sources (runnerproc: the supervisor sets them), named for error messages. The
// env tags above must spell the same names; a test checks they do.
const (
	varConfigPath   = runnerproc.EnvConfigPath
	varConfigInline = runnerproc.EnvConfig
	varType         = runnerproc.EnvType
	varKey          = runnerproc.EnvKey
)

// ParseEnv reads the runner's own variables from env ("NAME=value" entries, as os.Environ gives).
// It checks that exactly one connector source is chosen and every value is in range.
func ParseEnv(environ []string) (Env, error) {
	var e Env
	if err := config.ParseEnvStruct(&e, environ); err != nil {
		return Env{}, fmt.Errorf("runner environment: %w", err)
	}
	return e, e.validate()
}

func (e Env) validate() error {
	chosen := 0
	for _, set := range []bool{e.ConfigPath != "", e.ConfigInline != "", e.Type != "" || e.Key != ""} {
		if set {
			chosen++
		}
	}
	switch {
	case chosen == 0:
		return fmt.Errorf("no connector configured: set %s, %s, or %s with %s", varConfigPath, varConfigInline, varType, varKey)
	case chosen > 1:
		return fmt.Errorf("more than one connector source set: use only one of %s, %s, or %s with %s", varConfigPath, varConfigInline, varType, varKey)
	}
	if e.Type != "" || e.Key != "" {
		if e.Type != "sink" && e.Type != "source" {
			return fmt.Errorf("%s=%q: must be sink or source", varType, e.Type)
		}
		if e.Key == "" {
			return fmt.Errorf("%s is required with %s", varKey, varType)
		}
	}
	if _, err := levelDirective(e.LogLevel); err != nil {
		return fmt.Errorf("IGGY_CONNECTOR_LOG_LEVEL=%q: %w", e.LogLevel, err)
	}
	if _, err := pluginLogCeiling(e.PluginLogCeiling); err != nil {
		return fmt.Errorf("IGGY_CONNECTOR_PLUGIN_LOG_CEILING=%q: %w", e.PluginLogCeiling, err)
	}
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"IGGY_CONNECTOR_PLUGIN_TIMEOUT", e.PluginCallTimeout < 0},
		{"IGGY_CONNECTOR_SHUTDOWN_TIMEOUT", e.ShutdownTimeout <= 0},
		{"IGGY_CONNECTOR_CONSUME_RETRIES", e.ConsumeRetries < 0},
		{"IGGY_CONNECTOR_SEND_RETRIES", e.SendRetries < 0},
		{"IGGY_CONNECTOR_RETRY_BACKOFF_MIN", e.RetryBackoffMin <= 0},
		{"IGGY_CONNECTOR_RETRY_BACKOFF_MAX", e.RetryBackoffMax < e.RetryBackoffMin},
		{"IGGY_CONNECTOR_RECONNECT_MIN", e.ReconnectMin <= 0},
		{"IGGY_CONNECTOR_RECONNECT_MAX", e.ReconnectMax < e.ReconnectMin},
		{"IGGY_CONNECTOR_HEARTBEAT_INTERVAL", e.HeartbeatInterval <= 0},
		{"IGGY_CONNECTOR_STALL_NACKS", e.StallNacks < 1},
		{"IGGY_CONNECTOR_SOURCE_QUEUE", e.SourceQueue < 1},
		{"IGGY_CONNECTOR_PLUGIN_LOG_RATE", e.PluginLogRate < 0},
	} {
		if c.bad {
			return fmt.Errorf("%s: value out of range", c.name)
		}
	}
	return nil
}

// RunnerEnvVars lists the runner's own variables with their defaults, in declaration order.
func RunnerEnvVars() []config.EnvVar { return config.StructEnvVars(Env{}) }
