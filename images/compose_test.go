package images_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
)

// composeFiles are the docker-compose examples; the test fails if one is added without a row.
var composeFiles = []string{
	"compose/supervisor/compose.yaml",
	"compose/runners/compose.yaml",
	"compose/http-provider/compose.yaml",
	"compose/iggy09/compose.yaml",
	"compose/fleet/compose.yaml",
}

// iggyImage is the real server at a 0.8.x or a 0.9.x tag; its submatch is the protocol it speaks.
var iggyImage = regexp.MustCompile(`^apache/iggy:(0\.[89])\.\d+(?:-edge\.\d+)?$`)

var (
	errInit       = errors.New("init step does not create")
	errIggyServer = errors.New("iggy server")
	errDependency = errors.New("dependency")
	errPublished  = errors.New("port published beyond loopback")
)

// composeEnv is the shell environment the examples are loaded with: only the keys their comments
// tell the operator to export, the API key and the fleet example's runner key
// (TestComposeRequiresAnAPIKey loads them without them).
var composeEnv = types.Mapping{"IGGY_CONNECTORS_HTTP_API_KEY": "compose-test-key", "IGGY_CONNECTORS_FLEET_RUNNER_API_KEY": "compose-runner-key"}

// loadCompose parses a compose file the way `docker compose` does (interpolation, YAML anchors,
// relative paths resolved against its folder), in composeEnv.
func loadCompose(ctx context.Context, file string) (*types.Project, error) {
	return loadComposeIn(ctx, file, composeEnv)
}

func loadComposeIn(ctx context.Context, file string, env types.Mapping) (*types.Project, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	details := types.ConfigDetails{
		WorkingDir:  filepath.Dir(abs),
		ConfigFiles: []types.ConfigFile{{Filename: abs}},
		Environment: env,
	}
	return loader.LoadWithContext(ctx, details, func(o *loader.Options) {
		if _, ok := o.GetProjectName(); !ok {
			o.SetProjectName(strings.ToLower(filepath.Base(filepath.Dir(abs))), true)
		}
	})
}

// checkCompose checks one compose project: the Iggy server and its init step, every runner and
// supervisor service, and every file the services reference.
func checkCompose(ctx context.Context, root string, p *types.Project) []error {
	var errs []error
	plugins, err := examplePlugins(root)
	if err != nil {
		return []error{err}
	}

	server, serverPort, serverProtocol := "", "", ""
	var initText string
	initService := ""
	for _, name := range sortedKeys(p.Services) {
		s := p.Services[name]
		errs = append(errs, checkServiceFiles(p, s)...)
		errs = append(errs, checkPublishedOnLoopback(p, s)...)
		if !strings.HasPrefix(s.Image, "apache/iggy") {
			continue
		}
		if m := iggyImage.FindStringSubmatch(s.Image); m == nil {
			errs = append(errs, fmt.Errorf("%s: service %s: image %q: %w: want apache/iggy:0.8.x or 0.9.x", p.Name, name, s.Image, errIggyServer))
		} else {
			serverProtocol = m[1]
		}
		text := strings.Join(append(slices.Clone(s.Entrypoint), s.Command...), " ")
		if strings.Contains(text, "stream create") {
			initService, initText = name, text
			if d, ok := s.DependsOn[server]; server == "" || !ok || d.Condition != types.ServiceConditionHealthy {
				errs = append(errs, fmt.Errorf("%s: init service %s: %w: must wait for a healthy iggy server", p.Name, name, errDependency))
			}
			continue
		}
		server = name
		if addr := envOf(s)["IGGY_TCP_ADDRESS"]; addr != "" {
			host, port, err := net.SplitHostPort(addr)
			if err != nil || host != "0.0.0.0" {
				errs = append(errs, fmt.Errorf("%s: service %s: IGGY_TCP_ADDRESS=%q: %w: must listen on 0.0.0.0 to be reachable", p.Name, name, addr, errIggyServer))
			}
			serverPort = port
		} else {
			errs = append(errs, fmt.Errorf("%s: service %s: %w: IGGY_TCP_ADDRESS not set (the server binds 127.0.0.1 by default)", p.Name, name, errIggyServer))
		}
		if s.HealthCheck == nil || !slices.Contains(s.HealthCheck.Test, "ping") {
			errs = append(errs, fmt.Errorf("%s: service %s: %w: no `iggy ping` health check for the init step to wait on", p.Name, name, errIggyServer))
		}
	}
	if server == "" || initService == "" {
		return append(errs, fmt.Errorf("%s: %w: want an apache/iggy server service and an init service that runs `iggy stream create`", p.Name, errIggyServer))
	}
	created := map[string]bool{}
	for _, m := range regexp.MustCompile(`topic create (\S+) (\S+)`).FindAllStringSubmatch(initText, -1) {
		created[m[1]+"/"+m[2]] = true
		if !strings.Contains(initText, "stream create "+m[1]) {
			errs = append(errs, fmt.Errorf("%s: %s: %w stream %s", p.Name, initService, errInit, m[1]))
		}
	}

	var ours []container
	for _, name := range sortedKeys(p.Services) {
		s := p.Services[name]
		c, ok, err := composeContainer(root, p, s, plugins)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		ours = append(ours, c)
		connectors, cerrs := checkContainer(ctx, c)
		errs = append(errs, cerrs...)
		for _, topic := range neededTopics(connectors) {
			if !created[topic] {
				errs = append(errs, fmt.Errorf("%s: %s: %w topic %s that its connectors use", p.Name, initService, errInit, topic))
			}
		}
		if d, ok := s.DependsOn[initService]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
			errs = append(errs, fmt.Errorf("%s: service %s: %w: must wait for %s to complete successfully", p.Name, name, errDependency, initService))
		}
		if rt, err := effectiveRuntime(c); err == nil {
			errs = append(errs, checkReachable(p, name, "iggy.address", rt.Iggy.Address, server, serverPort)...)
			if rt.Iggy.Protocol != config.IggyProtocolAuto && rt.Iggy.Protocol != serverProtocol {
				errs = append(errs, fmt.Errorf("%s: service %s: iggy.protocol %q: %w speaks %s", p.Name, name, rt.Iggy.Protocol, errIggyServer, serverProtocol))
			}
			if rt.Connectors.ConfigType == config.ProviderHTTP {
				u, err := url.Parse(rt.Connectors.BaseURL)
				if err != nil || p.Services[u.Hostname()].Name == "" {
					errs = append(errs, fmt.Errorf("%s: service %s: connectors.base_url %q: %w: no such service", p.Name, name, rt.Connectors.BaseURL, errDependency))
				}
			}
		}
	}
	if len(ours) == 0 {
		errs = append(errs, fmt.Errorf("%s: no runner or supervisor service", p.Name))
	}
	return append(errs, checkFleetKeys(ours)...)
}

// checkReachable checks that an address names the compose service and its port.
func checkReachable(p *types.Project, service, key, address, server, port string) []error {
	host, got, err := net.SplitHostPort(address)
	if err != nil || host != server || got != port {
		return []error{fmt.Errorf("%s: service %s: %s %q: %w: want %s:%s", p.Name, service, key, address, errIggyServer, server, port)}
	}
	return nil
}

// composeContainer turns a service built from one of our Dockerfiles into a container; ok is
// false for other services.
func composeContainer(root string, p *types.Project, s types.ServiceConfig, plugins []string) (container, bool, error) {
	if s.Build == nil {
		for _, spec := range imageSpecs {
			if strings.HasPrefix(s.Image, string(spec.role)+":") {
				return container{}, false, fmt.Errorf("%s: service %s: image %s without build: give it the build section of %s", p.Name, s.Name, s.Image, spec.dockerfile)
			}
		}
		return container{}, false, nil
	}
	rel, err := filepath.Rel(root, filepath.Join(s.Build.Context, s.Build.Dockerfile))
	if err != nil {
		return container{}, false, err
	}
	idx := slices.IndexFunc(imageSpecs, func(spec imageSpec) bool { return spec.dockerfile == filepath.ToSlash(rel) })
	if idx < 0 {
		return container{}, false, fmt.Errorf("%s: service %s: build %s: %w (or not one of images/*/Dockerfile)", p.Name, s.Name, rel, errMissingFile)
	}
	c, err := imageContainer(root, imageSpecs[idx], s.Build.Target, plugins)
	if err != nil {
		return container{}, false, fmt.Errorf("%s: service %s: %w", p.Name, s.Name, err)
	}
	c.origin = fmt.Sprintf("%s: service %s", p.Name, s.Name)
	for k, v := range envOf(s) {
		c.env[k] = v
	}
	c.stopGrace = dockerStopGrace
	if s.StopGracePeriod != nil {
		c.stopGrace = time.Duration(*s.StopGracePeriod)
	}
	for _, port := range s.Ports {
		c.publishedPorts = append(c.publishedPorts, int(port.Target))
	}
	if s.HealthCheck != nil && !s.HealthCheck.Disable && len(s.HealthCheck.Test) > 0 {
		c.healthChecks = append(c.healthChecks, parseHealthCommand(s.HealthCheck.Test[1:]))
	}
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind {
			c.mounts[v.Target] = v.Source
		}
	}
	return c, true, nil
}

// checkPublishedOnLoopback checks that every port the service publishes binds 127.0.0.1 on the
// host: the examples run on a workstation, and the LAN has no business with them.
func checkPublishedOnLoopback(p *types.Project, s types.ServiceConfig) []error {
	var errs []error
	for _, port := range s.Ports {
		if ip := net.ParseIP(port.HostIP); ip == nil || !ip.IsLoopback() {
			errs = append(errs, fmt.Errorf("%s: service %s: port %d published on %q: %w: write \"127.0.0.1:%s:%d\"",
				p.Name, s.Name, port.Target, port.HostIP, errPublished, port.Published, port.Target))
		}
	}
	return errs
}

// checkServiceFiles checks that every bind-mounted host path and build context exists.
func checkServiceFiles(p *types.Project, s types.ServiceConfig) []error {
	var errs []error
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && !fileExists(v.Source) {
			errs = append(errs, fmt.Errorf("%s: service %s: volume %s: %w", p.Name, s.Name, v.Source, errMissingFile))
		}
	}
	if s.Build != nil && !fileExists(filepath.Join(s.Build.Context, s.Build.Dockerfile)) {
		errs = append(errs, fmt.Errorf("%s: service %s: build %s: %w", p.Name, s.Name, filepath.Join(s.Build.Context, s.Build.Dockerfile), errMissingFile))
	}
	return errs
}

func envOf(s types.ServiceConfig) map[string]string {
	env := map[string]string{}
	for k, v := range s.Environment {
		if v != nil {
			env[k] = *v
		}
	}
	return env
}

// Each example requires the API key from the shell (and the fleet example the runners' key too):
// loaded without one, compose stops naming the variable, so no example can start with an empty key.
func TestComposeRequiresAnAPIKey(t *testing.T) {
	root := repoRoot(t)
	for _, file := range composeFiles {
		for _, name := range []string{"IGGY_CONNECTORS_HTTP_API_KEY", "IGGY_CONNECTORS_FLEET_RUNNER_API_KEY"} {
			env := types.Mapping{}
			for k, v := range composeEnv {
				if k != name {
					env[k] = v
				}
			}
			_, err := loadComposeIn(t.Context(), filepath.Join(root, file), env)
			uses := name == "IGGY_CONNECTORS_HTTP_API_KEY" || strings.Contains(file, "fleet")
			if uses && (err == nil || !strings.Contains(err.Error(), name)) {
				t.Errorf("%s without %s: error %v, want one naming the variable", file, name, err)
			}
		}
	}
}

func TestComposeFilesAreListed(t *testing.T) {
	root := repoRoot(t)
	var found []string
	err := filepath.WalkDir(filepath.Join(root, "compose"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name := d.Name(); !d.IsDir() && (name == "compose.yaml" || name == "compose.yml" || strings.HasPrefix(name, "docker-compose")) {
			rel, _ := filepath.Rel(root, p)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if !slices.Contains(composeFiles, f) {
			t.Errorf("%s is not checked: add it to composeFiles", f)
		}
	}
}

func TestComposeExamples(t *testing.T) {
	root := repoRoot(t)
	for _, file := range composeFiles {
		t.Run(file, func(t *testing.T) {
			p, err := loadCompose(t.Context(), filepath.Join(root, file))
			if err != nil {
				t.Fatal(err)
			}
			reportErrors(t, checkCompose(t.Context(), root, p))
		})
	}
}

// TestHTTPProviderExample serves the example's config-server folder as nginx would and loads the
// connectors through the real HTTP provider with the example's config.toml: the url_templates,
// the static JSON and the connector configs must all work together.
func TestHTTPProviderExample(t *testing.T) {
	root := repoRoot(t)
	p, err := loadCompose(t.Context(), filepath.Join(root, "compose/http-provider/compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var served string
	for _, v := range p.Services["config-server"].Volumes {
		if v.Target == "/usr/share/nginx/html" {
			served = v.Source
		}
	}
	if served == "" {
		t.Fatal("config-server: no folder mounted at nginx's /usr/share/nginx/html")
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(served)))
	defer srv.Close()

	plugins, err := examplePlugins(root)
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := composeContainer(root, p, p.Services["connectors"], plugins)
	if err != nil || !ok {
		t.Fatalf("connectors service: ok=%v err=%v", ok, err)
	}
	rt, err := effectiveRuntime(c)
	if err != nil {
		t.Fatal(err)
	}
	if rt.Connectors.ConfigType != config.ProviderHTTP {
		t.Fatalf("config_type = %q, want http", rt.Connectors.ConfigType)
	}
	rt.Connectors.BaseURL = srv.URL // the compose network name config-server:80 is not resolvable here
	prov, err := provider.New(rt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := prov.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, conn := range list {
		keys = append(keys, string(conn.Kind)+"/"+conn.Key)
		active, err := prov.Get(t.Context(), conn.Kind, conn.Key)
		if err != nil {
			t.Errorf("active %s %s: %v", conn.Kind, conn.Key, err)
			continue
		}
		versions, err := prov.Versions(t.Context(), conn.Kind, conn.Key)
		if err != nil || len(versions) == 0 {
			t.Errorf("versions of %s %s: %v (%d)", conn.Kind, conn.Key, err, len(versions))
			continue
		}
		byVersion, err := prov.GetVersion(t.Context(), conn.Kind, conn.Key, active.Version)
		if err != nil || byVersion.Name != active.Name || byVersion.Path != conn.Path {
			t.Errorf("version %d of %s %s: %v, or it differs from the active config", active.Version, conn.Kind, conn.Key, err)
		}
	}
	reportErrors(t, checkPlugins(c, list))
	if want := []string{"sink/stdout", "source/random"}; !slices.Equal(keys, want) {
		t.Fatalf("connectors = %v, want %v", keys, want)
	}
}

// TestDeploymentGuideLinks checks that every relative link of compose/README.md names a file or
// folder that exists, so the guide's "start from" column cannot go stale.
func TestDeploymentGuideLinks(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "compose")
	data, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\(([^)#]+)\)`).FindAllStringSubmatch(string(data), -1)
	if len(links) == 0 {
		t.Fatal("compose/README.md has no links to the example files")
	}
	for _, m := range links {
		if strings.Contains(m[1], "://") {
			continue
		}
		if !fileExists(filepath.Join(dir, m[1])) {
			t.Errorf("compose/README.md links %s: %v", m[1], errMissingFile)
		}
	}
}
