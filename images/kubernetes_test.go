package images_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/runner"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The Kubernetes manifests (compose/kubernetes, built with kustomize's Go API) and the Helm chart
// (compose/helm/iggy-connectors, rendered with Helm's chart loader and engine) are decoded strictly
// into the k8s.io/api types, and every runner or supervisor container of their Deployments becomes
// a container of the shared checker (deploy_test.go), plus the Kubernetes-only checks: probes,
// references to ConfigMaps and Secrets, the security context.

const (
	kustomizeRunners    = "compose/kubernetes"
	kustomizeSupervisor = "compose/kubernetes/supervisor"
	kustomizeFleet      = "compose/kubernetes-fleet"
	helmChart           = "compose/helm/iggy-connectors"
)

// helmValueFiles are the chart's default values ("") and the sample values files.
var helmValueFiles = []string{"", "compose/helm/samples/fields-plugin-image.yaml", "compose/helm/samples/file-state-plugin-volume.yaml", "compose/helm/samples/fleet-view.yaml", "compose/helm/samples/autoscaling-keda.yaml"}

var (
	errUnknownField = errors.New("manifest does not decode strictly")
	errMissingRef   = errors.New("reference to a ConfigMap or Secret key that is not there")
	errProbe        = errors.New("probe")
	errSecurity     = errors.New("security context")
	errShape        = errors.New("deployment shape")
	errIsolation    = errors.New("runner endpoint reachable from any pod")
)

// kustomizeAPIKeySecret is the Secret with the API key the kustomizations require the operator to
// create (compose/kubernetes/common/kustomization.yaml): no key ships with them.
const kustomizeAPIKeySecret = "iggy-connectors-api-key"

// serviceMonitor is the part of prometheus-operator's ServiceMonitor the chart renders; strict
// decoding rejects any other field.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []monitorEndpoint    `json:"endpoints"`
	} `json:"spec"`
}

// monitorEndpoint is one endpoint of a ServiceMonitor (the port name, path and interval it scrapes,
// and the Secret key it sends as a Bearer token).
type monitorEndpoint struct {
	Port          string `json:"port"`
	Path          string `json:"path"`
	Interval      string `json:"interval"`
	Authorization *struct {
		Type        string                    `json:"type"`
		Credentials *corev1.SecretKeySelector `json:"credentials"`
	} `json:"authorization"`
}

// objects are the decoded objects of one build or render.
type objects struct {
	origin      string
	deployments []appsv1.Deployment
	configMaps  map[string]corev1.ConfigMap
	secrets     map[string]corev1.Secret
	services    []corev1.Service
	claims      []corev1.PersistentVolumeClaim
	accounts    []corev1.ServiceAccount
	budgets     []policyv1.PodDisruptionBudget
	monitors    []serviceMonitor
	policies    []networkingv1.NetworkPolicy
	// scaledObjects are KEDA ScaledObjects, checked against KEDA's CRD (keda_test.go).
	scaledObjects []scaledObject
	// externalSecrets and externalAccounts are Secrets and ServiceAccounts the operator creates
	// (the chart's iggy.existingSecret, serviceAccount.name with serviceAccount.create false).
	externalSecrets, externalAccounts []string
}

// decodeObjects decodes YAML documents strictly, each by its kind.
func decodeObjects(origin string, docs [][]byte) (*objects, error) {
	o := &objects{origin: origin, configMaps: map[string]corev1.ConfigMap{}, secrets: map[string]corev1.Secret{}}
	for _, doc := range docs {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("%s: %w", origin, err)
		}
		if meta.Kind == "" {
			continue // an empty document
		}
		strict := func(into any) error {
			if err := yaml.UnmarshalStrict(doc, into); err != nil {
				return fmt.Errorf("%s: %s: %w: %w", origin, meta.Kind, errUnknownField, err)
			}
			return nil
		}
		var err error
		switch meta.APIVersion + " " + meta.Kind {
		case "apps/v1 Deployment":
			err = appendDecoded(&o.deployments, strict)
		case "v1 ConfigMap":
			var c corev1.ConfigMap
			err = strict(&c)
			o.configMaps[c.Name] = c
		case "v1 Secret":
			var s corev1.Secret
			err = strict(&s)
			o.secrets[s.Name] = s
		case "v1 Service":
			err = appendDecoded(&o.services, strict)
		case "v1 PersistentVolumeClaim":
			err = appendDecoded(&o.claims, strict)
		case "v1 ServiceAccount":
			err = appendDecoded(&o.accounts, strict)
		case "policy/v1 PodDisruptionBudget":
			err = appendDecoded(&o.budgets, strict)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			err = appendDecoded(&o.monitors, strict)
		case "networking.k8s.io/v1 NetworkPolicy":
			err = appendDecoded(&o.policies, strict)
		case "keda.sh/v1alpha1 ScaledObject":
			var so scaledObject
			if so, err = decodeScaledObject(doc); err != nil {
				err = fmt.Errorf("%s: %s: %w", origin, meta.Kind, err)
			}
			o.scaledObjects = append(o.scaledObjects, so)
		default:
			err = fmt.Errorf("%s: %s %s: %w: not a kind these manifests use", origin, meta.APIVersion, meta.Kind, errUnknownField)
		}
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

// appendDecoded decodes a document with strict into a new T appended to list.
func appendDecoded[T any](list *[]T, strict func(into any) error) error {
	var v T
	err := strict(&v)
	*list = append(*list, v)
	return err
}

// kustomizeBuild runs `kustomize build dir` in process and returns its documents.
func kustomizeBuild(dir string) ([][]byte, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var docs [][]byte
	for _, r := range m.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

// helmRender renders the chart as `helm template pipes <chart> [-f values]` does, with values
// added on top (nil: none).
func helmRender(chartDir, valuesFile string, extra map[string]any) ([][]byte, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", chartDir, err)
	}
	vals, err := chartValues(valuesFile)
	if err != nil {
		return nil, err
	}
	maps.Copy(vals, extra)
	if err := chrt.Validate(); err != nil {
		return nil, err
	}
	render, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{Name: "pipes", Namespace: "default", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(chrt, render)
	if err != nil {
		return nil, fmt.Errorf("render %s with %q: %w", chartDir, valuesFile, err)
	}
	var docs [][]byte
	for _, name := range sortedKeys(files) {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(files[name], -1) {
			if strings.TrimSpace(doc) != "" {
				docs = append(docs, []byte(doc))
			}
		}
	}
	return docs, nil
}

// kubeProbe is one liveness or readiness probe of a container, its port resolved.
type kubeProbe struct {
	kind string // "liveness" or "readiness"
	path string
	port int
}

// kubeContainer is one of our containers in a Deployment, with what only Kubernetes has.
type kubeContainer struct {
	container
	deployment *appsv1.Deployment
	spec       corev1.Container
	probes     []kubeProbe
}

// kubeContainers turns every runner or supervisor container of the Deployments into a container of
// the shared checker: its image's environment, then its env entries with ConfigMap and Secret
// references resolved, ConfigMap volumes written to dir as the mounted files.
func kubeContainers(root, dir string, o *objects) ([]kubeContainer, []error) {
	var out []kubeContainer
	var errs []error
	for i := range o.deployments {
		d := &o.deployments[i]
		pod := d.Spec.Template.Spec
		for _, spec := range pod.Containers {
			origin := fmt.Sprintf("%s: Deployment %s container %s", o.origin, d.Name, spec.Name)
			c, err := registryImage(root, origin, spec.Image)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			kc := kubeContainer{container: c, deployment: d, spec: spec}
			kc.stopGrace = 30 * time.Second // Kubernetes' default terminationGracePeriodSeconds
			if g := pod.TerminationGracePeriodSeconds; g != nil {
				kc.stopGrace = time.Duration(*g) * time.Second
			}
			for _, p := range spec.Ports {
				kc.publishedPorts = append(kc.publishedPorts, int(p.ContainerPort))
			}
			errs = append(errs, kc.resolveEnv(o)...)
			errs = append(errs, kc.mountVolumes(o, pod, filepath.Join(dir, d.Name))...)
			errs = append(errs, kc.resolveProbes()...)
			out = append(out, kc)
		}
	}
	return out, errs
}

func (kc *kubeContainer) resolveEnv(o *objects) []error {
	var errs []error
	for _, e := range kc.spec.Env {
		value, err := o.envValue(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: env %s: %w", kc.origin, e.Name, err))
			continue
		}
		kc.env[e.Name] = value
	}
	if len(kc.spec.EnvFrom) > 0 {
		errs = append(errs, fmt.Errorf("%s: envFrom: %w: name each variable, so each can be checked", kc.origin, errUnknownVariable))
	}
	return errs
}

// envValue is an env entry's value, its reference resolved against the rendered objects.
func (o *objects) envValue(e corev1.EnvVar) (string, error) {
	switch {
	case e.ValueFrom == nil:
		return e.Value, nil
	case e.ValueFrom.ConfigMapKeyRef != nil:
		ref := e.ValueFrom.ConfigMapKeyRef
		v, ok := o.configMaps[ref.Name].Data[ref.Key]
		if !ok {
			return "", fmt.Errorf("ConfigMap %s key %s: %w", ref.Name, ref.Key, errMissingRef)
		}
		return v, nil
	case e.ValueFrom.SecretKeyRef != nil:
		ref := e.ValueFrom.SecretKeyRef
		if slices.Contains(o.externalSecrets, ref.Name) {
			return "from-secret-" + ref.Name + "/" + ref.Key, nil
		}
		s, ok := o.secrets[ref.Name]
		if v, found := s.StringData[ref.Key]; ok && found {
			return v, nil
		}
		if v, found := s.Data[ref.Key]; ok && found {
			return string(v), nil
		}
		return "", fmt.Errorf("Secret %s key %s: %w", ref.Name, ref.Key, errMissingRef)
	}
	return "", fmt.Errorf("%w: only value, configMapKeyRef and secretKeyRef are used", errUnknownVariable)
}

// mountVolumes writes each mounted ConfigMap's keys as files under dir and records the mount; a
// volume the operator fills (an init container copying from a plugin image, a claim) counts as
// providing the plugins in its directory.
func (kc *kubeContainer) mountVolumes(o *objects, pod corev1.PodSpec, dir string) []error {
	var errs []error
	for _, m := range kc.spec.VolumeMounts {
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			errs = append(errs, fmt.Errorf("%s: volumeMount %s: %w: no such volume", kc.origin, m.Name, errMissingRef))
			continue
		}
		v := pod.Volumes[i]
		switch {
		case v.ConfigMap != nil:
			cm, ok := o.configMaps[v.ConfigMap.Name]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: volume %s: ConfigMap %s: %w", kc.origin, v.Name, v.ConfigMap.Name, errMissingRef))
				continue
			}
			host := filepath.Join(dir, v.Name)
			if err := os.MkdirAll(host, 0o755); err != nil {
				return append(errs, err)
			}
			for key, data := range cm.Data {
				if err := os.WriteFile(filepath.Join(host, key), []byte(data), 0o644); err != nil {
					return append(errs, err)
				}
				kc.mounts[path.Join(m.MountPath, key)] = filepath.Join(host, key)
			}
			kc.mounts[m.MountPath] = host
		case v.EmptyDir != nil && m.MountPath == pluginDir && filledByInit(pod, v.Name):
			kc.volumeDirs = append(kc.volumeDirs, m.MountPath)
		case v.PersistentVolumeClaim != nil || v.CSI != nil || v.NFS != nil:
			if m.MountPath == pluginDir {
				kc.volumeDirs = append(kc.volumeDirs, m.MountPath)
			}
		}
	}
	return errs
}

// filledByInit reports whether an init container writes into the volume.
func filledByInit(pod corev1.PodSpec, volume string) bool {
	for _, c := range pod.InitContainers {
		for _, m := range c.VolumeMounts {
			if m.Name == volume && !m.ReadOnly {
				return true
			}
		}
	}
	return false
}

// resolveProbes reads the liveness and readiness probes; each must be an HTTP GET on a port of
// the container (by number or by name).
func (kc *kubeContainer) resolveProbes() []error {
	var errs []error
	for _, p := range []struct {
		kind  string
		probe *corev1.Probe
	}{{"liveness", kc.spec.LivenessProbe}, {"readiness", kc.spec.ReadinessProbe}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w: want an httpGet probe", kc.origin, p.kind, errProbe))
			continue
		}
		port, err := containerPort(kc.spec, p.probe.HTTPGet.Port)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s probe: %w", kc.origin, p.kind, err))
			continue
		}
		kc.probes = append(kc.probes, kubeProbe{kind: p.kind, path: p.probe.HTTPGet.Path, port: port})
	}
	return errs
}

func containerPort(spec corev1.Container, port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range spec.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("port %q: %w: the container has no port of that name", port.StrVal, errPort)
}

// checkKubeContainer runs the shared checks, then the probe ports against the HTTP address the
// program binds and the security context; it returns the container's connectors.
func checkKubeContainer(ctx context.Context, kc kubeContainer) ([]config.Connector, []error) {
	connectors, errs := checkContainer(ctx, kc.container)
	rt, err := effectiveRuntime(kc.container)
	if err != nil {
		return connectors, errs
	}
	_, portText, _ := strings.Cut(rt.HTTP.Address, ":")
	for _, p := range kc.probes {
		if fmt.Sprint(p.port) != portText {
			errs = append(errs, fmt.Errorf("%s: %s probe port %d: %w %q", kc.origin, p.kind, p.port, errPort, rt.HTTP.Address))
		}
	}
	return connectors, append(errs, checkSecurity(kc)...)
}

// checkSecurity wants the pod non-root, no privilege escalation, no capabilities and a read-only
// root filesystem.
func checkSecurity(kc kubeContainer) []error {
	pod := kc.deployment.Spec.Template.Spec.SecurityContext
	sc := kc.spec.SecurityContext
	var missing []string
	if pod == nil || pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot {
		missing = append(missing, "pod runAsNonRoot: true")
	}
	if pod == nil || pod.RunAsUser == nil || *pod.RunAsUser == 0 {
		missing = append(missing, "pod runAsUser (the image's uid 10001)")
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		missing = append(missing, "allowPrivilegeEscalation: false")
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		missing = append(missing, "readOnlyRootFilesystem: true")
	}
	if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		missing = append(missing, "capabilities drop ALL")
	}
	if len(missing) > 0 {
		return []error{fmt.Errorf("%s: %w: want %s", kc.origin, errSecurity, strings.Join(missing, ", "))}
	}
	return nil
}

// loadKube builds or renders one source of manifests and decodes it.
func loadKube(root, kind, name string) (*objects, error) {
	switch kind {
	case "kustomize":
		docs, err := kustomizeBuild(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		o, err := decodeObjects(name, docs)
		if err != nil {
			return nil, err
		}
		o.externalSecrets = append(o.externalSecrets, kustomizeAPIKeySecret, kustomizeFleetAPIKeySecret)
		return o, nil
	case "helm":
		file := ""
		if name != "" {
			file = filepath.Join(root, name)
		}
		docs, err := helmRender(filepath.Join(root, helmChart), file, nil)
		if err != nil {
			return nil, err
		}
		o, err := decodeObjects(helmChart+" values "+cmp.Or(name, "(default)"), docs)
		if err != nil {
			return nil, err
		}
		vals, err := chartValues(file)
		if err != nil {
			return nil, err
		}
		if s, _ := vals.PathValue("iggy.existingSecret"); s != nil && s != "" {
			o.externalSecrets = append(o.externalSecrets, fmt.Sprint(s))
		}
		if create, _ := vals.PathValue("serviceAccount.create"); create == false {
			name, _ := vals.PathValue("serviceAccount.name")
			o.externalAccounts = append(o.externalAccounts, fmt.Sprint(name))
		}
		return o, nil
	}
	return nil, fmt.Errorf("unknown manifest kind %q", kind)
}

func chartValues(file string) (chartutil.Values, error) {
	if file == "" {
		return chartutil.Values{}, nil
	}
	return chartutil.ReadValuesFile(file)
}

// loadRunnerSettings loads the connector a runner container runs, with the runner's own loader.
func loadRunnerSettings(c container) (config.Connector, error) {
	s, err := runner.LoadSettings(context.Background(), environList(c.env))
	if err != nil {
		return config.Connector{}, err
	}
	return s.Connector, nil
}

// decodeText decodes manifests given as one multi-document YAML text (a mutated build).
func decodeText(origin string, text []byte) (*objects, error) {
	return decodeObjects(origin, bytes.Split(text, []byte("\n---\n")))
}
