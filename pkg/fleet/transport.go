package fleet

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
)

// runnerTLS is the TLS configuration of https runner endpoints: certificates always verified,
// against the CAs of caFile (PEM; "" is the system's roots) and for serverName ("" is each
// endpoint's host). A file that cannot be read or holds no certificate is an error naming
// fleet.ca_file.
func runnerTLS(caFile, serverName string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile == "" {
		return c, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("fleet.ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("fleet.ca_file %s: no PEM certificate in it", caFile)
	}
	c.RootCAs = pool
	return c, nil
}

// errRedirect is why a runner's redirect is not followed.
var errRedirect = errors.New("the fleet client follows no redirect: it would carry the runner key to wherever it points")

// refuseRedirect is the fleet client's CheckRedirect: a runner's answer is what it says, never
// a request sent on to the Location (with the runner key, which the client copies along).
func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return fmt.Errorf("redirect to %s refused: %w", req.URL.Redacted(), errRedirect)
}
