package runner_test

import (
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The runner logs in with a password, a personal access token (inline or file:), over TLS with a CA
// file and domain; every way moves messages. Wrong credentials stop it with exit code 1.
func TestIggyConnectionModes(t *testing.T) {
	cert := testkit.WriteTLSCert(t, t.TempDir(), "localhost", "127.0.0.1")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withTLS := testkit.BrokerOption(func(c *devbroker.Config) { c.TLSCertFile, c.TLSKeyFile = cert.CertFile, cert.KeyFile })
	cases := []struct {
		name string
		opts []testkit.BrokerOption
		env  []string
	}{
		{"password", nil, nil},
		{"token", []testkit.BrokerOption{testkit.WithToken("tok-inline")},
			// A wrong password proves the token is what logs in.
			[]string{"IGGY_CONNECTORS_IGGY_PASSWORD=wrong", "IGGY_CONNECTORS_IGGY_TOKEN=tok-inline"}},
		{"token file", []testkit.BrokerOption{testkit.WithToken("tok-from-file")},
			[]string{"IGGY_CONNECTORS_IGGY_PASSWORD=wrong", "IGGY_CONNECTORS_IGGY_TOKEN=file:" + tokenFile}},
		{"tls", []testkit.BrokerOption{withTLS},
			[]string{"IGGY_CONNECTORS_IGGY_TLS_ENABLED=true", "IGGY_CONNECTORS_IGGY_TLS_CA_FILE=" + cert.CAFile, "IGGY_CONNECTORS_IGGY_TLS_DOMAIN=localhost"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := testkit.StartBroker(t, append(c.opts, testkit.WithStream("demo", map[string]uint32{"events": 1}))...)
			env := append(withConfig(baseEnv(srv, t.TempDir()), sourceTOML("auth", testkit.PluginPath(t, "fault"), "demo", "events", "",
				"messages_per_batch = 5\nmax_messages = 20\ninterval_ms = 2")), c.env...)
			p := testkit.StartRunner(t, env)
			p.WaitStatus(t, "running", waitLong)
			p.WaitUntil(t, waitLong, "20 messages sent", func() bool { return testkit.OrZero(p.Stats(t).MessagesSent) == 20 })
		})
	}

	t.Run("wrong password", func(t *testing.T) {
		srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
		env := append(withConfig(baseEnv(srv, t.TempDir()), sourceTOML("auth", testkit.PluginPath(t, "fault"), "demo", "events", "", "")),
			"IGGY_CONNECTORS_IGGY_PASSWORD=not-the-password")
		expectExit(t, testkit.StartRunner(t, env), 1, "unauthorized")
	})
}

// With http.tls enabled the endpoint speaks HTTPS only, with the configured certificate.
func TestEndpointTLS(t *testing.T) {
	cert := testkit.WriteTLSCert(t, t.TempDir(), "127.0.0.1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	p := testkit.StartRunner(t, append(withConfig(baseEnv(srv, t.TempDir()), sinkTOML("tls", testkit.PluginPath(t, "null_sink"), "demo", "events", "", "")),
		"IGGY_CONNECTORS_HTTP_ADDRESS="+addr, "IGGY_CONNECTORS_HTTP_TLS_ENABLED=true",
		"IGGY_CONNECTORS_HTTP_TLS_CERT_FILE="+cert.CertFile, "IGGY_CONNECTORS_HTTP_TLS_KEY_FILE="+cert.KeyFile))
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.CAPool}}}
	p.WaitUntil(t, waitLong, "an HTTPS answer on "+addr, func() bool {
		resp, err := client.Get("https://" + addr + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if resp, err := http.Get("http://" + addr + "/health"); err == nil && resp.StatusCode == http.StatusOK {
		resp.Body.Close()
		t.Fatal("plain HTTP was answered although TLS is enabled")
	}
}
