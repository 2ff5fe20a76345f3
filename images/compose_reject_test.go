package images_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rejectBase is a small, correct compose project: one runner with an inline sink config. Each case
// of TestComposeCheckerRejects breaks one thing in it.
const rejectBase = `name: reject
services:
  iggy:
    image: apache/iggy:0.8.0
    environment:
      IGGY_TCP_ADDRESS: 0.0.0.0:8090
    healthcheck:
      test: ["CMD", "iggy", "--tcp-server-address", "127.0.0.1:8090", "ping"]
  iggy-init:
    image: apache/iggy:0.8.0
    depends_on:
      iggy: {condition: service_healthy}
    entrypoint: ["/bin/sh", "-ec"]
    command:
      - |
        iggy stream create demo_stream
        iggy topic create demo_stream demo_topic 1 none
  sink:
    build:
      context: REPO
      dockerfile: images/runner/Dockerfile
      target: runner-with-examples
    depends_on:
      iggy-init: {condition: service_completed_successfully}
    environment:
      IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090
      IGGY_CONNECTORS_HTTP_API_KEY: ${IGGY_CONNECTORS_HTTP_API_KEY:?required}
      IGGY_CONNECTORS_SINK_STDOUT_PLUGIN_CONFIG_PRINT_PAYLOAD: "true"
      IGGY_CONNECTOR_CONFIG: |
        type = "sink"
        key = "stdout"
        enabled = true
        version = 1
        name = "Stdout sink"
        path = "/opt/iggy/connectors/libiggy_connector_stdout_sink"
        [[streams]]
        stream = "demo_stream"
        topics = ["demo_topic"]
        schema = "json"
    volumes:
      - ./present.txt:/etc/present.txt:ro
    ports:
      - "127.0.0.1:8082:8081"
    healthcheck:
      test: ["CMD", "curl", "-fsS", "http://127.0.0.1:8081/health"]
    stop_grace_period: 15s
`

func TestComposeCheckerRejects(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range []struct {
		name, old, new string
		want           error  // matched with errors.Is, when set
		text           string // else matched in the error text
	}{
		{name: "valid", old: "", new: ""},
		{name: "unknown variable", old: "IGGY_CONNECTORS_IGGY_ADDRESS:", new: "IGGY_CONNECTORS_HTTP_ADRESS: x\n      IGGY_CONNECTORS_IGGY_ADDRESS:", want: errUnknownVariable},
		{name: "override of another connector", old: "SINK_STDOUT_PLUGIN", new: "SINK_STDIN_PLUGIN", want: errUnknownVariable},
		{name: "override of an unknown field", old: "SINK_STDOUT_PLUGIN_CONFIG_PRINT_PAYLOAD", new: "SINK_STDOUT_BATCH_SIZE", want: errUnknownVariable},
		{name: "bad runner value", old: `IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090`, new: "IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090\n      IGGY_CONNECTOR_CONSUME_RETRIES: \"-1\"", text: "IGGY_CONNECTOR_CONSUME_RETRIES"},
		{name: "invalid connector config", old: `schema = "json"`, new: `schema = "xml"`, text: "runner settings"},
		{name: "published port differs", old: `"127.0.0.1:8082:8081"`, new: `"127.0.0.1:8082:9000"`, want: errPort},
		{name: "published on every interface", old: `"127.0.0.1:8082:8081"`, new: `"8082:8081"`, want: errPublished},
		{name: "no API key", old: "IGGY_CONNECTORS_HTTP_API_KEY: ${IGGY_CONNECTORS_HTTP_API_KEY:?required}", new: "IGGY_CONNECTORS_HTTP_API_KEY: ${NOT_SET_HERE:-}", want: errOpenAPI}, // interpolates to nothing,
		{name: "key check opted out", old: "IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090", new: "IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090\n      IGGY_CONNECTORS_HTTP_ALLOW_UNAUTHENTICATED: \"true\"", want: errOpenAPI},
		{name: "loopback address published", old: `IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090`, new: "IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090\n      IGGY_CONNECTORS_HTTP_ADDRESS: 127.0.0.1:8081", want: errPort},
		{name: "health check on another port", old: "http://127.0.0.1:8081/health", new: "http://127.0.0.1:8080/health", want: errHealth},
		{name: "health check on another path", old: "http://127.0.0.1:8081/health", new: "http://127.0.0.1:8081/stats", want: errHealth},
		{name: "missing volume file", old: "./present.txt", new: "./absent.txt", want: errMissingFile},
		{name: "missing Dockerfile", old: "images/runner/Dockerfile", new: "images/runner/Containerfile", want: errMissingFile},
		{name: "plugin not in the image", old: "libiggy_connector_stdout_sink", new: "libiggy_connector_postgres_sink", want: errPlugin},
		{name: "topic not created", old: `topics = ["demo_topic"]`, new: `topics = ["other_topic"]`, want: errInit},
		{name: "server 0.7", old: "image: apache/iggy:0.8.0\n    environment", new: "image: apache/iggy:0.7.0\n    environment", want: errIggyServer},
		{name: "connectors pinned to 0.9, server 0.8", old: "IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090", new: "IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090\n      IGGY_CONNECTORS_IGGY_PROTOCOL: \"0.9\"", want: errIggyServer},
		{name: "server 0.9, connectors detecting", old: "image: apache/iggy:0.8.0\n    environment", new: "image: apache/iggy:0.9.0-edge.5\n    environment"},
		{name: "wrong server port", old: "IGGY_CONNECTORS_IGGY_ADDRESS: iggy:8090", new: "IGGY_CONNECTORS_IGGY_ADDRESS: iggy:9090", want: errIggyServer},
		{name: "server on loopback", old: "IGGY_TCP_ADDRESS: 0.0.0.0:8090", new: "IGGY_TCP_ADDRESS: 127.0.0.1:8090", want: errIggyServer},
		{name: "stop grace shorter than the drain", old: "stop_grace_period: 15s", new: "stop_grace_period: 5s", want: errStopGrace},
		{name: "default stop grace equals the drain", old: "stop_grace_period: 15s", new: "", want: errStopGrace},
		{name: "no wait for init", old: "iggy-init: {condition: service_completed_successfully}", new: "iggy: {condition: service_started}", want: errDependency},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.ReplaceAll(rejectBase, "REPO", root)
			if !strings.Contains(text, tc.old) {
				t.Fatalf("the base project does not contain %q", tc.old)
			}
			text = strings.Replace(text, tc.old, tc.new, 1)
			dir := t.TempDir()
			for name, content := range map[string]string{"compose.yaml": text, "present.txt": "x"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := loadCompose(t.Context(), filepath.Join(dir, "compose.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			errs := checkCompose(t.Context(), root, p)
			if tc.want == nil && tc.text == "" {
				reportErrors(t, errs)
				return
			}
			found := slices.ContainsFunc(errs, func(e error) bool {
				if tc.want != nil {
					return errors.Is(e, tc.want)
				}
				return strings.Contains(e.Error(), tc.text)
			})
			if !found {
				t.Fatalf("want an error matching %v%s, got %v", tc.want, tc.text, errs)
			}
		})
	}
}
