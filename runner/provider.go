package runner

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
)

// fetchConnector asks the configured provider (connectors.config_type: local directory or HTTP) for
// the active config of (kind, key). The local provider applies the connector's env overrides itself.
func fetchConnector(ctx context.Context, rt config.Runtime, environ []string, kind, key string) (config.Connector, error) {
	k, err := config.ParseKind(kind)
	if err != nil {
		return config.Connector{}, err
	}
	p, err := provider.New(rt, environ, slog.New(slog.DiscardHandler))
	if err != nil {
		return config.Connector{}, fmt.Errorf("open connector provider: %w", err)
	}
	c, err := p.Get(ctx, k, key)
	if err != nil {
		return config.Connector{}, fmt.Errorf("fetch %s %q from the %s provider: %w", kind, key, rt.Connectors.ConfigType, err)
	}
	return c, nil
}
