package otlp

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrShutdown is returned by an export after the exporter was shut down.
var ErrShutdown = errors.New("otlp exporter is shut down")

// PartialSuccessError is a collector's answer that it accepted the request
// but rejected part of it (the partial_success field of an
// Export*ServiceResponse). The rest was kept, so it is not retried.
type PartialSuccessError struct {
	Rejected int64
	What     string // "spans" or "log records"
	Message  string
}

func (e *PartialSuccessError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no reason given"
	}
	return fmt.Sprintf("collector rejected %d %s: %s", e.Rejected, e.What, msg)
}

// maxResponseSize bounds what is read of a collector's reply.
const maxResponseSize = 4 << 20

// readBounded reads r to its end, failing beyond maxResponseSize.
func readBounded(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxResponseSize+1))
	if err != nil {
		return b, err
	}
	if len(b) > maxResponseSize {
		return b[:maxResponseSize], fmt.Errorf("collector reply larger than %d bytes", maxResponseSize)
	}
	return b, nil
}

// partialSuccess reads the partial_success field (1) of an
// ExportTraceServiceResponse or ExportLogsServiceResponse: both hold the
// rejected count in field 1 and the message in field 2. It returns nil when
// nothing was rejected and there is no message.
func partialSuccess(resp []byte, what string) error {
	var ps *PartialSuccessError
	err := walkFields(resp, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		if ps == nil {
			ps = &PartialSuccessError{What: what}
		}
		return walkFields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
			switch {
			case num == 1 && typ == protowire.VarintType:
				ps.Rejected = int64(x)
			case num == 2 && typ == protowire.BytesType:
				ps.Message = string(v)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("decode collector reply: %w", err)
	}
	if ps == nil || (ps.Rejected == 0 && ps.Message == "") {
		return nil
	}
	return ps
}

// walkFields calls f for each field of a protobuf message: its number, wire
// type and value (bytes for length-delimited fields, the number otherwise).
func walkFields(b []byte, f func(num protowire.Number, typ protowire.Type, bytes []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var (
			bytes []byte
			x     uint64
		)
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			bytes, n = protowire.ConsumeBytes(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			x = uint64(v)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, bytes, x); err != nil {
			return err
		}
	}
	return nil
}
