package fleet_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/fleet"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// startTLSRunner starts a real runner of a null sink serving its endpoint over TLS with a
// certificate for hosts, issued by a CA of its own; it returns the runner's port and that CA's file.
func startTLSRunner(t *testing.T, broker *devbroker.Server, key string, hosts ...string) (uint16, string) {
	t.Helper()
	cert := testkit.WriteTLSCert(t, t.TempDir(), hosts...)
	cfg := fmt.Sprintf("type = \"sink\"\nkey = %q\nenabled = true\nversion = 1\nname = \"sink %s\"\npath = %q\n\n[[streams]]\nstream = \"demo\"\ntopics = [\"events\"]\nschema = \"json\"\n\n[plugin_config]\n",
		key, key, testkit.PluginPath(t, "null_sink"))
	p := testkit.StartRunner(t, []string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr(), "IGGY_CONNECTORS_STATE_PATH=" + t.TempDir(),
		"IGGY_CONNECTORS_HTTP_ADDRESS=127.0.0.1:0", "IGGY_CONNECTORS_HTTP_API_KEY=runner-key",
		"IGGY_CONNECTORS_HTTP_TLS_ENABLED=true", "IGGY_CONNECTORS_HTTP_TLS_CERT_FILE=" + cert.CertFile,
		"IGGY_CONNECTORS_HTTP_TLS_KEY_FILE=" + cert.KeyFile,
		"IGGY_CONNECTOR_CONFIG=" + cfg,
	})
	_, port, err := net.SplitHostPort(p.WaitTCPEndpoint(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	return uint16(n), cert.CAFile
}

// Runners serving TLS are reached over https with fleet.scheme, their certificate verified: static
// entries without a scheme and DNS-found runners (SRV and A names) take the scheme; the CA comes
// from fleet.ca_file and the name from fleet.server_name when the certificate names no IP
// address. A runner whose certificate does not verify (no CA given, another name, plain http to a
// TLS endpoint) is never listed, so the runner key never goes to it.
func TestTLSRunners(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	ipPort, ipCA := startTLSRunner(t, broker, "by-ip", "127.0.0.1")
	namePort, nameCA := startTLSRunner(t, broker, "by-name", "runner.fleet.test")
	dnsSrv := testkit.StartDNS(t)
	dnsSrv.SetIPs("r.fleet.test", net.IPv4(127, 0, 0, 1))
	dnsSrv.SetSRV("_https._tcp.fleet.test", []*net.SRV{{Target: "r.fleet.test", Port: ipPort}})
	ip := "127.0.0.1:" + strconv.Itoa(int(ipPort))
	named := "127.0.0.1:" + strconv.Itoa(int(namePort))

	cases := []struct {
		name    string
		opts    fleet.Options
		want    string // the endpoint listed with the runner's key, "" for none
		wantErr string // in the logged reason when none is listed
	}{
		{"static entry, https, the CA", fleet.Options{Runners: []string{ip}, Scheme: "https", CAFile: ipCA}, "https://" + ip, ""},
		{"SRV name, https, the CA", fleet.Options{DNS: []string{"_https._tcp.fleet.test"}, Scheme: "https", CAFile: ipCA}, "https://" + ip, ""},
		{"A name, https, the CA", fleet.Options{DNS: []string{"r.fleet.test:" + strconv.Itoa(int(ipPort))}, Scheme: "https", CAFile: ipCA}, "https://" + ip, ""},
		{"server name", fleet.Options{Runners: []string{named}, Scheme: "https", CAFile: nameCA, ServerName: "runner.fleet.test"}, "https://" + named, ""},
		{"an explicit https:// entry under scheme http", fleet.Options{Runners: []string{"https://" + ip}, CAFile: ipCA}, "https://" + ip, ""},
		{"no CA: the system's roots refuse it", fleet.Options{Runners: []string{ip}, Scheme: "https"}, "", "certificate signed by unknown authority"},
		{"another CA", fleet.Options{Runners: []string{ip}, Scheme: "https", CAFile: nameCA}, "", "certificate"},
		{"the certificate names no IP address", fleet.Options{Runners: []string{named}, Scheme: "https", CAFile: nameCA}, "", "certificate"},
		{"another server name", fleet.Options{Runners: []string{named}, Scheme: "https", CAFile: nameCA, ServerName: "other.fleet.test"}, "", "certificate"},
		{"plain http to a TLS runner", fleet.Options{Runners: []string{ip}}, "", "400"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logs := &testkit.LogBuffer{} // written from the refresh's goroutines
			o := c.opts
			o.Refresh, o.RunnerAPIKey, o.Resolver, o.Logger = time.Second, "runner-key", dnsSrv.Resolver(), slog.New(slog.NewTextHandler(logs, nil))
			o.Timeout = 5 * time.Second // generous: only an unverified certificate may fail it
			f, err := fleet.New(o)
			if err != nil {
				t.Fatal(err)
			}
			f.Refresh(context.Background())
			s := f.Snapshot()
			if c.want == "" {
				if len(s.Replicas) != 0 || s.Pending != 1 || !strings.Contains(logs.String(), c.wantErr) {
					t.Fatalf("snapshot %+v; want the runner not listed, the log saying %q:\n%s", s, c.wantErr, logs)
				}
				return
			}
			if len(s.Replicas) != 1 || s.Replicas[0].Endpoint != c.want || !s.Replicas[0].Reachable() {
				t.Fatalf("snapshot %+v, want %s listed:\n%s", s, c.want, logs)
			}
		})
	}
}

// A fleet.ca_file that is missing or holds no certificate stops New, naming the key.
func TestBadCAFileIsRefused(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{filepath.Join(t.TempDir(), "missing.pem"), empty} {
		_, err := fleet.New(fleet.Options{Runners: []string{"127.0.0.1:1"}, Refresh: time.Second, Scheme: "https", CAFile: file})
		if err == nil || !strings.Contains(err.Error(), "fleet.ca_file") {
			t.Errorf("%s: %v, want an error naming fleet.ca_file", file, err)
		}
	}
}
