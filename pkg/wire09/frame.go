package wire09

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// Framing errors: a connection that sees one can no longer be trusted to be
// in sync and is closed (§1).
var (
	// ErrFrameSize is a size field outside [HeaderSize, MaxFrameSize].
	ErrFrameSize = errors.New("frame size outside [256, 64 MiB]")
	// ErrFrameType is a frame type byte above 29.
	ErrFrameType = errors.New("frame type above 29")
	// ErrTruncatedFrame is a buffer shorter than the frame it should hold.
	ErrTruncatedFrame = errors.New("truncated frame")
)

// readStep bounds how much ReadFrame grows its buffer ahead of the bytes that
// actually arrived, so a peer announcing 64 MiB cannot make us allocate it.
const readStep = 64 << 10

// ReadFrame reads one frame: exactly 256 header bytes, then size-256 body
// bytes, into buf (reused when large enough). It returns the whole frame,
// header first. A size outside [256, 64 MiB] is ErrFrameSize, a frame type
// above 29 ErrFrameType, a stream ending inside a frame ErrTruncatedFrame
// (and io.ErrUnexpectedEOF); io.EOF alone means it ended between frames.
func ReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	buf = slices.Grow(buf[:0], HeaderSize)[:HeaderSize]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("frame header: %w: %w", ErrTruncatedFrame, err)
		}
		return buf[:0], err // io.EOF alone: the stream ended between frames
	}
	size := FrameSize(buf)
	if size < HeaderSize || size > MaxFrameSize {
		return buf[:0], fmt.Errorf("%w: %d", ErrFrameSize, size)
	}
	if t := FrameTypeOf(buf); t > maxFrameType {
		return buf[:0], fmt.Errorf("%w: %d", ErrFrameType, t)
	}
	n := int(size)
	for len(buf) < n {
		step := min(n-len(buf), max(len(buf), readStep))
		buf = slices.Grow(buf, step)
		got, err := io.ReadFull(r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+got]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("%w: %w", ErrTruncatedFrame, err)
			}
			return buf[:0], fmt.Errorf("frame body (%d of %d bytes): %w", len(buf)-HeaderSize, n-HeaderSize, err)
		}
	}
	return buf, nil
}

// Body returns the body of a frame whose header passed ReadFrame.
func Body(frame []byte) []byte { return frame[HeaderSize:] }
