package testkit

import (
	"bytes"
	"strings"
	"sync"
)

// LogBuffer collects what a process, a command or a logger writes while the test reads it: an
// io.Writer safe for concurrent writers (as os.Stdout is) and readers.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Lines returns the complete lines written so far (without their newlines); a last line still
// being written is left out.
func (l *LogBuffer) Lines() []string {
	s := l.String()
	end := strings.LastIndexByte(s, '\n')
	if end < 0 {
		return nil
	}
	return strings.Split(s[:end], "\n")
}
