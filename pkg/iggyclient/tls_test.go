package iggyclient_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

func TestTLS(t *testing.T) {
	caFile, certFile, keyFile := writeTestPKI(t, "iggy.test")
	withTLS := testkit.BrokerOption(func(cfg *devbroker.Config) { cfg.TLSCertFile, cfg.TLSKeyFile = certFile, keyFile })
	srv := testkit.StartBroker(t, withTLS, testkit.WithStream("demo", map[string]uint32{"orders": 1}))

	tests := []struct {
		name    string
		caFile  string
		domain  string
		wantErr string // "" = must work
	}{
		{"CA file, server name from the address (IP SAN)", caFile, "", ""},
		{"CA file and domain", caFile, "iggy.test", ""},
		{"wrong domain", caFile, "other.test", "certificate is valid for iggy.test, not other.test"},
		{"system roots do not know the CA", "", "", "certificate signed by unknown authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := iggyclient.Dial(ctx, iggyclient.Options{
				Address: srv.Addr(), Username: "iggy", Password: "iggy",
				TLSEnabled: true, TLSCAFile: tt.caFile, TLSDomain: tt.domain,
				Logger: slog.New(slog.DiscardHandler),
			})
			if tt.wantErr != "" {
				if err == nil {
					c.Close()
					t.Fatal("Dial succeeded")
				}
				if !strings.Contains(err.Error(), tt.wantErr) || ctx.Err() != nil {
					t.Fatalf("error %q (deadline hit: %v), want an immediate one mentioning %q", err, ctx.Err() != nil, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.TopicInfo(ctx, "demo", "orders"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// writeTestPKI writes a CA and a server certificate for dnsName and
// 127.0.0.1, and returns the PEM file paths.
func writeTestPKI(t *testing.T, dnsName string) (caFile, certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{dnsName}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, blockType string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", srvDER), write("server-key.pem", "EC PRIVATE KEY", keyDER)
}
