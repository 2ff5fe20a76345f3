package images_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httpguard"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
	"github.com/iggy-connectors-go/runtime/runner"
	"github.com/iggy-connectors-go/runtime/supervisor"
)

// This file is the checker shared by the Dockerfile, compose, Nomad and ECS tests: each format is
// parsed into containers, and every container running one of our binaries is checked the same way.

// role says which of our binaries a container runs.
type role string

const (
	roleRunner     role = "iggy-connector-runner"
	roleSupervisor role = "iggy-connectors"
)

// container is one runner or supervisor container as a deployment file describes it.
type container struct {
	origin string // names the file and service/task, for error messages
	role   role
	// env is the effective environment: the image's ENV, then the deployment file's variables.
	env map[string]string
	// publishedPorts are the container-side ports the file publishes or maps.
	publishedPorts []int
	// healthChecks are the probes the file defines; none means the image's HEALTHCHECK is used.
	healthChecks []healthProbe
	// mounts maps a container path to the host path bind-mounted there.
	mounts map[string]string
	// pluginDir and plugins: the example plugins the image ships (empty without them).
	pluginDir string
	plugins   []string
	// volumeDirs are directories of volumes the operator fills (a Kubernetes init container
	// copying from a plugin image, a claim): any plugin in them counts as provided.
	volumeDirs []string
	// stopGrace is how long the orchestrator waits after SIGTERM before it kills the container;
	// 0 when the file cannot say (a Dockerfile).
	stopGrace time.Duration
}

// dockerStopGrace is what `docker stop` and compose wait when nothing else is set.
const dockerStopGrace = 10 * time.Second

// healthProbe is one health check: a URL it requests, or the image's own probe script.
type healthProbe struct {
	command    string // as written, for messages
	url        *url.URL
	imageProbe bool
}

const imageProbeName = "iggy-connectors-healthcheck"

// parseHealthCommand finds what a health check command probes.
func parseHealthCommand(args []string) healthProbe {
	p := healthProbe{command: strings.Join(args, " ")}
	for _, a := range args {
		for _, word := range strings.Fields(a) {
			if strings.HasPrefix(word, "http://") || strings.HasPrefix(word, "https://") {
				if u, err := url.Parse(strings.Trim(word, `"'`)); err == nil {
					p.url = u
					return p
				}
			}
			if path.Base(word) == imageProbeName {
				p.imageProbe = true
			}
		}
	}
	return p
}

// repoRoot is the repository's top directory (this package is one level down).
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// acceptedNames lists the variables a role reads, from the programs' own lists. The supervisor
// also accepts the runner's variables except the connector selectors: it passes its environment
// through to every runner it spawns.
func acceptedNames(r role) map[string]bool {
	names := map[string]bool{}
	for _, v := range runner.RunnerEnvVars() {
		names[v.Name] = true
	}
	if r == roleSupervisor {
		for _, sel := range []string{"IGGY_CONNECTOR_CONFIG", "IGGY_CONNECTOR_CONFIG_PATH", "IGGY_CONNECTOR_TYPE", "IGGY_CONNECTOR_KEY"} {
			delete(names, sel)
		}
		for _, v := range supervisor.SupervisorEnvVars() {
			names[v.Name] = true
		}
	}
	for _, v := range config.RuntimeEnvVars() {
		// The runner has no dotenv and does not print its config: of the loader variables it
		// reads only the config path.
		if r == roleRunner && v.Key == "" && v.Name != config.EnvConfigPath {
			continue
		}
		names[v.Name] = true
	}
	return names
}

// connectorRef names a connector a container runs, for its env overrides.
type connectorRef struct {
	kind config.ConnectorKind
	key  string
}

var (
	errUnknownVariable = errors.New("variable is not read by")
	errPort            = errors.New("port does not match the HTTP address")
	errHealth          = errors.New("health check does not probe the HTTP endpoint's /health")
	errMissingFile     = errors.New("referenced file does not exist")
	errPlugin          = errors.New("plugin is not in the image or mounted")
	errNoConnector     = errors.New("runs no connector")
	errStopGrace       = errors.New("stop grace period is not longer than the program's drain time")
	errOpenAPI         = errors.New("control API open to the network")
)

// checkEnv reports every variable the container's program does not read. A connector override
// (IGGY_CONNECTORS_SINK_<KEY>_..., _SOURCE_<KEY>_...) must name a connector the container runs
// and a field the override code knows.
func checkEnv(c container, connectors []connectorRef, overridesApply bool) []error {
	accepted := acceptedNames(c.role)
	environ := environList(c.env)
	var errs []error
	for _, name := range sortedKeys(c.env) {
		if accepted[name] {
			continue
		}
		if strings.HasPrefix(name, config.EnvPrefix+"SINK_") || strings.HasPrefix(name, config.EnvPrefix+"SOURCE_") {
			if err := checkOverride(name, connectors, overridesApply, environ); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c.origin, err))
			}
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s: %w %s", c.origin, name, errUnknownVariable, c.role))
	}
	return errs
}

func checkOverride(name string, connectors []connectorRef, overridesApply bool, environ []string) error {
	if !overridesApply {
		return fmt.Errorf("%s: %w: connector overrides do not apply to configs from the http provider", name, errUnknownVariable)
	}
	for _, ref := range connectors {
		if !strings.HasPrefix(name, config.ConnectorEnvPrefix(ref.kind, ref.key)) {
			continue
		}
		for _, w := range config.ConnectorEnvWarnings(ref.kind, ref.key, []string{name + "=" + envValue(environ, name)}) {
			return fmt.Errorf("%s: %w: %s", name, errUnknownVariable, w)
		}
		return nil
	}
	return fmt.Errorf("%s: %w: no connector of this container has that prefix", name, errUnknownVariable)
}

// effectiveRuntime loads the runtime configuration the container's program would see: the
// config file its IGGY_CONNECTORS_CONFIG_PATH names (through the bind mounts) under its variables.
func effectiveRuntime(c container) (config.Runtime, error) {
	file := ""
	if p := c.env[config.EnvConfigPath]; p != "" {
		host, ok := c.mounts[p]
		if !ok {
			host, ok = imageFile(c, p)
		}
		if !ok {
			return config.Runtime{}, fmt.Errorf("%s: %s=%s: %w (neither mounted nor in the image)", c.origin, config.EnvConfigPath, p, errMissingFile)
		}
		file = host
	}
	rt, err := config.LoadRuntime(file, environList(c.env))
	if err != nil {
		return config.Runtime{}, fmt.Errorf("%s: runtime config: %w", c.origin, err)
	}
	return rt, nil
}

// imageFiles maps files the Dockerfiles COPY from the repository to their place in the image.
var imageFiles = map[role]map[string]string{
	roleSupervisor: {"/etc/iggy-connectors/config.toml": "images/supervisor/config.toml"},
}

func imageFile(c container, p string) (string, bool) {
	rel, ok := imageFiles[c.role][p]
	if !ok {
		return "", false
	}
	root, _ := filepath.Abs("..")
	return filepath.Join(root, rel), true
}

// checkHTTP checks that published ports and health checks use the port of the HTTP address the
// program binds, and that a published endpoint does not bind loopback only.
func checkHTTP(c container, rt config.Runtime) []error {
	host, portText, err := net.SplitHostPort(rt.HTTP.Address)
	if err != nil {
		return []error{fmt.Errorf("%s: http address %q: %w", c.origin, rt.HTTP.Address, err)}
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return []error{fmt.Errorf("%s: http address %q: port: %w", c.origin, rt.HTTP.Address, err)}
	}
	var errs []error
	for _, p := range c.publishedPorts {
		if p != port {
			errs = append(errs, fmt.Errorf("%s: published container port %d: %w %q", c.origin, p, errPort, rt.HTTP.Address))
		}
	}
	if len(c.publishedPorts) > 0 && isLoopback(host) {
		errs = append(errs, fmt.Errorf("%s: port published but the HTTP address %q listens on loopback only: %w", c.origin, rt.HTTP.Address, errPort))
	}
	scheme := "http"
	if rt.HTTP.TLS.Enabled {
		scheme = "https"
	}
	for _, h := range c.healthChecks {
		switch {
		case h.imageProbe:
			// The image's probe reads IGGY_CONNECTORS_HTTP_ADDRESS itself.
		case h.url == nil:
			errs = append(errs, fmt.Errorf("%s: %q: %w", c.origin, h.command, errHealth))
		case h.url.Scheme != scheme || h.url.Path != "/health" || h.url.Port() != portText || !isLoopback(h.url.Hostname()):
			errs = append(errs, fmt.Errorf("%s: %q (want %s://127.0.0.1:%d/health for %q): %w", c.origin, h.command, scheme, port, rt.HTTP.Address, errHealth))
		}
	}
	return errs
}

// checkAccess checks that a deployed program's API is not open: a listener beyond loopback has an
// API key (a secret's value counts), and nothing opts out of the key.
func checkAccess(c container, rt config.Runtime) []error {
	var errs []error
	if httpguard.Exposed(rt.HTTP.Address) && rt.HTTP.APIKey == "" {
		errs = append(errs, fmt.Errorf("%s: http address %q without an API key: %w (set IGGY_CONNECTORS_HTTP_API_KEY from a secret)", c.origin, rt.HTTP.Address, errOpenAPI))
	}
	if rt.HTTP.AllowUnauthenticated {
		errs = append(errs, fmt.Errorf("%s: http.allow_unauthenticated is set: %w", c.origin, errOpenAPI))
	}
	return errs
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// containerConnectors loads the connectors the container runs: a runner's from its variables (the
// runner's own loader), a local supervisor's from its mounted connectors directory (the local
// provider). For the http provider it returns none: TestHTTPProviderExample serves those.
func containerConnectors(ctx context.Context, c container, rt config.Runtime) ([]config.Connector, bool, error) {
	environ := environList(c.env)
	if c.role == roleRunner {
		if p := c.env["IGGY_CONNECTOR_CONFIG_PATH"]; p != "" {
			host, ok := c.mounts[p]
			if !ok {
				return nil, true, fmt.Errorf("%s: IGGY_CONNECTOR_CONFIG_PATH=%s: %w (not mounted)", c.origin, p, errMissingFile)
			}
			environ = append(environ, "IGGY_CONNECTOR_CONFIG_PATH="+host)
		}
		s, err := runner.LoadSettings(ctx, environ)
		if err != nil {
			return nil, true, fmt.Errorf("%s: runner settings: %w", c.origin, err)
		}
		return []config.Connector{s.Connector}, true, nil
	}
	if rt.Connectors.ConfigType == config.ProviderHTTP || rt.Fleet.Enabled {
		// Served elsewhere: by the config server, or (attach mode) by the runners themselves.
		return nil, false, nil
	}
	dir, ok := c.mounts[rt.Connectors.ConfigDir]
	if !ok {
		return nil, true, fmt.Errorf("%s: connectors.config_dir %q: %w (not mounted)", c.origin, rt.Connectors.ConfigDir, errMissingFile)
	}
	local, err := provider.NewLocal(dir, environ, nil)
	if err != nil {
		return nil, true, fmt.Errorf("%s: connectors directory %s: %w", c.origin, dir, err)
	}
	list, err := local.List(ctx)
	if err != nil {
		return nil, true, fmt.Errorf("%s: connectors directory %s: %w", c.origin, dir, err)
	}
	// The runtime would list a file that does not load in error: an example must have none.
	if broken := local.Broken(ctx); len(broken) > 0 {
		return nil, true, fmt.Errorf("%s: connectors directory %s: %w", c.origin, dir, broken[0].Err)
	}
	return list, true, nil
}

// checkPlugins checks that each enabled connector's plugin is one the image ships or a mounted file.
func checkPlugins(c container, connectors []config.Connector) []error {
	var errs []error
	for _, conn := range connectors {
		if !conn.Enabled {
			continue
		}
		lib := conn.Path
		if !slices.Contains([]string{".so", ".dylib", ".dll"}, path.Ext(lib)) {
			lib += ".so"
		}
		if c.pluginDir != "" && path.Dir(lib) == c.pluginDir && slices.Contains(c.plugins, path.Base(lib)) {
			continue
		}
		if slices.Contains(c.volumeDirs, path.Dir(lib)) {
			continue
		}
		if host, ok := c.mounts[lib]; ok && fileExists(host) {
			continue
		}
		if host, ok := c.mounts[path.Dir(lib)]; ok && fileExists(filepath.Join(host, path.Base(lib))) {
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s %q: path %q: %w (image plugins: %v)", c.origin, conn.Kind, conn.Key, conn.Path, errPlugin, c.plugins))
	}
	return errs
}

// checkContainer runs every check of one container and returns its connectors.
func checkContainer(ctx context.Context, c container) ([]config.Connector, []error) {
	rt, err := effectiveRuntime(c)
	if err != nil {
		return nil, append(checkEnv(c, nil, true), err)
	}
	errs := checkHTTP(c, rt)
	errs = append(errs, checkAccess(c, rt)...)
	connectors, overridesApply, err := containerConnectors(ctx, c, rt)
	if err != nil {
		errs = append(errs, err)
	} else if overridesApply && len(connectors) == 0 {
		errs = append(errs, fmt.Errorf("%s: %w", c.origin, errNoConnector))
	}
	refs := make([]connectorRef, 0, len(connectors))
	for _, conn := range connectors {
		refs = append(refs, connectorRef{conn.Kind, conn.Key})
	}
	errs = append(errs, checkEnv(c, refs, overridesApply)...)
	errs = append(errs, checkPlugins(c, connectors)...)
	errs = append(errs, checkStopGrace(c)...)
	return connectors, errs
}

// checkStopGrace checks that the container is given longer to stop than the program takes to
// drain after SIGTERM (the runner's shutdown timeout, the supervisor's drain timeout), read with
// the programs' own parsers.
func checkStopGrace(c container) []error {
	if c.stopGrace == 0 {
		return nil
	}
	environ := environList(c.env)
	var drain time.Duration
	var name string
	switch c.role {
	case roleRunner:
		e, err := runner.ParseEnv(environ)
		if err != nil {
			return []error{fmt.Errorf("%s: %w", c.origin, err)}
		}
		drain, name = e.ShutdownTimeout, "IGGY_CONNECTOR_SHUTDOWN_TIMEOUT"
	case roleSupervisor:
		e, err := supervisor.ParseEnv(environ)
		if err != nil {
			return []error{fmt.Errorf("%s: %w", c.origin, err)}
		}
		drain, name = e.DrainTimeout, "IGGY_SUPERVISOR_DRAIN_TIMEOUT"
	}
	if c.stopGrace <= drain {
		return []error{fmt.Errorf("%s: %s <= %s %s: %w", c.origin, c.stopGrace, name, drain, errStopGrace)}
	}
	return nil
}

// examplePlugins lists the plugin files `make plugins` builds (the Makefile's PLUGIN_NAMES), which
// the images' example stages copy to /opt/iggy/connectors. Each must have its C source.
func examplePlugins(root string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`(?m)^PLUGIN_NAMES\s*:=\s*(.+)$`).FindStringSubmatch(string(data))
	if m == nil {
		return nil, fmt.Errorf("Makefile: no PLUGIN_NAMES line")
	}
	var libs []string
	for _, name := range strings.Fields(m[1]) {
		if !fileExists(filepath.Join(root, "pkg/plugin/cplugins", name+".c")) {
			return nil, fmt.Errorf("Makefile PLUGIN_NAMES has %s: pkg/plugin/cplugins/%s.c: %w", name, name, errMissingFile)
		}
		libs = append(libs, "libiggy_connector_"+name+".so")
	}
	return libs, nil
}

// neededTopics lists "stream/topic" for every stream entry of the enabled connectors.
func neededTopics(connectors []config.Connector) []string {
	var out []string
	for _, c := range connectors {
		if !c.Enabled {
			continue
		}
		for _, s := range c.Streams {
			topics := s.Topics
			if c.Kind == config.KindSource {
				topics = []string{s.Topic}
			}
			for _, topic := range topics {
				out = append(out, s.Stream+"/"+topic)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func environList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range sortedKeys(env) {
		out = append(out, k+"="+env[k])
	}
	return out
}

func envValue(environ []string, name string) string {
	for _, kv := range environ {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// reportErrors reports each error as a test failure.
func reportErrors(t *testing.T, errs []error) {
	t.Helper()
	for _, err := range errs {
		t.Error(err)
	}
}
