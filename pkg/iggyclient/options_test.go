package iggyclient_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
)

func TestDialRejectsBadOptions(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	valid := iggyclient.Options{Address: "127.0.0.1:1", Username: "iggy", Password: "iggy"}
	tests := []struct {
		name    string
		change  func(o *iggyclient.Options)
		wantMsg string
	}{
		{"no address", func(o *iggyclient.Options) { o.Address = "" }, "address is empty"},
		{"address without port", func(o *iggyclient.Options) { o.Address = "localhost" }, `address "localhost"`},
		{"no password", func(o *iggyclient.Options) { o.Password = "" }, "missing credentials"},
		{"no username", func(o *iggyclient.Options) { o.Username = "" }, "missing credentials"},
		{"max below min", func(o *iggyclient.Options) { o.ReconnectMin, o.ReconnectMax = time.Second, time.Millisecond }, "reconnect max 1ms is below reconnect min 1s"},
		{"missing CA file", func(o *iggyclient.Options) { o.TLSEnabled, o.TLSCAFile = true, "/nonexistent/ca.pem" }, "read TLS CA file"},
		{"CA file without PEM", func(o *iggyclient.Options) { o.TLSEnabled, o.TLSCAFile = true, notPEM }, "holds no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid
			tt.change(&o)
			// Options are checked before any dialling: a short deadline
			// would otherwise end the test with a context error instead.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			c, err := iggyclient.Dial(ctx, o)
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q, want it to mention %q", err, tt.wantMsg)
			}
		})
	}
}

func TestDialGivesUpWhenContextEnds(t *testing.T) {
	// A port nobody listens on: Dial keeps retrying until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	addr := unusedAddress(t)
	_, err := iggyclient.Dial(ctx, iggyclient.Options{
		Address: addr, Username: "iggy", Password: "iggy",
		ReconnectMin: 10 * time.Millisecond, ReconnectMax: 50 * time.Millisecond,
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last: dial tcp "+addr) {
		t.Fatalf("error %v, want the deadline and the last dial error", err)
	}
}

// unusedAddress returns a loopback address that refuses connections.
func unusedAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
