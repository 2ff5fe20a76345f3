// Package provider fetches and stores connector configurations (docs/config.md
// §4-5). Two implementations share the Provider interface: Local, a
// directory of connector TOML files with an .active_versions.toml pointer
// file, and HTTP, a remote config API reached through URL templates with
// retries. The supervisor's config REST routes and the runner's
// IGGY_CONNECTOR_TYPE/IGGY_CONNECTOR_KEY start-up both go through it.
//
// Files: provider.go (interface, errors, New), local.go (Local), http.go
// (HTTP), extract.go (response data/error paths), broken.go (configs that do
// not load: Broken, and the kind and safe key guessed for them). Files are
// replaced crash-safely with pkg/atomicfile.
package provider
