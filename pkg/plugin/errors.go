package plugin

import (
	"errors"
	"fmt"
)

// Sentinels wrapped by the errors of LoadSink and LoadSource.
var (
	// ErrNotSharedLibrary: the file exists but the dynamic loader refused it
	// (not an ELF shared object, wrong architecture, unresolved dependency...).
	ErrNotSharedLibrary = errors.New("not a loadable shared library")
	// ErrMissingSymbols: the library loaded but lacks required ABI symbols.
	ErrMissingSymbols = errors.New("plugin is missing required symbols")
	// ErrNoLegacyAck is returned by Source.BatchResult for a legacy-ABI source,
	// which has no batch results.
	ErrNoLegacyAck = errors.New("legacy source ABI has no batch results")
)

// CodeError is a non-zero return code from a plugin entry point.
type CodeError struct {
	Op   string // the C symbol, e.g. "iggy_sink_consume"
	Code int32
}

func (e *CodeError) Error() string { return fmt.Sprintf("%s returned %d", e.Op, e.Code) }

// codeErr turns a plugin return code into nil or a *CodeError.
func codeErr(op string, code int32) error {
	if code == 0 {
		return nil
	}
	return &CodeError{Op: op, Code: code}
}
