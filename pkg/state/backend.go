package state

import "context"

// Backend keeps the state of source connectors: FileBackend (upstream's files in a directory) or
// IggyBackend (a topic per source, so a runner needs no volume). A source runner opens its state
// through one; the offsets API reads it through the same one.
type Backend interface {
	// Open returns the saver of source connector key and the state saved for it (nil for none).
	Open(ctx context.Context, key string) (Saver, []byte, error)
	// Load returns the saved state of key (nil for none) without opening it for saving.
	Load(ctx context.Context, key string) ([]byte, error)
}

// Saver saves the state of one running source.
type Saver interface {
	// Save makes data the saved state; when it returns nil the state survives a crash of the
	// process. On failure the previous state stays. Empty data saves "no state".
	Save(ctx context.Context, data []byte) error
	// Latest returns a copy of the newest saved state (nil for none): what a plugin reopened by
	// the same process (after a pause) gets, as a new process would get it from Open.
	Latest() []byte
	// Close ends the saver; the file backend leaves the state in upstream's file format.
	Close() error
}

// FileBackend keeps each source's state in Dir, as upstream does (see Store).
type FileBackend struct{ Dir string }

// Open implements Backend.
func (b FileBackend) Open(_ context.Context, key string) (Saver, []byte, error) {
	s, data, err := Open(b.Dir, key)
	if err != nil {
		return nil, nil, err
	}
	return fileSaver{s}, data, nil
}

// Load implements Backend.
func (b FileBackend) Load(_ context.Context, key string) ([]byte, error) { return Load(b.Dir, key) }

// fileSaver is a Store as a Saver: a file write takes no context.
type fileSaver struct{ *Store }

func (f fileSaver) Save(_ context.Context, data []byte) error { return f.Store.Save(data) }
