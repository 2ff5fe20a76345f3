package images_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	corev1 "k8s.io/api/core/v1"
)

// The fleet examples (compose/fleet, compose/kubernetes-fleet, the chart's fleet mode) hand the
// runners a key of their own, never the fleet view's API key, and on Kubernetes discover runners
// only through a Service that selects them by a label the fleet's own manifests set and that does
// not publish pods before they are ready (docs/security.md, "Fleet view").

var (
	errFleetKey       = errors.New("fleet runner key")
	errFleetDiscovery = errors.New("fleet discovery")
)

// fleetLabel is the label by which the Kubernetes examples' discovery Services select runners:
// its value names the fleet view's Deployment, and only the manifests that deploy that fleet view
// put it on runner pods.
const fleetLabel = "iggy-connectors/fleet"

// kustomizeFleetAPIKeySecret is the Secret with the fleet view's own API key that
// compose/kubernetes-fleet requires the operator to create.
const kustomizeFleetAPIKeySecret = "iggy-connectors-fleet-api-key"

// checkFleetKeys checks every attach-mode container among cs: its fleet.runner_api_key is set and
// differs from its http.api_key, and every runner among cs expects that runner key.
func checkFleetKeys(cs []container) []error {
	var errs []error
	for _, c := range cs {
		if c.role != roleSupervisor {
			continue
		}
		rt, err := effectiveRuntime(c)
		if err != nil || !rt.Fleet.Enabled {
			continue // a runtime error is reported by checkContainer
		}
		key := rt.Fleet.RunnerAPIKey
		switch {
		case key == "":
			errs = append(errs, fmt.Errorf("%s: %w: fleet.runner_api_key is not set", c.origin, errFleetKey))
			continue
		case key == rt.HTTP.APIKey:
			errs = append(errs, fmt.Errorf("%s: %w: fleet.runner_api_key is the fleet view's own http.api_key; give the runners a key of their own", c.origin, errFleetKey))
		}
		for _, r := range cs {
			if r.role != roleRunner {
				continue
			}
			if rr, err := effectiveRuntime(r); err == nil && rr.HTTP.APIKey != key {
				errs = append(errs, fmt.Errorf("%s: %w: it expects another key than %s's fleet.runner_api_key", r.origin, errFleetKey, c.origin))
			}
		}
	}
	return errs
}

// checkFleetDiscovery checks, for every attach-mode container of a Kubernetes set, the Services
// its SRV names resolve to: headless, publishNotReadyAddresses false, selecting by fleetLabel with
// the fleet Deployment's name, and selecting runner pods (and no others).
func checkFleetDiscovery(o *objects, kcs []kubeContainer) []error {
	var errs []error
	bad := func(kc kubeContainer, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %w: %s", kc.origin, errFleetDiscovery, fmt.Sprintf(format, args...)))
	}
	for _, kc := range kcs {
		if kc.role != roleSupervisor || kc.env["IGGY_CONNECTORS_FLEET_ENABLED"] != "true" {
			continue
		}
		for _, name := range strings.Split(kc.env["IGGY_CONNECTORS_FLEET_DNS"], ",") {
			labels := strings.Split(strings.TrimSpace(name), ".")
			if len(labels) < 3 || !strings.HasPrefix(labels[0], "_") {
				bad(kc, "fleet.dns %q: want the SRV name of a Service (_http._tcp.<service>...)", name)
				continue
			}
			i := slices.IndexFunc(o.services, func(s corev1.Service) bool { return s.Name == labels[2] })
			if i < 0 {
				bad(kc, "fleet.dns %q: no Service %s", name, labels[2])
				continue
			}
			s := o.services[i]
			if s.Spec.ClusterIP != corev1.ClusterIPNone {
				bad(kc, "Service %s is not headless: its SRV records would name one virtual IP, not each runner", s.Name)
			}
			if s.Spec.PublishNotReadyAddresses {
				bad(kc, "Service %s publishes not-ready addresses: a pod that does not serve yet would be handed the runner key", s.Name)
			}
			if s.Spec.Selector[fleetLabel] != kc.deployment.Name {
				bad(kc, "Service %s selects runners by %v: select them by %s: %s, a label the manifests of this fleet view set on its runners", s.Name, s.Spec.Selector, fleetLabel, kc.deployment.Name)
			}
			selected := 0
			for _, other := range kcs {
				if labelsMatch(s.Spec.Selector, other.deployment.Spec.Template.Labels) {
					if other.role != roleRunner {
						bad(kc, "Service %s selects %s, which is no runner", s.Name, other.origin)
					}
					selected++
				}
			}
			if selected == 0 {
				bad(kc, "Service %s selects no runner pod", s.Name)
			}
		}
	}
	return errs
}

// A fleet example whose runner key is the fleet view's own key, or whose discovery Service
// publishes not-ready pods or selects runners by a label anyone's runners carry, is refused.
func TestFleetCheckerRejects(t *testing.T) {
	root := repoRoot(t)
	t.Run("compose", func(t *testing.T) {
		file := filepath.Join(root, "compose/fleet/compose.yaml")
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ name, old, new string }{
			{"valid", "", ""},
			{"the runners' key is the API key", "IGGY_CONNECTORS_FLEET_RUNNER_API_KEY: ${IGGY_CONNECTORS_FLEET_RUNNER_API_KEY", "IGGY_CONNECTORS_FLEET_RUNNER_API_KEY: ${IGGY_CONNECTORS_HTTP_API_KEY"},
			{"the runners expect the API key", "IGGY_CONNECTORS_HTTP_API_KEY: ${IGGY_CONNECTORS_FLEET_RUNNER_API_KEY", "IGGY_CONNECTORS_HTTP_API_KEY: ${IGGY_CONNECTORS_HTTP_API_KEY"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if !bytes.Contains(text, []byte(tc.old)) {
					t.Fatalf("%s no longer contains %q; update the test", file, tc.old)
				}
				p, err := loader.LoadWithContext(t.Context(), types.ConfigDetails{
					WorkingDir:  filepath.Dir(file),
					ConfigFiles: []types.ConfigFile{{Filename: file, Content: bytes.Replace(text, []byte(tc.old), []byte(tc.new), 1)}},
					Environment: composeEnv,
				}, func(o *loader.Options) { o.SetProjectName("fleet", true) })
				if err != nil {
					t.Fatal(err)
				}
				errs := checkCompose(t.Context(), root, p)
				if tc.old == "" {
					reportErrors(t, errs)
				} else if !slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, errFleetKey) }) {
					t.Fatalf("want an error matching %v, got %v", errFleetKey, errs)
				}
			})
		}
	})
	kustomized, err := kustomizeBuild(filepath.Join(root, kustomizeFleet))
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := helmRender(filepath.Join(root, helmChart), filepath.Join(root, helmValueFiles[3]), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct {
		name string
		docs [][]byte
		// runnerKey is the fleet view's runner key reference in the build, fleetKey the same with
		// the fleet view's own key; selector the discovery Service's, anyRunner one that selects
		// every runner pod.
		runnerKey, fleetKey, selector, anyRunner string
	}{
		{kustomizeFleet, kustomized,
			"- name: IGGY_CONNECTORS_FLEET_RUNNER_API_KEY\n          valueFrom:\n            secretKeyRef:\n              key: api-key\n              name: iggy-connectors-api-key",
			"- name: IGGY_CONNECTORS_FLEET_RUNNER_API_KEY\n          valueFrom:\n            secretKeyRef:\n              key: api-key\n              name: " + kustomizeFleetAPIKeySecret,
			"  selector:\n    iggy-connectors/fleet: iggy-connectors-fleet", "  selector:\n    app.kubernetes.io/name: iggy-connector-runner"},
		{helmChart + " " + helmValueFiles[3], rendered,
			"- name: IGGY_CONNECTORS_FLEET_RUNNER_API_KEY\n              valueFrom:\n                secretKeyRef:\n                  name: pipes-iggy-connectors-credentials\n                  key: api-key",
			"- name: IGGY_CONNECTORS_FLEET_RUNNER_API_KEY\n              valueFrom:\n                secretKeyRef:\n                  name: pipes-iggy-connectors-credentials\n                  key: fleet-api-key",
			"  selector:\n    iggy-connectors/fleet: pipes-iggy-connectors-fleet", "  selector:\n    app.kubernetes.io/name: iggy-connector-runner"},
	} {
		built := bytes.Join(set.docs, []byte("\n---\n"))
		for _, tc := range []struct {
			name, old, new string
			want           error
		}{
			{"valid", "", "", nil},
			{"not-ready pods published", "publishNotReadyAddresses: false", "publishNotReadyAddresses: true", errFleetDiscovery},
			{"runners selected by a label any runner carries", set.selector, set.anyRunner, errFleetDiscovery},
			{"the fleet view's key given to the runners", set.runnerKey, set.fleetKey, errFleetKey},
		} {
			t.Run(set.name+" "+tc.name, func(t *testing.T) {
				if !bytes.Contains(built, []byte(tc.old)) {
					t.Fatalf("the build no longer contains %q; update the test", tc.old)
				}
				o, err := decodeText(set.name, bytes.Replace(built, []byte(tc.old), []byte(tc.new), 1))
				if err != nil {
					t.Fatal(err)
				}
				o.externalSecrets = append(o.externalSecrets, kustomizeAPIKeySecret, kustomizeFleetAPIKeySecret)
				kcs, errs := kubeContainers(root, t.TempDir(), o)
				errs = append(errs, checkShape(o, kcs)...)
				switch {
				case tc.want == nil:
					reportErrors(t, errs)
				case !slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, tc.want) }):
					t.Fatalf("want an error matching %v, got %v", tc.want, errs)
				}
			})
		}
	}
}
