package httplimit

import (
	"log"
	"net/http"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// maxHeaderWait bounds the wait for a request's headers even when the read timeout is larger or
// off: headers are small, and a client that trickles them holds a connection for nothing.
const maxHeaderWait = 10 * time.Second

// NewServer is an http.Server for handler with the timeouts of l. The body limit is not part of it:
// wrap the handler with Body.
func NewServer(handler http.Handler, l config.HTTPLimits, errorLog *log.Logger) *http.Server {
	header := maxHeaderWait
	if l.ReadTimeout > 0 {
		header = min(header, l.ReadTimeout)
	}
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: header,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		ErrorLog:          errorLog,
	}
}

// ExtendWrite gives the current answer budget more time to be written, for handlers that
// legitimately wait (on a runner's restart, on the config provider): the deadline becomes now +
// budget + writeTimeout. With the write timeout off it does nothing. A ResponseWriter that cannot
// set deadlines (a test recorder) is left as it is.
func ExtendWrite(w http.ResponseWriter, writeTimeout, budget time.Duration) {
	if writeTimeout <= 0 {
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(budget + writeTimeout))
}
