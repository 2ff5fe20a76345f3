package images_test

import (
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHealthcheckScript runs the images' HEALTHCHECK probe (images/healthcheck.sh, with the
// system's sh and curl, as in the image) against real HTTP servers: it must follow
// IGGY_CONNECTORS_HTTP_ADDRESS and fail when /health does not answer 200.
func TestHealthcheckScript(t *testing.T) {
	script := filepath.Join(repoRoot(t), "images", "healthcheck.sh")
	for _, tool := range []string{"sh", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the probe as the image does: %v", tool, err)
		}
	}
	healthy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"status":"healthy"}`))
	})
	failing := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})

	plain := httptest.NewServer(healthy)
	defer plain.Close()
	sick := httptest.NewServer(failing)
	defer sick.Close()
	secure := httptest.NewUnstartedServer(healthy)
	secure.Config.ErrorLog = log.New(io.Discard, "", 0) // the plain-HTTP case's handshake error is expected
	secure.StartTLS()
	defer secure.Close()

	sock := filepath.Join(t.TempDir(), "runner.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	overSocket := &httptest.Server{Listener: ln, Config: &http.Server{Handler: healthy}}
	overSocket.Start()
	defer overSocket.Close()

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	hostPort := func(s *httptest.Server) string {
		return strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://")
	}
	port := func(s *httptest.Server) string { _, p, _ := net.SplitHostPort(hostPort(s)); return p }

	for _, tc := range []struct {
		name    string
		env     []string
		healthy bool
	}{
		{"loopback address", []string{"IGGY_CONNECTORS_HTTP_ADDRESS=" + hostPort(plain)}, true},
		{"wildcard address probes loopback", []string{"IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:" + port(plain)}, true},
		{"empty host probes loopback", []string{"IGGY_CONNECTORS_HTTP_ADDRESS=:" + port(plain)}, true},
		{"unix socket", []string{"IGGY_CONNECTORS_HTTP_ADDRESS=unix:" + sock}, true},
		{"tls", []string{"IGGY_CONNECTORS_HTTP_ADDRESS=" + hostPort(secure), "IGGY_CONNECTORS_HTTP_TLS_ENABLED=true"}, true},
		{"tls server probed without tls", []string{"IGGY_CONNECTORS_HTTP_ADDRESS=" + hostPort(secure)}, false},
		{"503", []string{"IGGY_CONNECTORS_HTTP_ADDRESS=" + hostPort(sick)}, false},
		{"nothing listening", []string{"IGGY_CONNECTORS_HTTP_ADDRESS=" + closedAddr}, false},
		{"missing socket", []string{"IGGY_CONNECTORS_HTTP_ADDRESS=unix:" + sock + ".gone"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sh", script)
			cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, tc.env...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			switch {
			case tc.healthy && err != nil:
				t.Fatalf("probe failed: %v\n%s", err, out)
			case !tc.healthy && err == nil:
				t.Fatalf("probe passed, want exit 1\n%s", out)
			case !tc.healthy && (!errors.As(err, &exit) || exit.ExitCode() != 1):
				t.Fatalf("probe: %v, want exit status 1 (HEALTHCHECK reserves other codes)\n%s", err, out)
			}
		})
	}
}
