// Package config reads the runtime configuration (file, IGGY_CONNECTORS_* overrides, .env) and the connector configuration file format shared by the runner and the supervisor.
package config
