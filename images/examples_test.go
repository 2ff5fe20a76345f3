package images_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The tests here run two compose examples for real, without Docker: the real runner and
// supervisor binaries get the services' environment, the dev broker stands in for apache/iggy
// with the streams and topics the example's init step creates, and the example C plugins stand in
// for the image's /opt/iggy/connectors. Only the container-specific values are rewritten: the
// Iggy and HTTP addresses (an ephemeral loopback port), the state directory and the plugin directory.

// startExampleBroker starts the dev broker with the streams and topics the project's init
// service creates (its `iggy topic create <stream> <topic> <partitions> ...` lines).
func startExampleBroker(t *testing.T, p *types.Project) string {
	t.Helper()
	var opts []testkit.BrokerOption
	topics := map[string]map[string]uint32{}
	for _, s := range p.Services {
		text := strings.Join(append(append([]string{}, s.Entrypoint...), s.Command...), " ")
		for _, m := range regexp.MustCompile(`topic create (\S+) (\S+) (\d+)`).FindAllStringSubmatch(text, -1) {
			var partitions uint32
			fmt.Sscan(m[3], &partitions)
			if topics[m[1]] == nil {
				topics[m[1]] = map[string]uint32{}
			}
			topics[m[1]][m[2]] = partitions
		}
	}
	if len(topics) == 0 {
		t.Fatalf("%s: no init step creating topics", p.Name)
	}
	for stream, ts := range topics {
		opts = append(opts, testkit.WithStream(stream, ts))
	}
	return testkit.StartBroker(t, opts...).Addr()
}

// boundAddress waits for the runner's "http endpoint listening" log line and returns the address
// it bound (the tests bind port 0, so parallel tests never collide).
func boundAddress(t *testing.T, proc *testkit.RunnerProc) string {
	t.Helper()
	// Text or JSON logs (IGGY_CONNECTORS_LOGGING_FORMAT): bound=ADDR or "bound":"ADDR".
	bound := regexp.MustCompile(`http endpoint listening.*\bbound"?[=:]"?([^\s"]+)`)
	var addr string
	proc.WaitUntil(t, 90*time.Second, "the runner's bound endpoint in its log", func() bool {
		if m := bound.FindStringSubmatch(proc.Logs()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return addr
}

// probe runs the image's HEALTHCHECK script against address until it passes.
func probe(t *testing.T, address string, exited func() bool) {
	t.Helper()
	script := filepath.Join(repoRoot(t), "images", "healthcheck.sh")
	var out []byte
	var err error
	if !testkit.Within(90*time.Second, func() bool {
		cmd := exec.Command("sh", script)
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "IGGY_CONNECTORS_HTTP_ADDRESS=" + address}
		out, err = cmd.CombinedOutput()
		return err == nil || exited()
	}) || err != nil {
		t.Fatalf("health probe of %s never passed: %v\n%s", address, err, out)
	}
}

// exampleAPIKey stands for the API key an orchestrator injects from its secret store: the
// programs started from a deployment file get it, and waitFor sends it.
const exampleAPIKey = "example-api-key"

// withExampleKey sets the API key of a deployment's environment that has one to exampleAPIKey.
func withExampleKey(env map[string]string) {
	if _, ok := env["IGGY_CONNECTORS_HTTP_API_KEY"]; ok {
		env["IGGY_CONNECTORS_HTTP_API_KEY"] = exampleAPIKey
	}
}

// waitFor reads JSON from url (sending exampleAPIKey) until ok accepts it.
func waitFor[T any](t *testing.T, url string, exited func() bool, ok func(T) bool) T {
	t.Helper()
	var (
		v   T
		err error
		met bool
	)
	testkit.Within(90*time.Second, func() bool {
		v = *new(T)
		var body []byte
		_, body, err = testkit.DoHTTP(http.MethodGet, url, http.Header{"Api-Key": {exampleAPIKey}}, "")
		met = err == nil && json.Unmarshal(body, &v) == nil && ok(v)
		return met || exited()
	})
	if !met {
		t.Fatalf("%s: condition not met (last: %+v, err %v)", url, v, err)
	}
	return v
}

// runningConnectors counts the connectors a supervisor's /stats shows running and tells whether
// its stdout sink has consumed records.
func runningConnectors(s metrics.RuntimeStats) (running int, stdoutConsumed bool) {
	for _, c := range s.Connectors {
		if c.Status == "running" {
			running++
		}
		stdoutConsumed = stdoutConsumed || (c.Key == "stdout" && c.MessagesConsumed != nil && *c.MessagesConsumed > 0)
	}
	return running, stdoutConsumed
}

// TestOrchestratorRunnersRun runs the runner of the Nomad job and of the ECS task definition with
// their environment, feeds its topic through the official SDK and waits for the sink to consume.
func TestOrchestratorRunnersRun(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	plugins := testkit.BuildPlugins(t)
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
			if err != nil || len(containers) != 1 {
				t.Fatalf("want one container: %d, %v", len(containers), err)
			}
			c := containers[0]
			connectors, errs := checkContainer(t.Context(), c)
			reportErrors(t, errs)
			topics := neededTopics(connectors)
			if len(topics) != 1 {
				t.Fatalf("want a sink of one topic, got %v", topics)
			}
			stream, topic, _ := strings.Cut(topics[0], "/")
			broker := testkit.StartBroker(t, testkit.WithStream(stream, map[string]uint32{topic: 1}))

			c.env["IGGY_CONNECTORS_IGGY_PASSWORD"] = "iggy" // the secret the orchestrator injects
			proc := startRunnerContainer(t, c, broker.Addr(), plugins)
			addr := boundAddress(t, proc)
			probe(t, addr, proc.Exited)

			cli := testkit.LoggedInClient(t, broker)
			streamID, _ := iggcon.NewIdentifier(stream)
			topicID, _ := iggcon.NewIdentifier(topic)
			var msgs []iggcon.IggyMessage
			for i := range 3 {
				m, err := iggcon.NewIggyMessage([]byte(fmt.Sprintf(`{"n":%d}`, i)))
				if err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, m)
			}
			if err := cli.SendMessages(streamID, topicID, iggcon.PartitionId(0), msgs); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "http://"+addr+"/stats", proc.Exited, func(s metrics.ConnectorStats) bool {
				return s.Status == "running" && s.MessagesConsumed != nil && *s.MessagesConsumed >= 3
			})
		})
	}
}

func TestRunnersExampleRuns(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	p, err := loadCompose(t.Context(), filepath.Join(root, "compose/runners/compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	broker := startExampleBroker(t, p)
	plugins := testkit.BuildPlugins(t)
	imagePlugins, err := examplePlugins(root)
	if err != nil {
		t.Fatal(err)
	}

	sink := ""
	for _, name := range []string{"random-source", "stdout-sink"} {
		c, ok, err := composeContainer(root, p, p.Services[name], imagePlugins)
		if err != nil || !ok {
			t.Fatalf("service %s: ok=%v err=%v", name, ok, err)
		}
		proc := startRunnerContainer(t, c, broker, plugins)
		addr := boundAddress(t, proc)
		probe(t, addr, proc.Exited)
		if name == "stdout-sink" {
			sink = addr
			// The sink's output proves the source's messages went through the broker.
			waitFor(t, "http://"+addr+"/stats", proc.Exited, func(s metrics.ConnectorStats) bool {
				return s.Status == "running" && s.MessagesConsumed != nil && *s.MessagesConsumed > 0
			})
		}
	}
	if sink == "" {
		t.Fatal("no stdout-sink service")
	}
}

func TestSupervisorExampleRuns(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	p, err := loadCompose(t.Context(), filepath.Join(root, "compose/supervisor/compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	broker := startExampleBroker(t, p)
	plugins := testkit.BuildPlugins(t)
	imagePlugins, err := examplePlugins(root)
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := composeContainer(root, p, p.Services["connectors"], imagePlugins)
	if err != nil || !ok {
		t.Fatalf("service connectors: ok=%v err=%v", ok, err)
	}
	proc := startSupervisorContainer(t, c, broker, plugins)
	addr := proc.Addr
	probe(t, addr, proc.Exited)

	waitFor(t, "http://"+addr+"/stats", proc.Exited, func(s metrics.RuntimeStats) bool {
		running, consumed := runningConnectors(s)
		return running == 2 && consumed
	})
}

// startRunnerContainer runs a runner container's program for real: its environment, the image's
// plugin directory in its connector config replaced by plugins, with the container-only values
// rewritten (the Iggy address, a loopback HTTP address, a temporary state directory).
func startRunnerContainer(t *testing.T, c container, broker, plugins string) *testkit.RunnerProc {
	t.Helper()
	env := maps.Clone(c.env)
	withExampleKey(env)
	env["IGGY_CONNECTORS_IGGY_ADDRESS"] = broker
	env["IGGY_CONNECTORS_HTTP_ADDRESS"] = "127.0.0.1:0"
	env["IGGY_CONNECTORS_STATE_PATH"] = t.TempDir()
	env["IGGY_CONNECTOR_CONFIG"] = strings.ReplaceAll(env["IGGY_CONNECTOR_CONFIG"], pluginDir, plugins)
	return testkit.StartRunner(t, environList(env))
}

// startSupervisorContainer runs a supervisor container's program for real: its environment, its
// mounted config and connector files (the image's plugin directory replaced by plugins), with the
// container-only values rewritten (the Iggy address, a loopback HTTP address, a temporary state
// directory, testkit's runner binary).
func startSupervisorContainer(t *testing.T, c container, broker, plugins string) *testkit.SupervisorProc {
	t.Helper()
	rt, err := effectiveRuntime(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := os.ReadDir(c.mounts[rt.Connectors.ConfigDir])
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(c.mounts[rt.Connectors.ConfigDir], f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name()), []byte(strings.ReplaceAll(string(data), pluginDir, plugins)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := maps.Clone(c.env)
	withExampleKey(env)
	env[config.EnvConfigPath] = c.mounts[c.env[config.EnvConfigPath]]
	env["IGGY_CONNECTORS_CONNECTORS_CONFIG_DIR"] = dir
	env["IGGY_CONNECTORS_IGGY_ADDRESS"] = broker
	env["IGGY_CONNECTORS_HTTP_ADDRESS"] = "127.0.0.1:0"
	env["IGGY_CONNECTORS_STATE_PATH"] = t.TempDir()
	delete(env, "IGGY_SUPERVISOR_RUNNER_PATH") // testkit passes the runner it built
	return testkit.StartSupervisor(t, t.TempDir(), environList(env), 90*time.Second)
}
