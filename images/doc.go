// Package images holds the container images of the project and the checks of every deployment
// file that uses them.
//
//   - runner/Dockerfile: iggy-connector-runner, one connector per container, configured by
//     environment variables only (targets: runner, runner-with-examples).
//   - supervisor/Dockerfile: iggy-connectors, the drop-in supervisor, with the runner binary
//     (targets: supervisor, supervisor-with-examples); supervisor/config.toml is its default config.
//   - healthcheck.sh: the images' HEALTHCHECK probe of /health, following IGGY_CONNECTORS_HTTP_ADDRESS.
//
// Docker cannot run on the build machines, so the tests in this folder parse every Dockerfile
// (buildkit's parser), every docker-compose file under compose/ (compose-go), the Nomad job (HCL),
// the ECS task definition (JSON), the Kubernetes kustomizations (kustomize's Go API) and the Helm
// chart (Helm's loader and engine; objects decoded strictly into k8s.io/api types), and check them
// against the real program: every variable they set must be one the runner or supervisor reads
// (runner.RunnerEnvVars, supervisor.SupervisorEnvVars, config.RuntimeEnvVars, connector
// overrides), ports, health checks and probes must match the configured HTTP address and routes,
// every connector config must load, and every file they reference must exist. The Prometheus
// alerts and the Grafana dashboard are checked with promtool and a real Prometheus scraping a
// running supervisor (prometheus_test.go); the supervisor image's upstream /app layout is run for
// real (dropin_test.go). The chart's KEDA ScaledObjects (autoscaling.enabled) are checked against
// KEDA's own CRD, vendored in testdata/keda, as the API server would check them, and their lag
// query is run on a real Prometheus scraping a lagging runner (keda_test.go). There is no Go code
// to import here.
//
// The folder is a Go module of its own (go.mod, with a replace of the project's root module by
// ../), so the deployment tools these checks parse with (Helm, Kubernetes, kustomize, buildkit,
// compose-go, HCL, KEDA's CRD types) are requirements of this module only: the root go.mod, the
// binaries and the images' `go mod download` never fetch them. `go test ./...` from the root does
// not reach this module; `make test` runs both.
package images
