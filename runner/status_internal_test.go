package runner

import "testing"

// The status board follows upstream's rules: running and stopped clear the last error, and a
// connector in error does not look healthy again just because a later batch went through.
func TestStatusBoardTransitions(t *testing.T) {
	cases := []struct {
		name      string
		steps     func(b *statusBoard)
		want      Status
		wantError bool
	}{
		{"starts as starting", func(*statusBoard) {}, StatusStarting, false},
		{"running", func(b *statusBoard) { b.set(StatusRunning) }, StatusRunning, false},
		{"error keeps its message", func(b *statusBoard) { b.set(StatusRunning); b.setError("boom") }, StatusError, true},
		{"error is not hidden by running", func(b *statusBoard) { b.setError("boom"); b.set(StatusRunning) }, StatusError, true},
		{"stopping keeps the error message", func(b *statusBoard) { b.setError("boom"); b.set(StatusStopping) }, StatusStopping, true},
		{"stopped clears the error", func(b *statusBoard) { b.setError("boom"); b.set(StatusStopping); b.set(StatusStopped) }, StatusStopped, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newStatusBoard()
			c.steps(b)
			got, le := b.get()
			if got != c.want || (le != nil) != c.wantError {
				t.Fatalf("status %q last error %+v; want %q with error %v", got, le, c.want, c.wantError)
			}
			if le != nil && (le.Message != "boom" || le.Timestamp == 0) {
				t.Fatalf("last error %+v", le)
			}
		})
	}
}
