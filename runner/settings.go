package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httpguard"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// Settings is everything a runner reads at start: its own variables, the runtime sections and the
// one connector it runs.
type Settings struct {
	Env       Env
	Runtime   config.Runtime
	Connector config.Connector

	Iggy      iggySettings
	HTTP      httpSettings
	StatePath string
	LogFormat string
}

// iggySettings is the Iggy connection (the runtime file's [iggy] section, token file resolved).
type iggySettings struct {
	Address, Username, Password, Token string
	TLSEnabled                         bool
	TLSCAFile, TLSDomain               string
	Protocol                           string        // auto, 0.8 or 0.9
	RequestTimeout                     time.Duration // [iggy] request_timeout
}

func (s iggySettings) options(e Env, log *slog.Logger) iggyclient.Options {
	return iggyclient.Options{
		Address: s.Address, Username: s.Username, Password: s.Password, Token: s.Token,
		TLSEnabled: s.TLSEnabled, TLSCAFile: s.TLSCAFile, TLSDomain: s.TLSDomain,
		Protocol: s.Protocol, RequestTimeout: s.RequestTimeout,
		ReconnectMin: e.ReconnectMin, ReconnectMax: e.ReconnectMax,
		HeartbeatInterval: e.HeartbeatInterval,
		Logger:            log.With("component", "iggy"),
	}
}

// LoadSettings reads the runner's configuration from environ only ("NAME=value" entries): its own
// variables, the optional runtime file of IGGY_CONNECTORS_CONFIG_PATH overlaid by IGGY_CONNECTORS_*,
// then the connector from a file, inline text or the configured provider. The connector's
// IGGY_CONNECTORS_SINK_<KEY>_* / _SOURCE_<KEY>_* overrides apply to a file, inline text and the
// local provider's files, never to a config served by the HTTP provider (docs/config.md §4.5, §5.1).
// Each error names the variable, file or key at fault.
func LoadSettings(ctx context.Context, environ []string) (Settings, error) {
	// A supervisor hands its secrets in a private file, not in the environment.
	environ, err := runnerproc.MergeSecrets(environ)
	if err != nil {
		return Settings{}, err
	}
	e, err := ParseEnv(environ)
	if err != nil {
		return Settings{}, err
	}
	runtimePath := ""
	if e.RuntimeConfigPath != "" {
		wd, _ := os.Getwd()
		runtimePath = config.FindRuntimeFile(e.RuntimeConfigPath, wd)
		if runtimePath == "" {
			return Settings{}, fmt.Errorf("%s=%q: no such file", config.EnvConfigPath, e.RuntimeConfigPath)
		}
	}
	rt, err := config.LoadRuntime(runtimePath, environ)
	if err != nil {
		return Settings{}, err
	}
	// The endpoint's access policy is checked with the rest of the configuration (exit 2).
	if _, err := httpguard.New(rt.HTTP); err != nil {
		return Settings{}, err
	}
	token, err := rt.Iggy.ResolveToken()
	if err != nil {
		return Settings{}, fmt.Errorf("IGGY_CONNECTORS_IGGY_TOKEN: %w", err)
	}

	conn, err := loadConnector(ctx, e, rt, environ)
	if err != nil {
		return Settings{}, err
	}
	s := Settings{
		Env: e, Runtime: rt, Connector: conn,
		Iggy: iggySettings{
			Address: rt.Iggy.Address, Username: rt.Iggy.Username, Password: rt.Iggy.Password, Token: token,
			TLSEnabled: rt.Iggy.TLS.Enabled, TLSCAFile: rt.Iggy.TLS.CAFile, TLSDomain: rt.Iggy.TLS.Domain,
			Protocol: rt.Iggy.Protocol, RequestTimeout: rt.Iggy.RequestTimeout,
		},
		HTTP: httpSettings{
			Enabled: rt.HTTP.Enabled, Address: rt.HTTP.Address, APIKey: rt.HTTP.APIKey,
			TLSEnabled: rt.HTTP.TLS.Enabled, TLSCertFile: rt.HTTP.TLS.CertFile, TLSKeyFile: rt.HTTP.TLS.KeyFile,
			MetricsEndpoint: rt.HTTP.Metrics.Endpoint, Limits: rt.HTTP.Limits, Access: rt.HTTP,
		},
		StatePath: rt.State.Path,
		LogFormat: rt.Logging.Format,
	}
	return s, nil
}

// loadConnector reads the one connector from the source ParseEnv checked was chosen.
func loadConnector(ctx context.Context, e Env, rt config.Runtime, environ []string) (config.Connector, error) {
	var (
		c   config.Connector
		err error
	)
	switch {
	case e.ConfigPath != "":
		data, rerr := os.ReadFile(e.ConfigPath)
		if rerr != nil {
			return config.Connector{}, fmt.Errorf("%s: %w", varConfigPath, rerr)
		}
		format := "toml"
		if strings.EqualFold(filepath.Ext(e.ConfigPath), ".json") {
			format = "json"
		}
		c, err = config.ParseConnector(e.ConfigPath, data, format)
		if err != nil {
			return config.Connector{}, fmt.Errorf("%s: %w", varConfigPath, err)
		}
	case e.ConfigInline != "":
		format := "toml"
		if strings.HasPrefix(strings.TrimSpace(e.ConfigInline), "{") {
			format = "json"
		}
		c, err = config.ParseConnector(varConfigInline, []byte(e.ConfigInline), format)
		if err != nil {
			return config.Connector{}, err // the error already names IGGY_CONNECTOR_CONFIG
		}
	default:
		// No overrides here: the local provider applies them to its files itself (docs/config.md §4.5),
		// and a config served by the HTTP provider takes none (§5.1).
		c, err = fetchConnector(ctx, rt, environ, e.Type, e.Key)
		if err != nil {
			return config.Connector{}, fmt.Errorf("%s=%s %s=%s: %w", varType, e.Type, varKey, e.Key, err)
		}
		return c, nil
	}
	if err := config.ApplyConnectorEnv(&c, environ); err != nil {
		return config.Connector{}, fmt.Errorf("connector %q environment overrides: %w", c.Key, err)
	}
	return c, nil
}
