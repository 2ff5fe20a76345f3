package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// gRPC status codes (grpc/doc/statuscodes.md) the exporter tells apart.
const (
	codeOK                = 0
	codeCanceled          = 1
	codeUnknown           = 2
	codeDeadlineExceeded  = 4
	codePermissionDenied  = 7
	codeResourceExhausted = 8
	codeAborted           = 10
	codeOutOfRange        = 11
	codeUnimplemented     = 12
	codeInternal          = 13
	codeUnavailable       = 14
	codeDataLoss          = 15
	codeUnauthenticated   = 16
)

var codeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// GRPCStatusError is a failed gRPC call: the status a collector answered
// with, or the one gRPC assigns to a transport failure (UNAVAILABLE for a
// connection that failed, the mapped code of a non-200 HTTP status).
type GRPCStatusError struct {
	Code    int
	Message string
	// RetryDelay is the collector's google.rpc.RetryInfo hint, if it sent
	// one (HasRetryInfo).
	RetryDelay   time.Duration
	HasRetryInfo bool
}

func (e *GRPCStatusError) Error() string {
	name := "code " + strconv.Itoa(e.Code)
	if e.Code >= 0 && e.Code < len(codeNames) {
		name = codeNames[e.Code]
	}
	return fmt.Sprintf("grpc status %s: %s", name, e.Message)
}

// retryable says whether an export failing with e is retried, as the
// OpenTelemetry exporters decide: the transient codes always,
// RESOURCE_EXHAUSTED only when the collector says when to come back.
func (e *GRPCStatusError) retryable() bool {
	switch e.Code {
	case codeCanceled, codeDeadlineExceeded, codeAborted, codeOutOfRange, codeUnavailable, codeDataLoss:
		return true
	case codeResourceExhausted:
		return e.HasRetryInfo
	}
	return false
}

func (e *GRPCStatusError) asAttempt() error {
	if e.retryable() {
		return retryable(e, e.RetryDelay)
	}
	return e
}

// grpcSender calls a collector's Export method (a unary gRPC call) with
// net/http's HTTP/2 client: prior-knowledge h2c for http:// endpoints, HTTP/2
// over TLS (ALPN h2) for https:// ones.
type grpcSender struct{ poster }

// gRPC method paths of the OTLP collector services.
const (
	traceExportPath = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	logsExportPath  = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
)

func newGRPCSender(scheme, host, path, what string, tlsConfig *tls.Config, headers map[string]string, gzip bool) *grpcSender {
	tr := newTransport(tlsConfig)
	var p http.Protocols
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	tr.Protocols = &p
	if scheme == "https" {
		// A proxy is reached with CONNECT, which works for TLS only: h2c to a
		// proxy would be plain HTTP/1 proxying, which gRPC cannot use.
		tr.Proxy = http.ProxyFromEnvironment
	}
	return &grpcSender{poster{url: scheme + "://" + host + path, what: what, headers: headers, gzip: gzip, client: &http.Client{Transport: tr}}}
}

// prefixLen is the gRPC message prefix: a compressed flag and a big-endian
// length, filled in by finish.
func (s *grpcSender) prefixLen() int { return 5 }

func (s *grpcSender) finish(body []byte) ([]byte, error) {
	if s.gzip {
		var err error
		if body, err = gzipped(make([]byte, 5), body[5:]); err != nil {
			return nil, err
		}
		body[0] = 1
	} else {
		body[0] = 0
	}
	binary.BigEndian.PutUint32(body[1:5], uint32(len(body)-5))
	return body, nil
}

// send makes one call with a finished body.
func (s *grpcSender) send(ctx context.Context, body []byte) error {
	ours := []string{"Content-Type", "application/grpc", "Te", "trailers", "User-Agent", userAgent}
	if s.gzip {
		ours = append(ours, "Grpc-Encoding", "gzip")
	}
	if deadline, ok := ctx.Deadline(); ok {
		ours = append(ours, "Grpc-Timeout", grpcTimeout(time.Until(deadline)))
	}
	req, err := s.request(ctx, body, ours...)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return transportFailure(ctx, err).asAttempt()
	}
	defer resp.Body.Close()
	reply, readErr := readBounded(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return (&GRPCStatusError{Code: codeFromHTTP(resp.StatusCode), Message: "HTTP status " + resp.Status}).asAttempt()
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/grpc") {
		return (&GRPCStatusError{Code: codeUnknown, Message: fmt.Sprintf("reply content-type %q is not gRPC", ct)}).asAttempt()
	}
	if readErr != nil {
		return transportFailure(ctx, readErr).asAttempt()
	}
	st := statusOf(resp)
	if st.Code != codeOK {
		return st.asAttempt()
	}
	msg, err := grpcMessage(reply, resp.Header.Get("Grpc-Encoding"))
	if err != nil {
		return &GRPCStatusError{Code: codeInternal, Message: err.Error()}
	}
	return partialSuccess(msg, s.what)
}

// transportFailure is the status of a call that got no complete answer.
func transportFailure(ctx context.Context, err error) *GRPCStatusError {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &GRPCStatusError{Code: codeDeadlineExceeded, Message: err.Error()}
	case ctx.Err() != nil:
		return &GRPCStatusError{Code: codeCanceled, Message: err.Error()}
	}
	return &GRPCStatusError{Code: codeUnavailable, Message: err.Error()}
}

// statusOf reads grpc-status, grpc-message and grpc-status-details-bin from
// the trailers, or from the headers of a trailers-only reply.
func statusOf(resp *http.Response) *GRPCStatusError {
	h := resp.Trailer
	if h.Get("Grpc-Status") == "" {
		h = resp.Header
	}
	raw := h.Get("Grpc-Status")
	if raw == "" {
		return &GRPCStatusError{Code: codeInternal, Message: "the reply has no grpc-status"}
	}
	code, err := strconv.Atoi(raw)
	if err != nil {
		return &GRPCStatusError{Code: codeInternal, Message: fmt.Sprintf("malformed grpc-status %q", raw)}
	}
	st := &GRPCStatusError{Code: code, Message: percentDecode(h.Get("Grpc-Message"))}
	if details := h.Get("Grpc-Status-Details-Bin"); details != "" {
		st.RetryDelay, st.HasRetryInfo = retryInfo(details)
	}
	return st
}

// grpcMessage takes the one length-prefixed message out of a reply body
// (none is an empty message), decompressed with encoding when flagged so.
func grpcMessage(b []byte, encoding string) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) < 5 {
		return nil, fmt.Errorf("truncated gRPC message prefix (%d bytes)", len(b))
	}
	n := binary.BigEndian.Uint32(b[1:5])
	if uint64(n) > uint64(len(b)-5) {
		return nil, fmt.Errorf("gRPC message of %d bytes, %d received", n, len(b)-5)
	}
	msg := b[5 : 5+n]
	switch {
	case b[0] == 0:
		return msg, nil
	case encoding == "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(msg))
		if err != nil {
			return nil, fmt.Errorf("gzip gRPC reply: %w", err)
		}
		return readBounded(zr)
	}
	return nil, fmt.Errorf("gRPC reply compressed with %q", encoding)
}

// codeFromHTTP maps the HTTP status of a non-gRPC reply to a gRPC code
// (grpc/doc/http-grpc-status-mapping.md).
func codeFromHTTP(status int) int {
	switch status {
	case http.StatusBadRequest:
		return codeInternal
	case http.StatusUnauthorized:
		return codeUnauthenticated
	case http.StatusForbidden:
		return codePermissionDenied
	case http.StatusNotFound:
		return codeUnimplemented
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return codeUnavailable
	}
	return codeUnknown
}

// grpcTimeout formats a grpc-timeout header: at most 8 digits and a unit,
// rounded up.
func grpcTimeout(d time.Duration) string {
	if d <= 0 {
		return "1n"
	}
	const maxValue = 1e8 - 1
	for _, u := range []struct {
		d    time.Duration
		unit string
	}{{time.Nanosecond, "n"}, {time.Microsecond, "u"}, {time.Millisecond, "m"}, {time.Second, "S"}, {time.Minute, "M"}} {
		if v := (d + u.d - 1) / u.d; v <= maxValue {
			return strconv.FormatInt(int64(v), 10) + u.unit
		}
	}
	return strconv.FormatInt(int64(min((d+time.Hour-1)/time.Hour, maxValue)), 10) + "H"
}

// percentDecode undoes gRPC's percent-encoding of grpc-message; a malformed
// escape is kept as it is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// retryInfoType is the type URL of google.rpc.RetryInfo inside a
// google.rpc.Status's details.
const retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"

// retryInfo finds the RetryInfo detail of a grpc-status-details-bin header
// (a base64 google.rpc.Status: code 1, message 2, details 3 as Any{type_url
// 1, value 2}; RetryInfo{retry_delay 1: Duration{seconds 1, nanos 2}}).
func retryInfo(header string) (time.Duration, bool) {
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(header, "="))
	if err != nil {
		return 0, false
	}
	var (
		delay time.Duration
		found bool
	)
	_ = walkFields(raw, func(num protowire.Number, typ protowire.Type, detail []byte, _ uint64) error {
		if num != 3 || typ != protowire.BytesType || found {
			return nil
		}
		var typeURL string
		var value []byte
		_ = walkFields(detail, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			switch {
			case num == 1 && typ == protowire.BytesType:
				typeURL = string(v)
			case num == 2 && typ == protowire.BytesType:
				value = v
			}
			return nil
		})
		if typeURL != retryInfoType {
			return nil
		}
		found = true
		_ = walkFields(value, func(num protowire.Number, typ protowire.Type, dur []byte, _ uint64) error {
			if num != 1 || typ != protowire.BytesType {
				return nil
			}
			var secs, nanos int64
			_ = walkFields(dur, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.VarintType:
					secs = int64(x)
				case num == 2 && typ == protowire.VarintType:
					nanos = int64(int32(x))
				}
				return nil
			})
			delay = max(time.Duration(secs)*time.Second+time.Duration(nanos), 0)
			return nil
		})
		return nil
	})
	return delay, found
}
