// Package supervisor is the drop-in iggy-connectors: it reads the runtime config, spawns one runner process per enabled connector, restarts them, and serves the merged REST API, /stats and /metrics.
package supervisor
