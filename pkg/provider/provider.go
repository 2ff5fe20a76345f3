package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// Provider is a store of versioned connector configurations. Every method is
// safe for concurrent use. Kinds are config.KindSink or config.KindSource;
// sinks and sources are separate key namespaces.
type Provider interface {
	// List returns the active version of every connector, enabled or not,
	// sinks first, each kind sorted by key. A connector config that does not
	// load is left out (see Broken); the call fails only when the store
	// itself cannot be read.
	List(ctx context.Context) ([]config.Connector, error)
	// Broken lists the connector configs that do not load, sorted as List:
	// for Local the files read again now, for HTTP the bad entries of the
	// latest List answer.
	Broken(ctx context.Context) []Broken
	// Get returns the active version of one connector (what a restart
	// uses, docs/architecture.md, decision 6). A missing connector is ErrNotFound.
	Get(ctx context.Context, kind config.ConnectorKind, key string) (config.Connector, error)
	// Versions returns every stored version of a key, ascending; none is an
	// empty list, not an error.
	Versions(ctx context.Context, kind config.ConnectorKind, key string) ([]config.Connector, error)
	// GetVersion returns one version; a missing one is ErrNotFound.
	GetVersion(ctx context.Context, kind config.ConnectorKind, key string, version uint64) (config.Connector, error)
	// Create validates c and stores it as the next version of key (c's Kind,
	// Key and Version are replaced). It does not activate it. An invalid
	// config is ErrInvalid and nothing is stored.
	Create(ctx context.Context, kind config.ConnectorKind, key string, c config.Connector) (config.Connector, error)
	// Delete removes one version, or the active pointer's version when
	// version is nil (§4.3). A missing target is ErrNotFound.
	Delete(ctx context.Context, kind config.ConnectorKind, key string, version *uint64) error
	// SetActive points key at an existing version; a missing one is
	// ErrNotFound. Running connectors are not touched.
	SetActive(ctx context.Context, kind config.ConnectorKind, key string, version uint64) error
}

// Errors callers branch on (REST: 404, 400, 500 http_request_failed).
var (
	ErrNotFound = errors.New("connector config not found")
	// ErrInvalid is config.ErrInvalidConnector, so errors from parsing a
	// connector and from a provider match the same sentinel.
	ErrInvalid = config.ErrInvalidConnector
	// ErrRequestFailed wraps every failure of the HTTP provider; its text
	// starts "HTTP request failed:" as upstream's does.
	ErrRequestFailed = errors.New("HTTP request failed")
)

// NotFoundError names the missing connector config. It matches ErrNotFound.
type NotFoundError struct {
	Kind    config.ConnectorKind
	Key     string
	Version uint64 // 0 also when no version was asked for, as upstream reports it
}

func (e *NotFoundError) Error() string {
	kind := "Sink"
	if e.Kind == config.KindSource {
		kind = "Source"
	}
	return fmt.Sprintf("%s config not found with key: %s, version: %d", kind, e.Key, e.Version)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

func notFound(kind config.ConnectorKind, key string, version uint64) error {
	return &NotFoundError{Kind: kind, Key: key, Version: version}
}

// New opens the provider the runtime configuration selects
// (connectors.config_type). env is the process environment, searched by the
// local provider for connector overrides (docs/config.md §4.5).
func New(rt config.Runtime, env []string, log *slog.Logger) (Provider, error) {
	switch rt.Connectors.ConfigType {
	case config.ProviderLocal:
		return NewLocal(rt.Connectors.ConfigDir, env, log)
	case config.ProviderHTTP:
		h, err := NewHTTP(rt.Connectors, log)
		if err != nil {
			return nil, err
		}
		// Error texts are logged whatever http.reveal_secrets says.
		h.secrets = config.SecretKeys(rt.HTTP.SecretKeys)
		return h, nil
	}
	return nil, fmt.Errorf("%w: connectors.config_type: unknown provider %q", ErrInvalid, rt.Connectors.ConfigType)
}

func checkKindKey(kind config.ConnectorKind, key string) error {
	if _, err := config.ParseKind(string(kind)); err != nil {
		return err
	}
	return config.ValidKey(key)
}
