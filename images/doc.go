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
// (buildkit's parser), every docker-compose file under compose/ (compose-go), the Nomad job (HCL)
// and the ECS task definition (JSON), and check them against the real program: every variable
// they set must be one the runner or supervisor reads (runner.RunnerEnvVars,
// supervisor.SupervisorEnvVars, config.RuntimeEnvVars, connector overrides), ports and health
// checks must match the configured HTTP address, every connector config must load, and every
// file they reference must exist. There is no Go code to import here.
package images
