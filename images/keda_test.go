package images_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The chart's KEDA ScaledObjects (autoscaling.enabled) are checked against KEDA's own CRD, vendored
// in testdata/keda (keda.sh_scaledobjects.yaml of kedacore/keda v2.20.2, Apache-2.0, see its
// README): unknown fields as the API server prunes them (the structural schema) and every value as
// the API server validates it (kube-openapi's validator on that schema). The lag query they carry
// is run against a real Prometheus scraping a runner that really lags.

// kedaCRD is the vendored ScaledObject CRD.
const kedaCRD = "testdata/keda/keda.sh_scaledobjects.yaml"

// errSchema: a document breaks the CRD's schema.
var errSchema = errors.New("does not validate against the CRD schema")

// crdSchema is one served version of a CRD, ready to check objects the way the API server does.
type crdSchema struct {
	group, version, kind string
	structural           *structuralschema.Structural
	validator            *validate.SchemaValidator
}

var (
	scaledObjectSchemaOnce sync.Once
	scaledObjectSchema     *crdSchema
	scaledObjectSchemaErr  error
)

// loadScaledObjectSchema reads the vendored CRD (once) and builds its structural schema and
// validator.
func loadScaledObjectSchema() (*crdSchema, error) {
	scaledObjectSchemaOnce.Do(func() {
		scaledObjectSchema, scaledObjectSchemaErr = loadCRD(kedaCRD, "v1alpha1")
	})
	return scaledObjectSchema, scaledObjectSchemaErr
}

func loadCRD(path, version string) (*crdSchema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != version || !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			return nil, fmt.Errorf("%s: convert the schema: %w", path, err)
		}
		s, err := structuralschema.NewStructural(&internal)
		if err != nil {
			return nil, fmt.Errorf("%s: structural schema: %w", path, err)
		}
		if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), s); len(errs) > 0 {
			return nil, fmt.Errorf("%s: not a structural schema: %v", path, errs.ToAggregate())
		}
		return &crdSchema{group: crd.Spec.Group, version: v.Name, kind: crd.Spec.Names.Kind, structural: s,
			validator: validate.NewSchemaValidator(s.ToKubeOpenAPI(), nil, "", strfmt.Default)}, nil
	}
	return nil, fmt.Errorf("%s: no served version %s with a schema", path, version)
}

// check validates one YAML document as the API server would on create: apiVersion and kind of
// the CRD, no field the schema does not know (it would prune them), every value valid.
func (c *crdSchema) check(doc []byte) error {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return err
	}
	if obj["apiVersion"] != c.group+"/"+c.version || obj["kind"] != c.kind {
		return fmt.Errorf("%w: apiVersion %v kind %v, the CRD serves %s/%s %s", errSchema, obj["apiVersion"], obj["kind"], c.group, c.version, c.kind)
	}
	pruned := runtime.DeepCopyJSON(obj)
	unknown := pruning.PruneWithOptions(pruned, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("%w: %w: unknown fields %s", errUnknownField, errSchema, strings.Join(unknown, ", "))
	}
	if res := c.validator.Validate(obj); !res.IsValid() {
		var msgs []string
		for _, e := range res.Errors {
			msgs = append(msgs, e.Error())
		}
		return fmt.Errorf("%w: %s", errSchema, strings.Join(msgs, "; "))
	}
	return nil
}

// scaledObject is the part of a KEDA ScaledObject the chart renders (after the schema check).
type scaledObject struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		ScaleTargetRef struct {
			Name string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicaCount *int32 `json:"minReplicaCount"`
		MaxReplicaCount *int32 `json:"maxReplicaCount"`
		Advanced        struct {
			HorizontalPodAutoscalerConfig struct {
				Behavior struct {
					ScaleDown *struct {
						StabilizationWindowSeconds *int32 `json:"stabilizationWindowSeconds"`
						Policies                   []struct {
							Type          string `json:"type"`
							Value         int32  `json:"value"`
							PeriodSeconds int32  `json:"periodSeconds"`
						} `json:"policies"`
					} `json:"scaleDown"`
				} `json:"behavior"`
			} `json:"horizontalPodAutoscalerConfig"`
		} `json:"advanced"`
		Triggers []struct {
			Type       string            `json:"type"`
			Name       string            `json:"name"`
			MetricType string            `json:"metricType"`
			Metadata   map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
	raw []byte
}

// decodeScaledObject checks a ScaledObject document against KEDA's CRD, then decodes it.
func decodeScaledObject(doc []byte) (scaledObject, error) {
	schema, err := loadScaledObjectSchema()
	if err != nil {
		return scaledObject{}, err
	}
	if err := schema.check(doc); err != nil {
		return scaledObject{}, err
	}
	var so scaledObject
	err = yaml.Unmarshal(doc, &so)
	so.raw = doc
	return so, err
}

const autoscalingSample = "compose/helm/samples/autoscaling-keda.yaml"

// renderAutoscaling renders the chart with the autoscaling sample and values on top.
func renderAutoscaling(t *testing.T, root string, extra map[string]any) *objects {
	t.Helper()
	docs, err := helmRender(filepath.Join(root, helmChart), filepath.Join(root, autoscalingSample), extra)
	if err != nil {
		t.Fatal(err)
	}
	o, err := decodeObjects(autoscalingSample, docs)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Without autoscaling nothing changes: no ScaledObject, every Deployment keeps its replicas. With
// it, each sink Deployment gets a ScaledObject on its lag, from minReplicas up to its partitions,
// with the scale-down behaviour, and its Deployment leaves the replica count to it; sources and a
// sink that opts out keep theirs; a sink without partitions is refused naming it.
func TestHelmAutoscalingScaledObjects(t *testing.T) {
	root := repoRoot(t)
	plain, err := loadKube(root, "helm", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.scaledObjects) != 0 {
		t.Fatalf("default values render %d ScaledObjects", len(plain.scaledObjects))
	}
	for _, d := range plain.deployments {
		if d.Spec.Replicas == nil {
			t.Fatalf("default values: Deployment %s has no replicas", d.Name)
		}
	}

	o := renderAutoscaling(t, root, nil)
	if len(o.scaledObjects) != 1 {
		t.Fatalf("%d ScaledObjects, want one for the one sink", len(o.scaledObjects))
	}
	so := o.scaledObjects[0]
	var sinkDeployment, sourceDeployment string
	for _, d := range o.deployments {
		switch {
		case strings.HasSuffix(d.Name, "-sink-stdout"):
			sinkDeployment = d.Name
			if d.Spec.Replicas != nil {
				t.Errorf("autoscaled Deployment %s sets replicas %d: the HPA owns the count", d.Name, *d.Spec.Replicas)
			}
		case strings.HasSuffix(d.Name, "-source-random"):
			sourceDeployment = d.Name
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
				t.Errorf("source Deployment %s replicas %v, want its 2", d.Name, d.Spec.Replicas)
			}
		}
	}
	if so.Spec.ScaleTargetRef.Name != sinkDeployment || sourceDeployment == "" {
		t.Fatalf("ScaledObject targets %q, the sink Deployment is %q", so.Spec.ScaleTargetRef.Name, sinkDeployment)
	}
	sd := so.Spec.Advanced.HorizontalPodAutoscalerConfig.Behavior.ScaleDown
	if *so.Spec.MinReplicaCount != 1 || *so.Spec.MaxReplicaCount != 3 || sd == nil || *sd.StabilizationWindowSeconds != 300 ||
		len(sd.Policies) != 1 || sd.Policies[0].Type != "Pods" || sd.Policies[0].Value != 1 || sd.Policies[0].PeriodSeconds != 60 {
		t.Fatalf("ScaledObject spec: %s", so.raw)
	}
	tr := so.Spec.Triggers
	if len(tr) != 1 || tr[0].Type != "prometheus" || tr[0].MetricType != "AverageValue" || tr[0].Metadata["threshold"] != "1000" ||
		tr[0].Metadata["activationThreshold"] != "10" || !strings.Contains(tr[0].Metadata["query"], `connector_key="stdout"`) ||
		!strings.Contains(tr[0].Metadata["query"], metrics.FamilyConsumerLag) || !strings.Contains(tr[0].Metadata["query"], `namespace="default"`) {
		t.Fatalf("ScaledObject trigger: %s", so.raw)
	}

	// A sink that opts out keeps its replicas and gets no ScaledObject.
	optOut := renderAutoscaling(t, root, map[string]any{"connectors": []any{map[string]any{
		"type": "sink", "key": "fixed", "replicas": 2, "autoscaling": false,
		"fields": map[string]any{"enabled": true, "version": 1, "name": "fixed", "path": "/opt/iggy/connectors/libiggy_connector_stdout_sink",
			"streams": []any{map[string]any{"stream": "demo_stream", "topics": []any{"demo_topic"}, "schema": "json"}}},
	}}})
	if len(optOut.scaledObjects) != 0 || len(optOut.deployments) != 1 || optOut.deployments[0].Spec.Replicas == nil || *optOut.deployments[0].Spec.Replicas != 2 {
		t.Fatalf("opted-out sink: %d ScaledObjects, deployments %+v", len(optOut.scaledObjects), optOut.deployments)
	}
	// Without partitions the chart refuses, naming the sink.
	_, err = helmRender(filepath.Join(root, helmChart), filepath.Join(root, autoscalingSample), map[string]any{"connectors": []any{map[string]any{
		"type": "sink", "key": "nopart", "config": "type = \"sink\"\nkey = \"nopart\"\n",
	}}})
	if err == nil || !strings.Contains(err.Error(), `sink "nopart"`) || !strings.Contains(err.Error(), "partitions") {
		t.Fatalf("a sink without partitions: %v", err)
	}
}

// The schema check is KEDA's: a field KEDA does not have, a wrong type, a value out of its enum or
// a missing required field in the chart's ScaledObject are refused.
func TestScaledObjectSchemaIsEnforced(t *testing.T) {
	o := renderAutoscaling(t, repoRoot(t), nil)
	good := string(o.scaledObjects[0].raw)
	for _, tc := range []struct{ name, from, to string }{
		{"unknown field", "  minReplicaCount:", "  maxReplicas: 3\n  minReplicaCount:"},
		{"wrong type", "  pollingInterval: 15", "  pollingInterval: soon"},
		{"metadata not strings", `threshold: "1000"`, "threshold: 1000"},
		{"enum", "      name: consumer-lag\n", "      name: consumer-lag\n      authenticationRef:\n        name: x\n        kind: Secret\n"},
		{"required trigger type", "    - type: prometheus\n      name:", "    - name:"},
	} {
		doc := strings.Replace(good, tc.from, tc.to, 1)
		if doc == good {
			t.Fatalf("%s: the mutation did not apply to:\n%s", tc.name, good)
		}
		if _, err := decodeScaledObject([]byte(doc)); !errors.Is(err, errSchema) {
			t.Errorf("%s: %v, want a schema error", tc.name, err)
		}
	}
}

// The ScaledObject's query, run on a real Prometheus scraping a runner that really lags (its
// rate limit holds it back over a filled topic): it gives one value, the messages the sink is
// behind, enough for KEDA to scale up to the sink's partitions.
func TestKEDALagQueryOnPrometheus(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	so := renderAutoscaling(t, root, nil).scaledObjects[0]
	trigger := so.Spec.Triggers[0].Metadata
	plugins := testkit.BuildPlugins(t)
	const backlog = 5000
	broker := testkit.StartBroker(t, testkit.WithStream("demo_stream", map[string]uint32{"demo_topic": 1}))
	testkit.FillTopic(t, broker, "demo_stream", "demo_topic", backlog)
	runner := testkit.StartRunner(t, []string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr(),
		"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0",
		"IGGY_CONNECTORS_STATE_PATH=" + t.TempDir(),
		"IGGY_CONNECTOR_CONFIG=" + fmt.Sprintf(`type = "sink"
key = "stdout"
enabled = true
version = 1
name = "Stdout sink"
path = %q

[[streams]]
stream = "demo_stream"
topics = ["demo_topic"]
schema = "json"
batch_length = 100
poll_interval = "5ms"

[rate_limit]
messages_per_second = 20

[plugin_config]
`, filepath.Join(plugins, "libiggy_connector_null_sink")),
	})
	addr := boundAddress(t, runner)
	waitFor(t, "http://"+addr+"/stats", runner.Exited, func(s metrics.ConnectorStats) bool { return s.Lag != nil && *s.Lag > 1000 })
	// As a ServiceMonitor's scrape labels it, with the namespace the sample's query asks for.
	prom := testkit.StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: iggy-connector-runners
    static_configs:
      - targets: [%q]
        labels:
          namespace: default
`, addr))
	var lag float64
	testkit.EventuallyEvery(t, 60*time.Second, time.Second, fmt.Sprintf("a value of the ScaledObject's query %q", trigger["query"]), func() bool {
		v, ok, err := prom.QueryValue(trigger["query"])
		if err != nil {
			t.Fatalf("the ScaledObject's query: %v", err)
		}
		lag = v
		return ok
	})
	threshold, activation := parseFloat(t, trigger["threshold"]), parseFloat(t, trigger["activationThreshold"])
	desired := min(float64(*so.Spec.MaxReplicaCount), math.Ceil(lag/threshold))
	if lag <= activation || lag > backlog || desired != float64(*so.Spec.MaxReplicaCount) {
		t.Fatalf("lag %v (activation %v, threshold %v): KEDA would want %v replicas, want the sink's %d partitions", lag, activation, threshold, desired, *so.Spec.MaxReplicaCount)
	}
}

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}
