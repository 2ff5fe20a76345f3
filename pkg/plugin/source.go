package plugin

import (
	"context"
	"fmt"
	"runtime"

	"github.com/ebitengine/purego"
)

// Source symbols. The v2 ABI needs handle_v2 and batch_result; the legacy ABI
// has handle instead and no batch results.
const (
	symSourceOpen        = "iggy_source_open"
	symSourceHandleV2    = "iggy_source_handle_v2"
	symSourceBatchResult = "iggy_source_batch_result"
	symSourceHandle      = "iggy_source_handle"
	symSourceClose       = "iggy_source_close"
	symSourceVersion     = "iggy_source_version"
)

// Batch results passed to iggy_source_batch_result.
const (
	resultAck  uint8 = 0
	resultNack uint8 = 1
)

// Source is a loaded source plugin library. One Source serves every instance
// (id) opened in that library; its methods are safe for concurrent use.
type Source struct {
	path    string
	version string
	legacy  bool

	open        func(id uint32, cfg *byte, cfgLen uintptr, state *byte, stateLen uintptr, logCB uintptr) int32
	handle      func(id uint32, sendCB uintptr) int32 // handle_v2, or handle for the legacy ABI
	batchResult func(id uint32, batchID uint64, result uint8) int32
	close       func(id uint32) int32
}

// LoadSource loads the source plugin at path (a ResolvePath result), once per
// path per process. A library with iggy_source_handle_v2 must have the whole v2
// ABI; one without it but with iggy_source_handle is loaded as a legacy source
// (no acknowledgements). Errors wrap ErrNotSharedLibrary, ErrMissingSymbols
// (naming every missing symbol) or the file system error for a missing file.
func LoadSource(path string) (*Source, error) {
	librariesMu.Lock()
	defer librariesMu.Unlock()
	if s, ok := sources[path]; ok {
		return s, nil
	}
	lib, err := openLibrary(path)
	if err != nil {
		return nil, err
	}
	names := []string{symSourceOpen, symSourceHandleV2, symSourceBatchResult, symSourceClose, symSourceVersion}
	legacy := lib.symbol(symSourceHandleV2) == 0 && lib.symbol(symSourceHandle) != 0
	if legacy {
		names = []string{symSourceOpen, symSourceHandle, symSourceClose, symSourceVersion}
	}
	syms, missing := lib.symbols(names...)
	if len(missing) > 0 {
		return nil, missingSymbolsError("source", path, missing)
	}
	s := &Source{path: path, legacy: legacy}
	purego.RegisterFunc(&s.open, syms[symSourceOpen])
	purego.RegisterFunc(&s.close, syms[symSourceClose])
	if legacy {
		purego.RegisterFunc(&s.handle, syms[symSourceHandle])
	} else {
		purego.RegisterFunc(&s.handle, syms[symSourceHandleV2])
		purego.RegisterFunc(&s.batchResult, syms[symSourceBatchResult])
	}
	var version func() *byte
	purego.RegisterFunc(&version, syms[symSourceVersion])
	s.version = versionString(version())
	sources[path] = s
	return s, nil
}

// Path is the path the library was loaded from.
func (s *Source) Path() string { return s.path }

// Version is the plugin's version string.
func (s *Source) Version() string { return s.version }

// SupportsAck is false for a legacy-ABI source, whose batches are never
// answered.
func (s *Source) SupportsAck() bool { return !s.legacy }

// Open creates instance id with the plugin config as JSON (empty means JSON
// null) and the last persisted state (nil: no state; empty non-nil: an empty
// state, which plugins treat as corrupt). Non-zero returns are *CodeError.
func (s *Source) Open(id uint32, configJSON []byte, state []byte) error {
	code, _ := s.openCall(context.Background(), id, configJSON, state)
	return codeErr(symSourceOpen, code)
}

// OpenContext is Open that stops waiting when ctx ends.
func (s *Source) OpenContext(ctx context.Context, id uint32, configJSON []byte, state []byte) error {
	code, err := s.openCall(ctx, id, configJSON, state)
	if err != nil {
		return err
	}
	return codeErr(symSourceOpen, code)
}

func (s *Source) openCall(ctx context.Context, id uint32, configJSON, state []byte) (int32, error) {
	cfg := configBytes(configJSON)
	cb := logCallback()
	return callContext(ctx, symSourceOpen, func() int32 {
		cp, cn := bufferArg(cfg)
		var sp *byte // NULL: no state
		var sn uintptr
		if state != nil {
			sp, sn = bufferArg(state)
		}
		code := s.open(id, cp, cn, sp, sn, cb)
		runtime.KeepAlive(cfg)
		runtime.KeepAlive(state)
		return code
	})
}

// Start registers deliver for id and starts the plugin's poll loop.
//
// deliver runs on a plugin thread (foreign to Go) with a copy of each batch,
// an encoded postcard.ProducedMessages. It must not block for long and must
// not call back into the plugin; a plugin may call it from several threads at
// once, so it must be safe for concurrent use. Returning true accepts the batch: the host
// then owes exactly one BatchResult for batchID, from another goroutine.
// Returning false rejects it (the plugin NACKs it itself; no BatchResult).
// For a legacy source batchID is a host-made sequence (1, 2, ...), the return
// value is ignored and no BatchResult is expected.
func (s *Source) Start(id uint32, deliver func(batchID uint64, buf []byte) bool) error {
	if deliver == nil {
		return fmt.Errorf("start source instance %d: nil deliver function", id)
	}
	cb := registerRoute(id, deliver, s.legacy)
	op := symSourceHandleV2
	if s.legacy {
		op = symSourceHandle
	}
	if err := codeErr(op, s.handle(id, cb)); err != nil {
		unregisterRoute(id)
		return err
	}
	return nil
}

// BatchResult answers batch batchID of instance id: ack true for ACK (every
// message sent and the state persisted), false for NACK. It runs the plugin's
// result hook on the calling goroutine. -1 (a *CodeError) means no such batch
// was pending, the loop stopped, or the instance is closing.
func (s *Source) BatchResult(id uint32, batchID uint64, ack bool) error {
	if s.legacy {
		return fmt.Errorf("batch result for source instance %d: %w", id, ErrNoLegacyAck)
	}
	return codeErr(symSourceBatchResult, s.batchResult(id, batchID, ackCode(ack)))
}

// BatchResultContext is BatchResult that stops waiting when ctx ends.
func (s *Source) BatchResultContext(ctx context.Context, id uint32, batchID uint64, ack bool) error {
	if s.legacy {
		return fmt.Errorf("batch result for source instance %d: %w", id, ErrNoLegacyAck)
	}
	code, err := callContext(ctx, symSourceBatchResult, func() int32 { return s.batchResult(id, batchID, ackCode(ack)) })
	if err != nil {
		return err
	}
	return codeErr(symSourceBatchResult, code)
}

func ackCode(ack bool) uint8 {
	if ack {
		return resultAck
	}
	return resultNack
}

// Close stops instance id's poll loop (a pending batch is NACKed by the
// plugin), closes the connector and forgets the deliver function. No deliver
// call for id happens after Close returns.
func (s *Source) Close(id uint32) error {
	code := s.close(id)
	unregisterRoute(id)
	return codeErr(symSourceClose, code)
}

// CloseContext is Close that stops waiting when ctx ends. The deliver
// function then stays registered, since the plugin may still send.
func (s *Source) CloseContext(ctx context.Context, id uint32) error {
	code, err := callContext(ctx, symSourceClose, func() int32 {
		code := s.close(id)
		unregisterRoute(id)
		return code
	})
	if err != nil {
		return err
	}
	return codeErr(symSourceClose, code)
}
