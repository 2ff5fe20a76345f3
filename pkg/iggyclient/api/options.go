package api

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/backoff"
)

// The values of Options.Protocol ([iggy] protocol in the runtime config).
const (
	ProtocolAuto = "auto" // detect at connect: the default
	Protocol08   = "0.8"  // Iggy 0.8.x: length-prefixed frames, the official Go SDK v0.8.0
	Protocol09   = "0.9"  // Iggy 0.9.x: 256-byte VSR headers, sessions, checksummed batches
)

// Defaults Normalize fills in.
const (
	DefaultReconnectMin = 100 * time.Millisecond
	DefaultReconnectMax = time.Second // as Kafka clients' reconnect.backoff.max.ms
	DefaultHeartbeat    = 5 * time.Second
	// DefaultRequestTimeout is how long a request may wait for its answer: both upstream SDKs
	// wait 30 s.
	DefaultRequestTimeout = 30 * time.Second
)

// ParseProtocol checks an [iggy] protocol value; "" is ProtocolAuto.
func ParseProtocol(s string) (string, error) {
	switch s {
	case "", ProtocolAuto:
		return ProtocolAuto, nil
	case Protocol08, Protocol09:
		return s, nil
	}
	return "", fmt.Errorf("iggy protocol %q: want %q, %q or %q", s, ProtocolAuto, Protocol08, Protocol09)
}

// ReconnectBackoff is the pause sequence between reconnect attempts: from ReconnectMin doubling
// up to ReconnectMax, jittered so a fleet does not reconnect in step.
func (o *Options) ReconnectBackoff() *backoff.Backoff {
	return backoff.New(backoff.Policy{Min: o.ReconnectMin, Max: o.ReconnectMax, Jitter: backoff.DefaultJitter})
}

// Normalize checks the options and fills in the defaults. Every implementation's Dial calls it.
func (o *Options) Normalize() error {
	if o.Address == "" {
		return errors.New("iggy options: address is empty")
	}
	if _, _, err := net.SplitHostPort(o.Address); err != nil {
		return fmt.Errorf("iggy options: address %q: %w", o.Address, err)
	}
	p, err := ParseProtocol(o.Protocol)
	if err != nil {
		return fmt.Errorf("iggy options: %w", err)
	}
	o.Protocol = p
	if o.Token == "" && (o.Username == "" || o.Password == "") {
		return errors.New("iggy options: missing credentials: set a token, or both username and password")
	}
	if o.ReconnectMin <= 0 {
		o.ReconnectMin = DefaultReconnectMin
	}
	if o.ReconnectMax <= 0 {
		o.ReconnectMax = DefaultReconnectMax
	}
	if o.ReconnectMax < o.ReconnectMin {
		return fmt.Errorf("iggy options: reconnect max %s is below reconnect min %s", o.ReconnectMax, o.ReconnectMin)
	}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = DefaultHeartbeat
	}
	switch {
	case o.RequestTimeout < 0:
		return fmt.Errorf("iggy options: request timeout %s is negative", o.RequestTimeout)
	case o.RequestTimeout == 0:
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// TLSConfig is the client TLS configuration the options describe (nil when TLS is off): the CA
// file's pool (system roots when empty) and TLSDomain, or the address's host, as server name. A
// missing or PEM-less CA file is an error here rather than a handshake failure later.
func (o *Options) TLSConfig() (*tls.Config, error) {
	if !o.TLSEnabled {
		return nil, nil
	}
	serverName := o.TLSDomain
	if serverName == "" {
		host, _, _ := net.SplitHostPort(o.Address)
		serverName = host
	}
	cfg := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}
	if o.TLSCAFile != "" {
		pem, err := os.ReadFile(o.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("iggy options: read TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("iggy options: TLS CA file %q holds no PEM certificate", o.TLSCAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
