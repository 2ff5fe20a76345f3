package devbroker_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
)

// writeSelfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func writeSelfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "iggy-dev-server test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestTLS(t *testing.T) {
	certFile, keyFile := writeSelfSigned(t)
	srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0", TLSCertFile: certFile, TLSKeyFile: keyFile})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatalf("start with TLS: %v", err)
	}
	t.Cleanup(srv.Stop)

	cli, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(srv.Addr()), tcp.WithTLS(tcp.WithTLSCAFile(certFile))))
	if err != nil {
		t.Fatalf("TLS connect with the certificate as CA: %v", err)
	}
	defer cli.Close()
	if _, err := cli.LoginUser("iggy", "iggy"); err != nil {
		t.Fatalf("login over TLS: %v", err)
	}
	if _, err := cli.CreateStream("over-tls"); err != nil {
		t.Fatalf("create stream over TLS: %v", err)
	}
}

func TestTLSWithMissingFilesFailsToStart(t *testing.T) {
	srv := devbroker.New(devbroker.Config{Address: "127.0.0.1:0", TLSCertFile: "/nonexistent/cert.pem", TLSKeyFile: "/nonexistent/key.pem"})
	err := srv.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/cert.pem") {
		t.Fatalf("Start error = %v, want one naming the certificate file", err)
	}
}
