package images_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// kubeSources are every set of manifests: the two kustomizations and the chart with each values file.
var kubeSources = func() [][2]string {
	out := [][2]string{{"kustomize", kustomizeRunners}, {"kustomize", kustomizeSupervisor}, {"kustomize", kustomizeFleet}}
	for _, f := range helmValueFiles {
		out = append(out, [2]string{"helm", f})
	}
	return out
}()

func sourceName(s [2]string) string { return s[0] + " " + cmp.Or(s[1], "default values") }

func loadKubeContainers(t *testing.T, root string, src [2]string) (*objects, []kubeContainer) {
	t.Helper()
	o, err := loadKube(root, src[0], src[1])
	if err != nil {
		t.Fatal(err)
	}
	kcs, errs := kubeContainers(root, t.TempDir(), o)
	reportErrors(t, errs)
	if len(kcs) == 0 {
		t.Fatalf("%s: no runner or supervisor container", o.origin)
	}
	return o, kcs
}

// TestKubernetesManifests decodes every object of the kustomizations and of the chart (default
// values and the samples) strictly, and checks every container as the compose files are checked.
func TestKubernetesManifests(t *testing.T) {
	root := repoRoot(t)
	// What each set renders: Deployments (one per connector, or the supervisor's), connectors
	// they run in all, Secrets, claims, PodDisruptionBudgets and ServiceMonitors.
	type counts struct{ deployments, connectors, secrets, claims, budgets, monitors int }
	want := map[string]counts{
		kustomizeRunners:    {2, 2, 1, 0, 0, 0},
		kustomizeSupervisor: {1, 2, 1, 1, 0, 0},
		kustomizeFleet:      {3, 2, 1, 0, 0, 0}, // the runners of kustomizeRunners and the fleet view
		helmValueFiles[0]:   {2, 2, 1, 0, 0, 0},
		helmValueFiles[1]:   {1, 1, 1, 0, 1, 1},
		helmValueFiles[2]:   {2, 2, 0, 1, 0, 0},
		helmValueFiles[3]:   {3, 2, 1, 0, 0, 0}, // the two runners and the fleet view over them
		helmValueFiles[4]:   {2, 2, 1, 0, 0, 1}, // the default connectors, the sink autoscaled (keda_test.go)
	}
	for _, src := range kubeSources {
		t.Run(sourceName(src), func(t *testing.T) {
			o, kcs := loadKubeContainers(t, root, src)
			got := counts{deployments: len(o.deployments), secrets: len(o.secrets), claims: len(o.claims), budgets: len(o.budgets), monitors: len(o.monitors)}
			for _, kc := range kcs {
				connectors, errs := checkKubeContainer(t.Context(), kc)
				got.connectors += len(connectors)
				reportErrors(t, errs)
				reportErrors(t, checkAnnotations(kc))
			}
			reportErrors(t, checkShape(o, kcs))
			if got != want[src[1]] {
				t.Errorf("rendered %+v, want %+v", got, want[src[1]])
			}
		})
	}
}

// checkAnnotations checks that the Prometheus annotations name the container's metrics port.
func checkAnnotations(kc kubeContainer) []error {
	a := kc.deployment.Spec.Template.Annotations
	if a["prometheus.io/scrape"] != "true" {
		return nil
	}
	if !slices.Contains(kc.publishedPorts, atoi(a["prometheus.io/port"])) || a["prometheus.io/path"] != "/metrics" {
		return []error{fmt.Errorf("%s: prometheus.io annotations port %q path %q: %w: want a container port and /metrics", kc.origin, a["prometheus.io/port"], a["prometheus.io/path"], errPort)}
	}
	return nil
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// checkShape checks what each deployment shape promises: sinks scale in their consumer group, a
// source runs several replicas only on the Iggy state backend and one with a claim on file state,
// every Deployment runs under a ServiceAccount the manifests create (or the chart is told exists),
// a PodDisruptionBudget or ServiceMonitor selects pods that exist, and a fleet view has its own
// key and finds its runners safely (fleet_test.go).
func checkShape(o *objects, kcs []kubeContainer) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %w: %s", o.origin, errShape, fmt.Sprintf(format, args...)))
	}
	for _, kc := range kcs {
		d := kc.deployment
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		sa := d.Spec.Template.Spec.ServiceAccountName
		if sa != "" && !slices.ContainsFunc(o.accounts, func(a corev1.ServiceAccount) bool { return a.Name == sa }) && !slices.Contains(o.externalAccounts, sa) {
			bad("Deployment %s: serviceAccountName %s is not created here", d.Name, sa)
		}
		if kc.role != roleRunner {
			continue
		}
		// Sink replicas always share a consumer group: the file's, or the default one of the key.
		s, err := loadRunnerSettings(kc.container)
		if err != nil || s.Kind != config.KindSource {
			continue // a settings error is reported by checkContainer
		}
		claimed := slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.PersistentVolumeClaim != nil && v.Name == "state" })
		switch backend := kc.env["IGGY_CONNECTORS_STATE_BACKEND"]; {
		case backend == "iggy" && claimed:
			bad("Deployment %s: the iggy state backend needs no state volume", d.Name)
		case backend != "iggy" && (replicas != 1 || !claimed):
			bad("Deployment %s: file state needs one replica and a state claim (replicas %d, claim %v)", d.Name, replicas, claimed)
		}
	}
	for _, b := range o.budgets {
		if !slices.ContainsFunc(kcs, func(kc kubeContainer) bool {
			return labelsMatch(b.Spec.Selector.MatchLabels, kc.deployment.Spec.Template.Labels)
		}) {
			bad("PodDisruptionBudget %s selects no pods", b.Name)
		}
	}
	for _, m := range o.monitors {
		ok := slices.ContainsFunc(o.services, func(s corev1.Service) bool {
			return labelsMatch(m.Spec.Selector.MatchLabels, s.Labels) &&
				slices.ContainsFunc(kcs, func(kc kubeContainer) bool { return labelsMatch(s.Spec.Selector, kc.deployment.Spec.Template.Labels) }) &&
				slices.ContainsFunc(m.Spec.Endpoints, func(e monitorEndpoint) bool {
					return e.Path == "/metrics" && slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == e.Port })
				})
		})
		if !ok {
			bad("ServiceMonitor %s: no Service it selects serves /metrics of runner pods", m.Name)
		}
		errs = append(errs, checkMonitorAuth(o, m, kcs)...)
	}
	cs := make([]container, len(kcs))
	for i, kc := range kcs {
		cs[i] = kc.container
	}
	errs = append(errs, checkFleetKeys(cs)...)
	errs = append(errs, checkFleetDiscovery(o, kcs)...)
	return append(errs, checkIsolation(o, kcs)...)
}

// checkMonitorAuth checks that a ServiceMonitor sends the runners' API key as a Bearer token: the
// Secret key their IGGY_CONNECTORS_HTTP_API_KEY comes from.
func checkMonitorAuth(o *objects, m serviceMonitor, kcs []kubeContainer) []error {
	var keyRefs []corev1.SecretKeySelector
	for _, kc := range kcs {
		for _, e := range kc.spec.Env {
			if e.Name == "IGGY_CONNECTORS_HTTP_API_KEY" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				keyRefs = append(keyRefs, *e.ValueFrom.SecretKeyRef)
			}
		}
	}
	var errs []error
	for _, e := range m.Spec.Endpoints {
		a := e.Authorization
		if a == nil || a.Type != "Bearer" || a.Credentials == nil || !slices.ContainsFunc(keyRefs, func(r corev1.SecretKeySelector) bool {
			return r.Name == a.Credentials.Name && r.Key == a.Credentials.Key
		}) {
			errs = append(errs, fmt.Errorf("%s: ServiceMonitor %s endpoint %s: %w: it must send the runners' API key (authorization Bearer, their Secret key)", o.origin, m.Name, e.Port, errOpenAPI))
		}
	}
	return errs
}

// checkIsolation checks that every runner pod is selected by a NetworkPolicy whose every ingress
// rule names the peers it admits: only they (the supervisor, Prometheus) reach the endpoint.
func checkIsolation(o *objects, kcs []kubeContainer) []error {
	var errs []error
	for _, kc := range kcs {
		if kc.role != roleRunner {
			continue
		}
		labels := kc.deployment.Spec.Template.Labels
		isolated := slices.ContainsFunc(o.policies, func(p networkingv1.NetworkPolicy) bool {
			restricting := len(p.Spec.Ingress) > 0 && !slices.ContainsFunc(p.Spec.Ingress, func(r networkingv1.NetworkPolicyIngressRule) bool { return len(r.From) == 0 })
			return labelsMatch(p.Spec.PodSelector.MatchLabels, labels) && slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) && restricting
		})
		if !isolated {
			errs = append(errs, fmt.Errorf("%s: %w: no NetworkPolicy admits only named peers to its pods", kc.origin, errIsolation))
		}
	}
	return errs
}

func labelsMatch(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// probeRequest GETs a probe path of a live program.
func probeRequest(addr, p string) (int, error) {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + p)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// checkProbePaths asks the live program of each container's role for every probe path: liveness
// must answer 200, readiness must be a route of the program (200 when ready, 503 when not).
func checkProbePaths(live map[role]string, kcs []kubeContainer) []error {
	var errs []error
	for _, kc := range kcs {
		for _, p := range kc.probes {
			code, err := probeRequest(live[kc.role], p.path)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s: %s probe %s: %w", kc.origin, p.kind, p.path, err))
			case p.kind == "liveness" && code != http.StatusOK:
				errs = append(errs, fmt.Errorf("%s: liveness probe %s answers %d: %w: want 200", kc.origin, p.path, code, errProbe))
			case code != http.StatusOK && code != http.StatusServiceUnavailable:
				errs = append(errs, fmt.Errorf("%s: %s probe %s answers %d: %w: not a route of %s", kc.origin, p.kind, p.path, code, errProbe, kc.role))
			}
		}
	}
	return errs
}

// TestKubernetesRun runs the sink Deployment's runner and the supervisor Deployment of the
// kustomizations for real, with their environment and mounted files (container-only values
// rewritten, as TestSupervisorExampleRuns does), and waits for records to flow; then every probe
// of every set of manifests is asked of them, and broken probes must fail.
func TestKubernetesRun(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	plugins := testkit.BuildPlugins(t)
	broker := testkit.StartBroker(t, testkit.WithStream("demo_stream", map[string]uint32{"demo_topic": 3}))

	_, runners := loadKubeContainers(t, root, kubeSources[0])
	_, supervisors := loadKubeContainers(t, root, kubeSources[1])
	live := map[role]string{}

	sink := runners[slices.IndexFunc(runners, func(kc kubeContainer) bool { return kc.deployment.Name == "sink-stdout" })]
	proc := startRunnerContainer(t, sink.container, broker.Addr(), plugins)
	live[roleRunner] = boundAddress(t, proc)

	sp := startSupervisorContainer(t, supervisors[0].container, broker.Addr(), plugins)
	live[roleSupervisor] = sp.Addr

	// The supervisor's source feeds the topic; the standalone sink consumes it too (its own group
	// is the one the supervisor's sink uses, so between them they take every record once).
	cli := testkit.LoggedInClient(t, broker)
	streamID, _ := iggcon.NewIdentifier("demo_stream")
	topicID, _ := iggcon.NewIdentifier("demo_topic")
	for p := range uint32(3) {
		m, _ := iggcon.NewIggyMessage([]byte(`{"n":1}`))
		if err := cli.SendMessages(streamID, topicID, iggcon.PartitionId(p), []iggcon.IggyMessage{m}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "http://"+sp.Addr+"/stats", sp.Exited, func(s metrics.RuntimeStats) bool {
		running, _ := runningConnectors(s)
		return running == 2
	})
	waitFor(t, "http://"+live[roleRunner]+"/stats", proc.Exited, func(s metrics.ConnectorStats) bool {
		return s.Status == "running" && s.MessagesConsumed != nil && *s.MessagesConsumed > 0
	})

	for _, src := range kubeSources {
		t.Run("probes "+sourceName(src), func(t *testing.T) {
			_, kcs := loadKubeContainers(t, root, src)
			reportErrors(t, checkProbePaths(live, kcs))
		})
	}
	for _, tc := range []struct {
		name, kind, path string
		role             role
	}{
		{"liveness on a path the runner does not serve", "liveness", "/healthz", roleRunner},
		{"readiness on a path the runner does not serve", "readiness", "/readyz", roleRunner},
		{"liveness on a path the supervisor does not serve", "liveness", "/healthz", roleSupervisor},
		{"readiness on a path the supervisor does not serve", "readiness", "/ready-not", roleSupervisor},
	} {
		t.Run("rejects "+tc.name, func(t *testing.T) {
			kc := kubeContainer{container: container{origin: tc.name, role: tc.role}, probes: []kubeProbe{{kind: tc.kind, path: tc.path, port: 8081}}}
			errs := checkProbePaths(live, []kubeContainer{kc})
			if !slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, errProbe) }) {
				t.Fatalf("want a probe error, got %v", errs)
			}
		})
	}
}

// TestKubernetesCheckerRejects breaks the kustomize build of the runners and the chart one way
// each: every break must be reported.
func TestKubernetesCheckerRejects(t *testing.T) {
	root := repoRoot(t)
	docs, err := kustomizeBuild(filepath.Join(root, kustomizeRunners))
	if err != nil {
		t.Fatal(err)
	}
	built := bytes.Join(docs, []byte("\n---\n"))
	for _, tc := range []struct {
		name, old, new string
		want           error
	}{
		{"valid", "", "", nil},
		{"unknown variable", "name: IGGY_CONNECTORS_LOGGING_FORMAT", "name: IGGY_CONNECTORS_LOG_FORMAT", errUnknownVariable},
		{"unknown field", "readinessProbe:", "readynessProbe:", errUnknownField},
		{"container port differs", "containerPort: 8081", "containerPort: 8080", errPort},
		{"probe on a port name that is not there", "port: http", "port: metrics", errPort},
		{"probe on another port", "port: http", "port: 9000", errPort},
		{"missing ConfigMap key", "key: stdout_sink.toml", "key: stdout.toml", errMissingRef},
		{"missing Secret key", "key: iggy-password", "key: password", errMissingRef},
		{"invalid connector file", `schema = "json"`, `schema = "xml"`, config.ErrInvalidConnector},
		{"root allowed", "runAsNonRoot: true", "runAsNonRoot: false", errSecurity},
		{"capabilities kept", "- ALL", "- NET_RAW", errSecurity},
		{"grace shorter than the drain", "terminationGracePeriodSeconds: 30", "terminationGracePeriodSeconds: 10", errStopGrace},
		{"annotation names another port", `prometheus.io/port: "8081"`, `prometheus.io/port: "9090"`, errPort},
		{"plugin not in the image", "libiggy_connector_stdout_sink", "libiggy_connector_s3_sink", errPlugin},
		{"two source replicas on file state", "value: iggy\n", "value: file\n", errShape},
		{"service account not created", "serviceAccountName: iggy-connectors", "serviceAccountName: pipelines", errShape},
		{"network policy for egress only", "  - Ingress", "  - Egress", errIsolation},
		{"network policy with a rule open to every pod", "  ingress:\n", "  ingress:\n  - ports:\n    - port: http\n", errIsolation},
		{"API key from the shipped Secret", "name: iggy-connectors-api-key", "name: iggy-connectors-credentials", errMissingRef},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(built, []byte(tc.old)) {
				t.Fatalf("the build no longer contains %q; update the test", tc.old)
			}
			o, err := decodeText(kustomizeRunners, bytes.Replace(built, []byte(tc.old), []byte(tc.new), 1))
			var errs []error
			if err != nil {
				errs = append(errs, err)
			} else {
				o.externalSecrets = append(o.externalSecrets, kustomizeAPIKeySecret)
				kcs, kerrs := kubeContainers(root, t.TempDir(), o)
				errs = append(errs, kerrs...)
				for _, kc := range kcs {
					_, cerrs := checkKubeContainer(t.Context(), kc)
					errs = append(errs, cerrs...)
					errs = append(errs, checkAnnotations(kc)...)
				}
				errs = append(errs, checkShape(o, kcs)...)
			}
			switch {
			case tc.old == "":
				reportErrors(t, errs)
			case tc.want == nil && len(errs) == 0:
				t.Fatal("want an error, got none")
			case tc.want != nil && !slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, tc.want) }):
				t.Fatalf("want an error matching %v, got %v", tc.want, errs)
			}
		})
	}
}

// TestHelmChartRejects renders the chart with values an operator could get wrong: the chart or
// the checks must refuse each.
func TestHelmChartRejects(t *testing.T) {
	root := repoRoot(t)
	sink := map[string]any{"type": "sink", "key": "s", "config": "type = \"sink\"\nkey = \"s\"\n"}
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   error  // matched with errors.Is on the checks' errors, when set
		render string // else a render error containing this
	}{
		{"unknown extra variable", map[string]any{"extraEnv": []any{map[string]any{"name": "IGGY_CONNECTOR_LOGLEVEL", "value": "debug"}}}, errUnknownVariable, ""},
		{"config and fields", map[string]any{"connectors": []any{merged(sink, map[string]any{"fields": map[string]any{"enabled": true}})}}, nil, "set config or fields, not both"},
		{"neither config nor fields", map[string]any{"connectors": []any{map[string]any{"type": "sink", "key": "s"}}}, nil, "needs config (TOML) or fields"},
		{"unknown type", map[string]any{"connectors": []any{merged(sink, map[string]any{"type": "pipe"})}}, nil, "type must be sink or source"},
		{"file state with two source replicas", map[string]any{"state": map[string]any{"backend": "file"}}, nil, "need state.backend iggy"},
		{"unknown state backend", map[string]any{"state": map[string]any{"backend": "etcd"}}, nil, "state.backend must be iggy or file"},
		{"port the runner does not bind", map[string]any{"httpPort": 8081, "extraEnv": []any{map[string]any{"name": "IGGY_CONNECTORS_HTTP_ADDRESS", "value": "0.0.0.0:9000"}}}, errPort, ""},
		{"no network policy", map[string]any{"networkPolicy": map[string]any{"enabled": false}}, errIsolation, ""},
		{"network policy open to all", map[string]any{"networkPolicy": map[string]any{"enabled": true, "from": nil}}, nil, "networkPolicy.from"},
		{"key check opted out", map[string]any{"extraEnv": []any{map[string]any{"name": "IGGY_CONNECTORS_HTTP_ALLOW_UNAUTHENTICATED", "value": "true"}}}, errOpenAPI, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := helmRender(filepath.Join(root, helmChart), "", tc.values)
			if tc.render != "" {
				if err == nil || !strings.Contains(err.Error(), tc.render) {
					t.Fatalf("want a render error containing %q, got %v", tc.render, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			o, err := decodeObjects(tc.name, docs)
			if err != nil {
				t.Fatal(err)
			}
			kcs, errs := kubeContainers(root, t.TempDir(), o)
			for _, kc := range kcs {
				_, cerrs := checkKubeContainer(t.Context(), kc)
				errs = append(errs, cerrs...)
			}
			errs = append(errs, checkShape(o, kcs)...)
			if !slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, tc.want) }) {
				t.Fatalf("want an error matching %v, got %v", tc.want, errs)
			}
		})
	}
}

func merged(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
