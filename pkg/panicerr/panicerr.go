// Package panicerr turns a panic into an ordinary error at the boundary of code that reads
// untrusted bytes (decoders, encoders, transforms): a payload that trips a bug in such code, or in
// a library it calls, must fail that one message instead of the whole connector process.
package panicerr

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrPanic is wrapped by every error Catch makes.
var ErrPanic = errors.New("panic on malformed input")

// Catch, deferred directly (`defer panicerr.Catch(&err)`), stops a panic in progress and stores it
// in *err as an error wrapping ErrPanic, naming the panic value and the function that raised it. A
// runtime.Error such as an out-of-range index is caught too; with no panic it does nothing.
func Catch(err *error) {
	v := recover()
	if v == nil {
		return
	}
	if where := panicSite(); where != "" {
		*err = fmt.Errorf("%w: %v (in %s)", ErrPanic, v, where)
		return
	}
	*err = fmt.Errorf("%w: %v", ErrPanic, v)
}

// panicSite is the first frame below the panic that is not the runtime's own: the function whose
// code panicked, as "pkg.Func (file.go:line)". It runs in the deferred call, on top of the stack
// that panicked.
func panicSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	pastPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			pastPanic = true
		case pastPanic && !strings.HasPrefix(f.Function, "runtime."):
			return fmt.Sprintf("%s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}
