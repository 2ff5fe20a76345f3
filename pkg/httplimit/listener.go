package httplimit

import (
	"net"

	"golang.org/x/net/netutil"
)

// Listener caps the connections served at once at max: further clients wait in the kernel's
// accept queue until one closes (and are refused by the kernel once that queue is full). Wrap the
// plain TCP or Unix listener, below TLS, so handshakes count too. max 0 means no cap.
func Listener(ln net.Listener, max uint32) net.Listener {
	if max == 0 {
		return ln
	}
	return netutil.LimitListener(ln, int(max))
}
