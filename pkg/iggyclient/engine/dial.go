package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
)

// dialNode opens a connection to addr (TCP, then the TLS handshake when enabled) and logs in.
// A certificate the client refuses is final; any other failure is a loss worth a retry.
func (e *Engine[C]) dialNode(ctx context.Context, addr string) (C, error) {
	var zero C
	d := net.Dialer{Timeout: dialTimeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctxErr := e.closing.Stopped(ctx); ctxErr != nil {
			return zero, ctxErr
		}
		return zero, err
	}
	if e.tlsConfig != nil {
		tc := tls.Client(nc, e.tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			var certErr *tls.CertificateVerificationError
			var unknownAuth x509.UnknownAuthorityError
			var hostErr x509.HostnameError
			if errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) {
				return zero, fmt.Errorf("TLS handshake with %s: %w", addr, err)
			}
			return zero, fmt.Errorf("TLS handshake with %s: %w: %w", addr, ErrMalformed, err)
		}
		nc = tc
	}
	e.seq++
	l := newLink(nc, addr, e.seq, e.opts.RequestTimeout)
	stop := l.watch(ctx)
	cn, err := e.proto.Login(ctx, l)
	stop()
	if err != nil {
		l.close()
		return zero, err
	}
	return cn, nil
}

// NodeAt is a roster node at ip and tcp port.
func NodeAt(ip []byte, tcpPort uint16, leader, healthy bool) Node {
	return Node{Addr: net.JoinHostPort(string(ip), fmt.Sprint(tcpPort)), Leader: leader, Healthy: healthy}
}
