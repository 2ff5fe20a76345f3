package runner

import (
	"net/http"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// configPath is the route an attached supervisor (docs/architecture.md, decision 21) reads the connector's
// config from.
const configPath = "/config"

// handleConfig answers GET /config: the running connector config as the supervisor's GET
// .../configs/active shows it (the version object, "active": true), its secret plugin_config
// values masked as the supervisor API masks them (http.secret_keys, http.reveal_secrets).
func (r *Runner) handleConfig(w http.ResponseWriter, secrets config.SecretKeys) {
	body := r.settings.Connector.MaskSecrets(secrets).VersionJSON(true)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
