package plugin

import (
	"context"
	"runtime"

	"github.com/ebitengine/purego"
)

// Sink symbols, all required.
const (
	symSinkOpen    = "iggy_sink_open"
	symSinkConsume = "iggy_sink_consume"
	symSinkClose   = "iggy_sink_close"
	symSinkVersion = "iggy_sink_version"
)

// Sink is a loaded sink plugin library. One Sink serves every instance (id)
// opened in that library; its methods are safe for concurrent use.
type Sink struct {
	path    string
	version string

	open    func(id uint32, cfg *byte, cfgLen uintptr, logCB uintptr) int32
	consume func(id uint32, topicMeta *byte, topicMetaLen uintptr, msgsMeta *byte, msgsMetaLen uintptr, msgs *byte, msgsLen uintptr) int32
	close   func(id uint32) int32
}

// LoadSink loads the sink plugin at path (a ResolvePath result), once per
// path per process, and checks its four symbols. Errors wrap
// ErrNotSharedLibrary, ErrMissingSymbols (naming every missing symbol) or the
// file system error for a missing file.
func LoadSink(path string) (*Sink, error) {
	librariesMu.Lock()
	defer librariesMu.Unlock()
	if s, ok := sinks[path]; ok {
		return s, nil
	}
	lib, err := openLibrary(path)
	if err != nil {
		return nil, err
	}
	syms, missing := lib.symbols(symSinkOpen, symSinkConsume, symSinkClose, symSinkVersion)
	if len(missing) > 0 {
		return nil, missingSymbolsError("sink", path, missing)
	}
	s := &Sink{path: path}
	purego.RegisterFunc(&s.open, syms[symSinkOpen])
	purego.RegisterFunc(&s.consume, syms[symSinkConsume])
	purego.RegisterFunc(&s.close, syms[symSinkClose])
	var version func() *byte
	purego.RegisterFunc(&version, syms[symSinkVersion])
	s.version = versionString(version())
	sinks[path] = s
	return s, nil
}

// Path is the path the library was loaded from.
func (s *Sink) Path() string { return s.path }

// Version is the plugin's version string (its crate version upstream).
func (s *Sink) Version() string { return s.version }

// Open creates instance id with the plugin config as JSON (empty means JSON
// null, what upstream passes for an absent plugin_config). A non-zero return
// is a *CodeError: 1 means the connector failed to open, -1 a bad config or
// an id already in use.
func (s *Sink) Open(id uint32, configJSON []byte) error {
	code, _ := s.openCall(context.Background(), id, configJSON)
	return codeErr(symSinkOpen, code)
}

// OpenContext is Open that stops waiting when ctx ends (see callContext).
func (s *Sink) OpenContext(ctx context.Context, id uint32, configJSON []byte) error {
	code, err := s.openCall(ctx, id, configJSON)
	if err != nil {
		return err
	}
	return codeErr(symSinkOpen, code)
}

func (s *Sink) openCall(ctx context.Context, id uint32, configJSON []byte) (int32, error) {
	cfg := configBytes(configJSON)
	cb := logCallback()
	return callContext(ctx, symSinkOpen, func() int32 {
		p, n := bufferArg(cfg)
		code := s.open(id, p, n, cb)
		runtime.KeepAlive(cfg)
		return code
	})
}

// Consume hands one batch to instance id: the postcard-encoded TopicMetadata,
// MessagesMetadata and RawMessages. It blocks until the plugin returns; a
// non-zero return is a *CodeError (1: the connector failed, -1: unknown id or
// undecodable buffers).
func (s *Sink) Consume(id uint32, topicMeta, msgsMeta, msgs []byte) error {
	return codeErr(symSinkConsume, s.consumeCall(id, topicMeta, msgsMeta, msgs))
}

// ConsumeContext is Consume that stops waiting when ctx ends; the call keeps
// running in the plugin and id must not be used again.
func (s *Sink) ConsumeContext(ctx context.Context, id uint32, topicMeta, msgsMeta, msgs []byte) error {
	code, err := callContext(ctx, symSinkConsume, func() int32 {
		return s.consumeCall(id, topicMeta, msgsMeta, msgs)
	})
	if err != nil {
		return err
	}
	return codeErr(symSinkConsume, code)
}

func (s *Sink) consumeCall(id uint32, topicMeta, msgsMeta, msgs []byte) int32 {
	tp, tn := bufferArg(topicMeta)
	mp, mn := bufferArg(msgsMeta)
	bp, bn := bufferArg(msgs)
	code := s.consume(id, tp, tn, mp, mn, bp, bn)
	runtime.KeepAlive(topicMeta)
	runtime.KeepAlive(msgsMeta)
	runtime.KeepAlive(msgs)
	return code
}

// Close closes instance id (it waits for an in-flight Consume of that id).
func (s *Sink) Close(id uint32) error { return codeErr(symSinkClose, s.close(id)) }

// CloseContext is Close that stops waiting when ctx ends.
func (s *Sink) CloseContext(ctx context.Context, id uint32) error {
	code, err := callContext(ctx, symSinkClose, func() int32 { return s.close(id) })
	if err != nil {
		return err
	}
	return codeErr(symSinkClose, code)
}

// configBytes substitutes JSON null for an empty config.
func configBytes(cfg []byte) []byte {
	if len(cfg) == 0 {
		return []byte("null")
	}
	return cfg
}
