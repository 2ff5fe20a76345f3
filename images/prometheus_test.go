package images_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/prometheus/common/expfmt"
	"go.yaml.in/yaml/v3"
)

// The alerts (compose/prometheus/alerts.yml) and the dashboard (compose/grafana/iggy-connectors.json)
// are checked with the real Prometheus tools: promtool checks the rules and the families of real
// /metrics output, and a real Prometheus scraping a running supervisor evaluates every alert
// expression and every panel query.

const (
	alertsFile    = "compose/prometheus/alerts.yml"
	dashboardFile = "compose/grafana/iggy-connectors.json"
)

// upstreamGaugeNames are upstream's gauges whose names end in _total (docs/http-api.md §4.3), which
// promtool's lint dislikes; the names are part of the drop-in contract and stay.
var upstreamGaugeNames = []string{metrics.FamilySourcesTotal, metrics.FamilySinksTotal}

func promtool(t *testing.T, stdin []byte, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is not installed (make test installs Debian's prometheus package): %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// alertRule is one rule of a Prometheus rule file.
type alertRule struct {
	Alert string `yaml:"alert"`
	Expr  string `yaml:"expr"`
}

func readAlerts(t *testing.T, root string) []alertRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, alertsFile))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	var rules []alertRule
	for _, g := range file.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("%s: no rules", alertsFile)
	}
	return rules
}

// panelQuery is one target of a dashboard panel.
type panelQuery struct {
	panel, expr string
}

func readDashboard(t *testing.T, root string) []panelQuery {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	var out []panelQuery
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q has no query", dashboardFile, p.Title)
		}
		for _, target := range p.Targets {
			out = append(out, panelQuery{p.Title, target.Expr})
		}
	}
	return out
}

// grafanaVariables replaces the dashboard's variables as Grafana does with "All" selected.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "10s", "$connector", ".*")

// metricNames lists the iggy_* names an expression uses.
func metricNames(expr string) []string {
	return regexp.MustCompile(`\biggy_[a-z_]+`).FindAllString(expr, -1)
}

func TestAlertRulesCheck(t *testing.T) {
	root := repoRoot(t)
	out, err := promtool(t, nil, "check", "rules", filepath.Join(root, alertsFile))
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	// Every alert the issue asks for, by name.
	var names []string
	for _, r := range readAlerts(t, root) {
		names = append(names, r.Alert)
	}
	for _, want := range []string{"IggyConnectorDown", "IggyConnectorRestarting", "IggyConnectorRestartLimitReached", "IggyConnectorErrorsRising", "IggyConnectorConsumerLagGrowing", "IggyConnectorDeadLettering", "IggyConnectorsScrapeFailing"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s has no alert %s", alertsFile, want)
		}
	}
}

// checkMetricsLint runs `promtool check metrics` on an exposition. The body is OpenMetrics served
// as text/plain (as upstream), which promtool would read as the classic format and misname every
// counter; so it gets the families Prometheus ingests, written in the classic format.
func checkMetricsLint(t *testing.T, what string, body []byte) {
	t.Helper()
	families, err := testkit.ParseMetrics(bytes.NewReader(body), "text/plain")
	if err != nil {
		t.Fatalf("%s /metrics: %v", what, err)
	}
	var text bytes.Buffer
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(&text, f); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := promtool(t, text.Bytes(), "check", "metrics")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, problem, _ := strings.Cut(line, " ")
		if line == "" || (slices.Contains(upstreamGaugeNames, name) && strings.Contains(problem, `should not have "_total" suffix`)) {
			continue
		}
		t.Errorf("promtool check metrics, %s: %s", what, line)
	}
}

// monitoringConnectors are the connector files of the Prometheus test: a source and a sink that
// flow, a sink that crashes (restarts) and one whose plugin refuses every record (errors and
// dead-lettered records).
func monitoringConnectors(plugins string) map[string]string {
	sink := func(key, plugin, group, extra string) string {
		return fmt.Sprintf(`type = "sink"
key = %q
enabled = true
version = 1
name = %q
path = %q

[[streams]]
stream = "demo_stream"
topics = ["demo_topic"]
schema = "json"
batch_length = 100
poll_interval = "5ms"
consumer_group = %q
%s`, key, key, filepath.Join(plugins, plugin), group, extra)
	}
	return map[string]string{
		"random.toml": fmt.Sprintf(`type = "source"
key = "random"
enabled = true
version = 1
name = "Random source"
path = %q
plugin_config_format = "json"

[[streams]]
stream = "demo_stream"
topic = "demo_topic"
schema = "json"
batch_length = 100
linger_time = "5ms"

[plugin_config]
interval = "100ms"
messages_range = [1, 4]
payload_size = 40
`, filepath.Join(plugins, "libiggy_connector_random_source")),
		"stdout.toml": sink("stdout", "libiggy_connector_stdout_sink", "stdout", "\n[plugin_config]\nprint_payload = false\n"),
		"crashy.toml": sink("crashy", "libiggy_connector_fault", "crashy", "\n[plugin_config]\ncrash_on_batch = 1\n"),
		"refusing.toml": sink("refusing", "libiggy_connector_fault", "refusing", `
[plugin_config]
consume_code = 1

[error_handling]
tolerance = "all"
max_retries = 0
retry_backoff = "1ms"
max_retry_backoff = "1ms"
`),
	}
}

func getBody(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return body
}

// TestPrometheusEvaluatesAlertsAndDashboard runs a supervisor with flowing, crashing and refusing
// connectors, lints its /metrics and a runner's with promtool, and has a real Prometheus scrape
// it every second: every alert expression and every panel query must parse and evaluate, and every
// panel must return data.
func TestPrometheusEvaluatesAlertsAndDashboard(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	plugins := testkit.BuildPlugins(t)
	broker := testkit.StartBroker(t, testkit.WithStream("demo_stream", map[string]uint32{"demo_topic": 1}))

	dir := t.TempDir()
	for name, text := range monitoringConnectors(plugins) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sup := testkit.StartSupervisor(t, t.TempDir(), []string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr(),
		"IGGY_CONNECTORS_CONNECTORS_CONFIG_DIR=" + dir,
		"IGGY_CONNECTORS_STATE_PATH=" + t.TempDir(),
		"IGGY_CONNECTORS_HTTP_METRICS_ENABLED=true",
		// The crashing sink reaches it after its third restart: IggyConnectorRestartLimitReached.
		"IGGY_SUPERVISOR_RESTART_LIMIT=3",
	}, 90*time.Second)

	// A standalone runner's /metrics, the one-container-per-connector shape.
	runnerProc := testkit.StartRunner(t, []string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr(),
		"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0",
		"IGGY_CONNECTORS_STATE_PATH=" + t.TempDir(),
		"IGGY_CONNECTOR_CONFIG=" + strings.Replace(monitoringConnectors(plugins)["stdout.toml"], `consumer_group = "stdout"`, `consumer_group = "standalone"`, 1),
	})
	runnerAddr := boundAddress(t, runnerProc)
	waitFor(t, "http://"+runnerAddr+"/stats", runnerProc.Exited, func(s metrics.ConnectorStats) bool {
		return s.Status == "running" && s.MessagesConsumed != nil && *s.MessagesConsumed > 0
	})
	checkMetricsLint(t, "runner", getBody(t, "http://"+runnerAddr+"/metrics"))

	prom := testkit.StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: iggy-connectors
    static_configs:
      - targets: [%q]
`, filepath.Join(root, alertsFile), sup.Addr))

	type query struct{ what, expr string }
	var queries []query
	for _, r := range readAlerts(t, root) {
		queries = append(queries, query{"alert " + r.Alert, r.Expr})
	}
	panels := readDashboard(t, root)
	for _, p := range panels {
		queries = append(queries, query{"panel " + p.panel, grafanaVariables.Replace(p.expr)})
	}

	// Until every panel has data (the crashing sink's restarts take a few seconds), at most 60s,
	// looked at once a scrape interval.
	var missing []string
	testkit.WithinEvery(60*time.Second, time.Second, func() bool {
		missing = missing[:0]
		for _, q := range queries {
			n, err := prom.Query(q.expr)
			if errors.Is(err, testkit.ErrPromQL) {
				t.Fatalf("%s: %v", q.what, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 && strings.HasPrefix(q.what, "panel ") {
				missing = append(missing, q.what+": "+q.expr)
			}
		}
		return len(missing) == 0
	}) // what is missing at the end is reported below
	for _, m := range missing {
		t.Errorf("no data: %s", m)
	}
	// The crashing sink reaches the restart limit, and its alert's expression finds it.
	for _, r := range readAlerts(t, root) {
		if r.Alert != "IggyConnectorRestartLimitReached" {
			continue
		}
		testkit.EventuallyEvery(t, 30*time.Second, time.Second, r.Alert+": the crashing sink at the restart limit", func() bool {
			n, err := prom.Query(r.Expr)
			if err != nil {
				t.Fatal(err)
			}
			return n > 0
		})
	}

	// The names the alerts and panels use are families the supervisor exposes.
	body := getBody(t, sup.URL("/metrics"))
	checkMetricsLint(t, "supervisor", body)
	for _, q := range queries {
		for _, name := range metricNames(q.expr) {
			if !bytes.Contains(body, []byte("\n"+name)) {
				t.Errorf("%s uses %s, which the supervisor's /metrics does not have", q.what, name)
			}
		}
	}
	targets, err := prom.Targets()
	if err != nil {
		t.Fatal(err)
	}
	for url, health := range targets {
		if health != "up " {
			t.Errorf("scrape of %s: %s", url, health)
		}
	}
	if len(targets) != 1 {
		t.Errorf("targets: %v, want the supervisor", targets)
	}
}

// TestSupervisorExampleMonitoring checks the drop-in example's prometheus and grafana services:
// Prometheus loads the alerts and scrapes the connectors service on its HTTP port (promtool
// checks the config with the mounted files), and Grafana provisions Prometheus and the dashboard.
func TestSupervisorExampleMonitoring(t *testing.T) {
	root := repoRoot(t)
	p, err := loadCompose(t.Context(), filepath.Join(root, "compose/supervisor/compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mounts := func(s types.ServiceConfig) map[string]string {
		m := map[string]string{}
		for _, v := range s.Volumes {
			m[v.Target] = v.Source
		}
		return m
	}
	prom, grafana := p.Services["prometheus"], p.Services["grafana"]
	pm, gm := mounts(prom), mounts(grafana)

	// prometheus.yml with the rule files mapped to the mounted host files.
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			Authorization struct {
				Type            string `yaml:"type"`
				CredentialsFile string `yaml:"credentials_file"`
			} `yaml:"authorization"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	data, err := os.ReadFile(pm["/etc/prometheus/prometheus.yml"])
	if err != nil {
		t.Fatalf("prometheus service: no prometheus.yml mounted at /etc/prometheus/prometheus.yml: %v", err)
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, rf := range cfg.RuleFiles {
		host, ok := pm[rf]
		if !ok {
			t.Fatalf("rule file %s is not mounted", rf)
		}
		if same, _ := filepath.Rel(root, host); same != alertsFile {
			t.Errorf("rule file %s is %s, want %s", rf, host, alertsFile)
		}
		text = strings.ReplaceAll(text, rf, host)
	}
	// The prometheus service's secrets, written where promtool can read them: each file is the
	// value of the variable the secret comes from.
	secretFrom := map[string]string{} // path in the container -> variable
	for _, ref := range prom.Secrets {
		target := cmp.Or(ref.Target, ref.Source)
		if !strings.HasPrefix(target, "/") {
			target = "/run/secrets/" + target
		}
		variable := p.Secrets[ref.Source].Environment
		host := filepath.Join(t.TempDir(), ref.Source)
		if err := os.WriteFile(host, []byte(composeEnv[variable]), 0o600); err != nil {
			t.Fatal(err)
		}
		secretFrom[target] = variable
		text = strings.ReplaceAll(text, target, host)
	}
	tmp := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := promtool(t, nil, "check", "config", tmp); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	c, ok, err := composeContainer(root, p, p.Services["connectors"], nil)
	if err != nil || !ok {
		t.Fatal(err)
	}
	rt, err := effectiveRuntime(c)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(rt.HTTP.Address, ":")
	scraped := false
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			scraped = scraped || (sc.JobName == "iggy-connectors" && slices.Contains(st.Targets, "connectors:"+port))
		}
		// The API has a key: the job must send it as a Bearer token, from the variable that
		// sets the connectors service's key.
		keyVar := secretFrom[sc.Authorization.CredentialsFile]
		if sc.JobName == "iggy-connectors" && (sc.Authorization.Type != "Bearer" || keyVar == "" || composeEnv[keyVar] != rt.HTTP.APIKey) {
			t.Errorf("prometheus.yml: job iggy-connectors authorization %+v: want type Bearer with the credentials_file of a secret holding the API key", sc.Authorization)
		}
	}
	if !scraped {
		t.Errorf("prometheus.yml: no job iggy-connectors scraping connectors:%s (the alerts watch that job)", port)
	}

	// Grafana: the data source points at the prometheus service, the dashboard is provisioned.
	prov := gm["/etc/grafana/provisioning"]
	ds, err := os.ReadFile(filepath.Join(prov, "datasources", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ds), "url: http://prometheus:9090") {
		t.Errorf("grafana data source does not point at the prometheus service")
	}
	var dashboards struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	data, err = os.ReadFile(filepath.Join(prov, "dashboards", "iggy-connectors.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &dashboards); err != nil || len(dashboards.Providers) != 1 {
		t.Fatalf("dashboard provider: %v", err)
	}
	host := gm[filepath.Join(dashboards.Providers[0].Options.Path, "iggy-connectors.json")]
	if rel, _ := filepath.Rel(root, host); rel != dashboardFile {
		t.Errorf("grafana: %s/iggy-connectors.json is %q, want %s", dashboards.Providers[0].Options.Path, host, dashboardFile)
	}
}
