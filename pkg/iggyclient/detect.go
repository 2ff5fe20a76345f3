package iggyclient

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
)

// DetectTimeout bounds one protocol detection: connecting, asking in 0.9 and, failing that,
// asking in 0.8.
const DetectTimeout = 2 * time.Second

// ErrUnknownProtocol: the server accepted the connection but answered neither protocol.
var ErrUnknownProtocol = errors.New("the server answered neither the Iggy 0.9 nor the Iggy 0.8 protocol")

// unreachableError marks a detection that could not reach the server at all; Dial retries it.
type unreachableError struct{ err error }

func (e unreachableError) Error() string { return e.err.Error() }
func (e unreachableError) Unwrap() error { return e.err }

// detectWithRetry detects the protocol, retrying with backoff while the server is unreachable
// (as Dial does for a fixed protocol) until ctx ends.
func detectWithRetry(ctx context.Context, o api.Options) (string, error) {
	tlsConfig, err := o.TLSConfig()
	if err != nil {
		return "", err
	}
	retry := o.ReconnectBackoff()
	var lastErr error
	for attempt := 1; ; attempt++ {
		p, err := detect(ctx, o.Address, tlsConfig)
		var unreachable unreachableError
		if !errors.As(err, &unreachable) {
			return p, err
		}
		// A dial cut short by the caller's deadline says nothing about the server: the error
		// names the last real failure.
		if lastErr == nil || ctx.Err() == nil {
			lastErr = err
		}
		err = lastErr
		o.Logger.Warn("iggy server unreachable, retrying", "address", o.Address, "attempt", attempt, "error", err)
		if werr := retry.Wait(ctx); werr != nil {
			return "", fmt.Errorf("%w (after %d attempts, last: %w)", werr, attempt, err)
		}
	}
}

// detect asks the server at address which protocol it speaks, within DetectTimeout. It first
// sends a 0.9 Ping request (iggy-protocol-0.9.md §5.2: allowed before login): a 0.9 server
// answers with a 256-byte reply header; a 0.8 server reads the zero checksum as a length below
// 4 and answers status 3 (InvalidCommand) in its 8-byte reply header. When that first answer is
// neither, a 0.8 Ping on a fresh connection decides (a 0.9 server waits for 256 bytes and stays
// silent to it).
func detect(ctx context.Context, address string, tlsConfig *tls.Config) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, DetectTimeout)
	defer cancel()
	firstCtx, cancelFirst := context.WithTimeout(ctx, DetectTimeout/2)
	first, err := ask(firstCtx, address, tlsConfig, ping09(), answered09or08)
	cancelFirst()
	switch {
	case err != nil && !errors.Is(err, errNoAnswer):
		return "", err
	case looksLike09Reply(first):
		return api.Protocol09, nil
	case len(first) >= 8 && binary.LittleEndian.Uint32(first) != 0 && binary.LittleEndian.Uint32(first[4:]) == 0:
		return api.Protocol08, nil
	}
	second, err := ask(ctx, address, tlsConfig, ping08, func(b []byte) bool { return len(b) >= 8 })
	switch {
	case err != nil && !errors.Is(err, errNoAnswer):
		return "", err
	case len(second) >= 8 && binary.LittleEndian.Uint32(second) == 0 && binary.LittleEndian.Uint32(second[4:]) == 0:
		return api.Protocol08, nil
	}
	return "", fmt.Errorf("%w within %s (first answer %d bytes, second %d bytes)", ErrUnknownProtocol, DetectTimeout, len(first), len(second))
}

// errNoAnswer: the server closed the connection or stayed silent before a full answer.
var errNoAnswer = errors.New("no answer")

// ask sends req on a fresh connection and reads until enough(what arrived) or ctx ends. What
// arrived before a close or the deadline is returned with errNoAnswer; a failure to connect is
// errUnreachable, a TLS certificate problem is returned as it is (retrying cannot cure it).
func ask(ctx context.Context, address string, tlsConfig *tls.Config, req []byte, enough func([]byte) bool) ([]byte, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, unreachableError{err}
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if tlsConfig != nil {
		tc := tls.Client(conn, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			var certErr *tls.CertificateVerificationError
			var unknownAuth x509.UnknownAuthorityError
			var hostErr x509.HostnameError
			if errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) {
				return nil, fmt.Errorf("TLS handshake with %s: %w", address, err)
			}
			return nil, unreachableError{fmt.Errorf("TLS handshake with %s: %w", address, err)}
		}
		conn = tc
	}
	if _, err := conn.Write(req); err != nil {
		return nil, fmt.Errorf("%w: %w", errNoAnswer, err)
	}
	buf := make([]byte, 0, 256)
	for !enough(buf) {
		n, err := conn.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, fmt.Errorf("%w: %w", errNoAnswer, err)
		}
	}
	return buf, nil
}

// answered09or08 tells when the answer to ping09 is complete: a 0.9 reply header is 256 bytes
// (its first 16, the unsealed checksum, are zero); a 0.8 error reply is 8 bytes, a non-zero
// status and a zero length (errors carry no payload).
func answered09or08(b []byte) bool {
	return len(b) >= 256 || (len(b) >= 8 && binary.LittleEndian.Uint32(b) != 0)
}

// ping08 is a 0.8 Ping: length 4, code 1 (iggy-protocol.md §1).
var ping08 = []byte{4, 0, 0, 0, 1, 0, 0, 0}

// ping09 is a 0.9 Ping request header before login: size 256, frame type 5 (request), a random
// non-zero client id, request 1, operation 2 (NonReplicated) with command code 1.
func ping09() []byte {
	b := make([]byte, 256)
	binary.LittleEndian.PutUint32(b[48:], 256)
	b[60] = 5
	_, _ = rand.Read(b[128:144])
	b[128] |= 1
	binary.LittleEndian.PutUint64(b[168:], 1)
	b[176] = 2
	binary.LittleEndian.PutUint32(b[196:], 1)
	return b
}

// looksLike09Reply: a whole 256-byte header of type reply (8) or eviction (13) sized 256 or more.
func looksLike09Reply(b []byte) bool {
	return len(b) >= 256 && (b[60] == 8 || b[60] == 13) && binary.LittleEndian.Uint32(b[48:]) >= 256
}
