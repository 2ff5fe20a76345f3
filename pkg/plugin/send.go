package plugin

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// maxBatchBytes bounds what the send callback copies from a plugin; a larger
// batch is rejected rather than trusted.
const maxBatchBytes = 1 << 30

// route is where batches of one source instance go.
type route struct {
	deliver   func(batchID uint64, buf []byte) bool
	legacySeq atomic.Uint64 // batch numbers made up for the legacy ABI
}

var (
	routesMu sync.RWMutex
	routes   = map[uint32]*route{}

	sendCallbacks struct {
		once      sync.Once
		v2, legcy uintptr
	}
)

// registerRoute makes deliver the target of id's batches and returns the
// process-wide send callback matching the ABI. Callbacks are created once:
// purego callbacks are a small, never freed resource.
func registerRoute(id uint32, deliver func(uint64, []byte) bool, legacy bool) uintptr {
	sendCallbacks.once.Do(func() {
		sendCallbacks.v2 = purego.NewCallback(onSendV2)
		sendCallbacks.legcy = purego.NewCallback(onSendLegacy)
	})
	routesMu.Lock()
	routes[id] = &route{deliver: deliver}
	routesMu.Unlock()
	if legacy {
		return sendCallbacks.legcy
	}
	return sendCallbacks.v2
}

func unregisterRoute(id uint32) {
	routesMu.Lock()
	delete(routes, id)
	routesMu.Unlock()
}

func lookupRoute(id uint32) *route {
	routesMu.RLock()
	defer routesMu.RUnlock()
	return routes[id]
}

// batchBuffers holds buffers handed back with ReleaseBatch; maxPooledBatch keeps a rare huge
// batch from pinning its buffer.
var batchBuffers sync.Pool

const maxPooledBatch = 16 << 20

// ReleaseBatch hands back a buffer a deliver function received, once nothing refers to it any
// more: the copy of a later batch may reuse it. Buffers never released are simply collected.
func ReleaseBatch(buf []byte) {
	if cap(buf) == 0 || cap(buf) > maxPooledBatch {
		return
	}
	buf = buf[:0]
	batchBuffers.Put(&buf)
}

// copyBatch copies the plugin-owned buffer, which dies when the callback returns, into a
// released buffer when one is large enough.
func copyBatch(p *byte, n uintptr) ([]byte, bool) {
	if n > maxBatchBytes || (p == nil && n != 0) {
		return nil, false
	}
	var buf []byte
	if bp, _ := batchBuffers.Get().(*[]byte); bp != nil && uintptr(cap(*bp)) >= n {
		buf = (*bp)[:n]
	} else {
		buf = make([]byte, n)
	}
	if n > 0 {
		copy(buf, unsafe.Slice(p, n))
	}
	return buf, true
}

// onSendV2 is send_cb: 0 accepts the batch (a batch result follows), -1
// rejects it (unknown id, oversized buffer, deliver refused or panicked).
func onSendV2(pluginID uint32, batchID uint64, p *byte, n uintptr) (code int32) {
	defer func() {
		if recover() != nil {
			code = -1
		}
	}()
	r := lookupRoute(pluginID)
	if r == nil {
		return -1
	}
	buf, ok := copyBatch(p, n)
	if !ok || !r.deliver(batchID, buf) {
		return -1
	}
	return 0
}

// onSendLegacy is the legacy send callback: no batch id and no answer.
func onSendLegacy(pluginID uint32, p *byte, n uintptr) {
	defer func() { _ = recover() }()
	r := lookupRoute(pluginID)
	if r == nil {
		return
	}
	if buf, ok := copyBatch(p, n); ok {
		r.deliver(r.legacySeq.Add(1), buf)
	}
}
