package devbroker_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

func TestTLS(t *testing.T) {
	cert := testkit.WriteTLSCert(t, t.TempDir(), "127.0.0.1")
	srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0", TLSCertFile: cert.CertFile, TLSKeyFile: cert.KeyFile})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatalf("start with TLS: %v", err)
	}
	t.Cleanup(srv.Stop)

	cli, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(srv.Addr()), tcp.WithTLS(tcp.WithTLSCAFile(cert.CAFile))))
	if err != nil {
		t.Fatalf("TLS connect trusting the test CA: %v", err)
	}
	defer cli.Close()
	if _, err := cli.LoginUser("iggy", "iggy"); err != nil {
		t.Fatalf("login over TLS: %v", err)
	}
	if _, err := cli.CreateStream("over-tls"); err != nil {
		t.Fatalf("create stream over TLS: %v", err)
	}
}

func TestTLSOver09(t *testing.T) {
	cert := testkit.WriteTLSCert(t, t.TempDir(), "127.0.0.1")
	srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0", TLSCertFile: cert.CertFile, TLSKeyFile: cert.KeyFile})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatalf("start with TLS: %v", err)
	}
	t.Cleanup(srv.Stop)
	pem, err := os.ReadFile(cert.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	conn, err := tls.Dial("tcp", srv.Addr(), &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS dial: %v", err)
	}
	c := testkit.NewRaw09(t, conn)
	c.Login("iggy", "iggy")
	if r := c.Do(wire09.OpCreateStream, 0, []byte{8, 'o', 'v', 'e', 'r', '-', 't', 'l', 's'}); r.Rejection(t) != 0 {
		t.Fatalf("create stream over TLS: %v", r.Rejection(t))
	}
}

func TestTLSWithMissingFilesFailsToStart(t *testing.T) {
	srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0", TLSCertFile: "/nonexistent/cert.pem", TLSKeyFile: "/nonexistent/key.pem"})
	err := srv.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/cert.pem") {
		t.Fatalf("Start error = %v, want one naming the certificate file", err)
	}
}
