package testkit

import (
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
	"testing"
	"time"
)

// TLSCert is a server certificate issued by a throwaway CA, as PEM files, for
// tests of TLS listeners and of clients that verify them.
type TLSCert struct {
	CertFile string         // the server certificate (cert.pem)
	KeyFile  string         // its private key, PKCS#8 (key.pem)
	CAFile   string         // the CA that issued it (ca.pem): what clients trust
	CAPool   *x509.CertPool // the same CA, for a tls.Config's RootCAs
}

// WriteTLSCert writes into dir a fresh CA and a server certificate signed by
// it, valid for hosts (IP addresses or DNS names) from an hour ago to an hour
// from now. Signing by a separate CA, rather than self-signing, makes clients
// verify a real chain, as they would in production.
func WriteTLSCert(tb testing.TB, dir string, hosts ...string) TLSCert {
	tb.Helper()
	notBefore, notAfter := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	caKey := newECKey(tb)
	caTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "iggy-connectors test CA"},
		NotBefore: notBefore, NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatalf("create test CA: %v", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		tb.Fatalf("parse test CA: %v", err)
	}

	serverKey := newECKey(tb)
	serverTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "iggy-connectors test server"},
		NotBefore: notBefore, NotAfter: notAfter,
		// Client authentication too, so tests of mutual TLS can present it.
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, host := range hosts {
		if ip := net.ParseIP(host); ip != nil {
			serverTemplate.IPAddresses = append(serverTemplate.IPAddresses, ip)
		} else {
			serverTemplate.DNSNames = append(serverTemplate.DNSNames, host)
		}
	}
	serverDER, err := x509.CreateCertificate(rand.Reader, serverTemplate, caCert, &serverKey.PublicKey, caKey)
	if err != nil {
		tb.Fatalf("create test server certificate for %v: %v", hosts, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(serverKey)
	if err != nil {
		tb.Fatalf("marshal test server key: %v", err)
	}

	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return TLSCert{
		CertFile: writePEM(tb, filepath.Join(dir, "cert.pem"), "CERTIFICATE", serverDER),
		KeyFile:  writePEM(tb, filepath.Join(dir, "key.pem"), "PRIVATE KEY", keyDER),
		CAFile:   writePEM(tb, filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER),
		CAPool:   pool,
	}
}

func newECKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("generate test key: %v", err)
	}
	return key
}

func writePEM(tb testing.TB, path, blockType string, der []byte) string {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		tb.Fatalf("write %s: %v", path, err)
	}
	return path
}
