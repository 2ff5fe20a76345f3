package images_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The Nomad job and the ECS task definition run one runner each; they are parsed here (HCL and
// JSON) into the same container model as the compose services.

const (
	nomadJob          = "compose/nomad/iggy-connector-runner.nomad.hcl"
	ecsTaskDefinition = "compose/ecs/iggy-connector-runner.task-definition.json"
)

var errOrchestrator = errors.New("deployment file")

// registryImage maps an image reference to the Dockerfile target it is built from: the
// repository's last path element names the binary, the tag "examples" the -with-examples target.
func registryImage(root, origin, image string) (container, error) {
	ref := path.Base(image)
	name, tag, _ := strings.Cut(ref, ":")
	for _, spec := range imageSpecs {
		if name != string(spec.role) {
			continue
		}
		target := spec.targets[len(spec.targets)-1]
		if tag == "examples" {
			target = spec.examples
		}
		plugins, err := examplePlugins(root)
		if err != nil {
			return container{}, err
		}
		c, err := imageContainer(root, spec, target, plugins)
		if err != nil {
			return container{}, err
		}
		c.origin = origin
		return c, nil
	}
	return container{}, fmt.Errorf("%s: image %q: %w: not an iggy-connector-runner or iggy-connectors image", origin, image, errOrchestrator)
}

// hclBlocks returns the blocks of a type in body.
func hclBlocks(body *hclsyntax.Body, typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

// hclString evaluates a literal attribute (no variables: the job uses none) as a string.
func hclString(body *hclsyntax.Body, name string) (string, bool, error) {
	attr, ok := body.Attributes[name]
	if !ok {
		return "", false, nil
	}
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() {
		return "", true, fmt.Errorf("attribute %s: %w", name, diags)
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), true, nil
	case cty.Number:
		return v.AsBigFloat().Text('f', -1), true, nil
	case cty.Bool:
		return strconv.FormatBool(v.True()), true, nil
	}
	return "", true, fmt.Errorf("attribute %s: %s is not a scalar", name, v.Type().FriendlyName())
}

// nomadContainers parses a Nomad job into one container per docker task running our image.
func nomadContainers(root, file string, src []byte) ([]container, error) {
	f, diags := hclparse.NewParser().ParseHCL(src, file)
	if diags.HasErrors() {
		return nil, diags
	}
	body := f.Body.(*hclsyntax.Body)
	var out []container
	for _, job := range hclBlocks(body, "job") {
		for _, group := range hclBlocks(job.Body, "group") {
			origin := fmt.Sprintf("%s: job %s group %s", file, strings.Join(job.Labels, ""), strings.Join(group.Labels, ""))
			// Port labels of the group network, mapped to the container port (`to`).
			ports := map[string]int{}
			for _, network := range hclBlocks(group.Body, "network") {
				for _, port := range hclBlocks(network.Body, "port") {
					to, ok, err := hclString(port.Body, "to")
					if err != nil || !ok {
						return nil, fmt.Errorf("%s: port %v: %w: needs `to` (the container port)", origin, port.Labels, errOrchestrator)
					}
					n, _ := strconv.Atoi(to)
					ports[port.Labels[0]] = n
				}
			}
			var checks []healthProbe
			for _, service := range hclBlocks(group.Body, "service") {
				label, _, _ := hclString(service.Body, "port")
				for _, check := range hclBlocks(service.Body, "check") {
					typ, _, _ := hclString(check.Body, "type")
					p, _, _ := hclString(check.Body, "path")
					port, ok := ports[label]
					if typ != "http" || !ok {
						checks = append(checks, healthProbe{command: fmt.Sprintf("nomad check type=%s port=%s", typ, label)})
						continue
					}
					checks = append(checks, parseHealthCommand([]string{fmt.Sprintf("http://127.0.0.1:%d%s", port, p)}))
				}
			}
			if len(checks) == 0 {
				return nil, fmt.Errorf("%s: %w: no service check", origin, errHealth)
			}
			for _, task := range hclBlocks(group.Body, "task") {
				c, err := nomadTask(root, origin+" task "+strings.Join(task.Labels, ""), task.Body, ports)
				if err != nil {
					return nil, err
				}
				c.healthChecks = checks
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func nomadTask(root, origin string, task *hclsyntax.Body, ports map[string]int) (container, error) {
	driver, _, _ := hclString(task, "driver")
	cfg := hclBlocks(task, "config")
	if driver != "docker" || len(cfg) != 1 {
		return container{}, fmt.Errorf("%s: %w: want driver docker with one config block", origin, errOrchestrator)
	}
	image, _, err := hclString(cfg[0].Body, "image")
	if err != nil {
		return container{}, fmt.Errorf("%s: %w", origin, err)
	}
	c, err := registryImage(root, origin, image)
	if err != nil {
		return container{}, err
	}
	if attr, ok := cfg[0].Body.Attributes["ports"]; ok {
		v, diags := attr.Expr.Value(nil)
		if diags.HasErrors() {
			return container{}, fmt.Errorf("%s: config ports: %w", origin, diags)
		}
		for _, label := range v.AsValueSlice() {
			port, ok := ports[label.AsString()]
			if !ok {
				return container{}, fmt.Errorf("%s: config ports: %q: %w: no such network port", origin, label.AsString(), errPort)
			}
			c.publishedPorts = append(c.publishedPorts, port)
		}
	}
	c.stopGrace = 5 * time.Second // Nomad's default kill_timeout
	if kill, ok, err := hclString(task, "kill_timeout"); err != nil || ok {
		d, perr := time.ParseDuration(kill)
		if err != nil || perr != nil {
			return container{}, fmt.Errorf("%s: kill_timeout %q: %w", origin, kill, errors.Join(err, perr))
		}
		c.stopGrace = d
	}
	for _, env := range hclBlocks(task, "env") {
		for name := range env.Body.Attributes {
			value, _, err := hclString(env.Body, name)
			if err != nil {
				return container{}, fmt.Errorf("%s: env: %w", origin, err)
			}
			c.env[name] = value
		}
	}
	// Templates with env = true add variables; their values come from Nomad at run time.
	for _, tmpl := range hclBlocks(task, "template") {
		isEnv, _, _ := hclString(tmpl.Body, "env")
		data, _, err := hclString(tmpl.Body, "data")
		if err != nil {
			return container{}, fmt.Errorf("%s: template: %w", origin, err)
		}
		if isEnv != "true" {
			continue
		}
		for _, line := range strings.Split(data, "\n") {
			if name, _, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(name, "#") {
				c.env[name] = "rendered-by-nomad"
			}
		}
	}
	return c, nil
}

// ecsTask is the part of an ECS task definition the runner depends on.
type ecsTask struct {
	Family               string `json:"family"`
	ContainerDefinitions []struct {
		Name         string `json:"name"`
		Image        string `json:"image"`
		Essential    *bool  `json:"essential"`
		PortMappings []struct {
			ContainerPort int `json:"containerPort"`
		} `json:"portMappings"`
		Environment []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"environment"`
		Secrets []struct {
			Name      string `json:"name"`
			ValueFrom string `json:"valueFrom"`
		} `json:"secrets"`
		HealthCheck *struct {
			Command []string `json:"command"`
		} `json:"healthCheck"`
		StopTimeout int `json:"stopTimeout"`
	} `json:"containerDefinitions"`
}

func ecsContainers(root, file string, data []byte) ([]container, error) {
	var task ecsTask
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&task); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []container
	for _, def := range task.ContainerDefinitions {
		origin := fmt.Sprintf("%s: family %s container %s", file, task.Family, def.Name)
		c, err := registryImage(root, origin, def.Image)
		if err != nil {
			return nil, err
		}
		for _, pm := range def.PortMappings {
			c.publishedPorts = append(c.publishedPorts, pm.ContainerPort)
		}
		for _, e := range def.Environment {
			c.env[e.Name] = e.Value
		}
		for _, s := range def.Secrets {
			c.env[s.Name] = "from-" + s.ValueFrom
		}
		if def.HealthCheck == nil || len(def.HealthCheck.Command) < 2 {
			return nil, fmt.Errorf("%s: %w: no healthCheck command", origin, errHealth)
		}
		c.healthChecks = []healthProbe{parseHealthCommand(def.HealthCheck.Command[1:])}
		c.stopGrace = 30 * time.Second // ECS's default stopTimeout
		if def.StopTimeout > 0 {
			c.stopGrace = time.Duration(def.StopTimeout) * time.Second
		}
		out = append(out, c)
	}
	return out, nil
}

func TestOrchestratorFiles(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range []struct {
		file  string
		parse func(root, file string, data []byte) ([]container, error)
	}{
		{nomadJob, nomadContainers},
		{ecsTaskDefinition, ecsContainers},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			containers, err := tc.parse(root, tc.file, data)
			if err != nil {
				t.Fatal(err)
			}
			if len(containers) != 1 || containers[0].role != roleRunner {
				t.Fatalf("want exactly one runner container, got %d", len(containers))
			}
			c := containers[0]
			connectors, errs := checkContainer(t.Context(), c)
			reportErrors(t, errs)
			if len(connectors) != 1 || len(c.healthChecks) == 0 || len(c.publishedPorts) == 0 {
				t.Fatalf("want one connector, a health check and a port; got %d connectors, %d checks, ports %v", len(connectors), len(c.healthChecks), c.publishedPorts)
			}
		})
	}
}

// TestOrchestratorCheckerRejects breaks the Nomad job and the ECS task definition one way each.
func TestOrchestratorCheckerRejects(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range []struct {
		name, file, old, new string
		parse                func(root, file string, data []byte) ([]container, error)
		want                 error
	}{
		{"nomad check path", nomadJob, `path     = "/health"`, `path     = "/ready"`, nomadContainers, errHealth},
		{"nomad port", nomadJob, "to = 8081", "to = 9000", nomadContainers, errPort},
		{"nomad unknown variable", nomadJob, "IGGY_CONNECTORS_IGGY_USERNAME ", "IGGY_CONNECTORS_IGGY_USER     ", nomadContainers, errUnknownVariable},
		{"nomad template variable", nomadJob, "IGGY_CONNECTORS_IGGY_PASSWORD={{", "IGGY_PASSWORD={{", nomadContainers, errUnknownVariable},
		{"ecs port", ecsTaskDefinition, `"containerPort": 8081`, `"containerPort": 80`, ecsContainers, errPort},
		{"ecs health check", ecsTaskDefinition, "http://127.0.0.1:8081/health", "http://127.0.0.1:8081/", ecsContainers, errHealth},
		{"ecs secret name", ecsTaskDefinition, `{"name": "IGGY_CONNECTORS_IGGY_PASSWORD", "valueFrom"`, `{"name": "IGGY_PASSWORD", "valueFrom"`, ecsContainers, errUnknownVariable},
		{"nomad kill timeout", nomadJob, `kill_timeout = "20s"`, `kill_timeout = "10s"`, nomadContainers, errStopGrace},
		{"ecs stop timeout", ecsTaskDefinition, `"stopTimeout": 20`, `"stopTimeout": 8`, ecsContainers, errStopGrace},
		{"nomad without the API key", nomadJob, "IGGY_CONNECTORS_HTTP_API_KEY={{", "IGGY_CONNECTORS_HTTP_APIKEY={{", nomadContainers, errOpenAPI},
		{"ecs without the API key", ecsTaskDefinition, `{"name": "IGGY_CONNECTORS_HTTP_API_KEY", "valueFrom"`, `{"name": "IGGY_CONNECTORS_HTTP_APIKEY", "valueFrom"`, ecsContainers, errOpenAPI},
		{"ecs plugin", ecsTaskDefinition, `libiggy_connector_stdout_sink`, `libiggy_connector_s3_sink`, ecsContainers, errPlugin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, []byte(tc.old)) {
				t.Fatalf("%s no longer contains %q; update the test", tc.file, tc.old)
			}
			containers, err := tc.parse(root, tc.file, bytes.Replace(data, []byte(tc.old), []byte(tc.new), 1))
			var errs []error
			if err != nil {
				errs = append(errs, err)
			}
			for _, c := range containers {
				_, cerrs := checkContainer(t.Context(), c)
				errs = append(errs, cerrs...)
			}
			if !slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, tc.want) }) {
				t.Fatalf("want an error matching %v, got %v", tc.want, errs)
			}
		})
	}
}
