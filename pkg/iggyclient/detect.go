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
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
	"github.com/iggy-connectors-go/runtime/pkg/wire08"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
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
	retry := engine.NewRetry(&o, nil)
	for {
		if err := retry.Wait(ctx); err != nil {
			return "", err
		}
		p, err := detect(ctx, o.Address, tlsConfig)
		var unreachable unreachableError
		if !errors.As(err, &unreachable) {
			return p, err
		}
		retry.Unreachable(ctx, err)
	}
}

// detect asks the server at address which protocol it speaks, within DetectTimeout. It first
// sends a 0.9 Ping request (docs/iggy-protocol-0.9.md §5.2: allowed before login): a 0.9 server
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
	case len(first) >= wire08.ReplyHeadSize && error08(first):
		return api.Protocol08, nil // InvalidCommand to what reads as a frame without extent
	}
	second, err := ask(ctx, address, tlsConfig, ping08, func(b []byte) bool { return len(b) >= wire08.ReplyHeadSize })
	switch {
	case err != nil && !errors.Is(err, errNoAnswer):
		return "", err
	case len(second) >= wire08.ReplyHeadSize:
		if status, length := wire08.DecodeReplyHead(second); status == iggywire.StatusOK && length == 0 {
			return api.Protocol08, nil // Ping's empty OK
		}
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
// (its first 16, the unsealed checksum, are zero); a 0.8 error reply is a reply head alone, a
// non-zero status (errors carry no payload).
func answered09or08(b []byte) bool {
	return len(b) >= wire09.HeaderSize || (len(b) >= wire08.ReplyHeadSize && wire08Status(b) != iggywire.StatusOK)
}

// wire08Status is the status of a 0.8 reply head.
func wire08Status(b []byte) iggywire.Status {
	status, _ := wire08.DecodeReplyHead(b)
	return status
}

// error08 reports a 0.8 error reply: a non-zero status without a payload.
func error08(b []byte) bool {
	status, length := wire08.DecodeReplyHead(b)
	return status != iggywire.StatusOK && length == 0
}

// ping08 is a 0.8 Ping.
var ping08 = wire08.AppendRequest(nil, wire08.CmdPing, nil)

// ping09 is a 0.9 Ping request header before login: a random non-zero client id, request 1,
// operation NonReplicated with the Ping command.
func ping09() []byte {
	var id [16]byte
	_, _ = rand.Read(id[:])
	id[0] |= 1
	return wire09.AppendRequestHeader(nil, &wire09.RequestHeader{Size: wire09.HeaderSize,
		Client:  wire09.U128{Lo: binary.LittleEndian.Uint64(id[:]), Hi: binary.LittleEndian.Uint64(id[8:])},
		Request: 1, Operation: wire09.OpNonReplicated, Code: wire09.CmdPing})
}

// looksLike09Reply: a whole 256-byte header of a reply or an eviction, sized 256 or more.
func looksLike09Reply(b []byte) bool {
	if len(b) < wire09.HeaderSize {
		return false
	}
	t := wire09.FrameTypeOf(b)
	return (t == wire09.FrameReply || t == wire09.FrameEviction) && wire09.FrameSize(b) >= wire09.HeaderSize
}
