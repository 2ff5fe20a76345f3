package main_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
)

// These tests build the real binary and run it as a process.

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "iggy-dev-server")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestBinary(t *testing.T) {
	bin := buildBinary(t)

	t.Run("help says what it is", func(t *testing.T) {
		out, err := exec.Command(bin, "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("--help: %v\n%s", err, out)
		}
		for _, want := range []string{"development and tests only", "in memory", "IGGY_TCP_ADDRESS", "IGGY_ROOT_PASSWORD", "IGGY_DEV_STREAMS", "IGGY_TCP_TLS_CERT_FILE"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("--help does not mention %q:\n%s", want, out)
			}
		}
	})

	t.Run("bad environment is reported", func(t *testing.T) {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "IGGY_DEV_STREAMS=demo:t=lots")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "IGGY_DEV_STREAMS") {
			t.Fatalf("run with a bad IGGY_DEV_STREAMS: %v\n%s", err, out)
		}
	})

	t.Run("serves the SDK and stops on SIGTERM", func(t *testing.T) {
		addr := freeAddress(t)
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "IGGY_TCP_ADDRESS="+addr, "IGGY_ROOT_USERNAME=admin", "IGGY_ROOT_PASSWORD=secret",
			"IGGY_DEV_STREAMS=demo:orders=3", "IGGY_DEV_PERSONAL_ACCESS_TOKENS=tok-1")
		var logs bytes.Buffer
		cmd.Stderr = &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		// The SDK dials until the listener is up.
		cli, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(addr)))
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cli.Close()
		if _, err := cli.LoginUser("admin", "secret"); err != nil {
			t.Fatalf("login with the configured credentials: %v", err)
		}
		stream, _ := iggcon.NewIdentifier("demo")
		topic, _ := iggcon.NewIdentifier("orders")
		details, err := cli.GetTopic(stream, topic)
		if err != nil || len(details.Partitions) != 3 {
			t.Fatalf("configured topic = %+v, %v; want 3 partitions", details, err)
		}
		other, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(addr)))
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := other.LoginWithPersonalAccessToken("tok-1"); err != nil {
			t.Fatalf("login with the configured token: %v", err)
		}

		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("still running 10 s after SIGTERM\n%s", logs.String())
		}
		if !strings.Contains(logs.String(), "development and tests only") {
			t.Errorf("the log does not warn that this is a dev server:\n%s", logs.String())
		}
	})
}
