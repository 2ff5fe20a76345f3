package otlp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/otlp"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestEnvHeadersAndCompressionReachTheCollector(t *testing.T) {
	for _, tr := range transports {
		for _, compression := range []string{"none", "gzip"} {
			t.Run(tr.name+" "+compression, func(t *testing.T) {
				recv := startReceiver(t, tr.name)
				cfg := tr.config(recv.URL)
				err := otlp.ApplyEnv(&cfg, "traces", envOf(map[string]string{
					"OTEL_EXPORTER_OTLP_HEADERS":        "x-general=not used, because the signal's own variable wins",
					"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "Authorization=Bearer%20abc, x-tenant = t1 ",
					"OTEL_EXPORTER_OTLP_COMPRESSION":    compression,
				}))
				if err != nil {
					t.Fatal(err)
				}
				if err := exportSpans(t, cfg); err != nil {
					t.Fatalf("export: %v", err)
				}
				wantKept(t, recv)
				h := recv.LastHeaders()
				if got := h.Get("Authorization"); got != "Bearer abc" {
					t.Errorf("authorization = %q, want Bearer abc", got)
				}
				if got := h.Get("X-Tenant"); got != "t1" {
					t.Errorf("x-tenant = %q, want t1", got)
				}
				if got := h.Get("X-General"); got != "" {
					t.Errorf("x-general = %q, want unset", got)
				}
				// gRPC servers keep grpc-encoding out of the metadata; that the
				// receiver decoded the request shows it there.
				if want := map[string]string{"none": "", "gzip": "gzip"}[compression]; tr.name == "http" && h.Get("Content-Encoding") != want {
					t.Errorf("content-encoding = %q, want %q", h.Get("Content-Encoding"), want)
				}
			})
		}
	}
}

func TestEnvCertificate(t *testing.T) {
	cert := testkit.WriteTLSCert(t, t.TempDir(), "127.0.0.1")
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			recv := startReceiver(t, tr.name, testkit.WithTLS(cert))
			cfg := tr.config(recv.URL)
			if err := otlp.ApplyEnv(&cfg, "traces", envOf(map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": cert.CAFile})); err != nil {
				t.Fatal(err)
			}
			if err := exportSpans(t, cfg); err != nil {
				t.Fatalf("export trusting the CA from the environment: %v", err)
			}
			wantKept(t, recv)
		})
	}
}

func TestEnvClientCertificate(t *testing.T) {
	cert := testkit.WriteTLSCert(t, t.TempDir(), "127.0.0.1")
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			recv := startReceiver(t, tr.name, testkit.WithTLS(cert), testkit.WithClientAuth())
			cfg := tr.config(recv.URL)
			cfg.Timeout = time.Second
			env := map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": cert.CAFile}
			withoutClientCert := cfg
			if err := otlp.ApplyEnv(&withoutClientCert, "traces", envOf(env)); err != nil {
				t.Fatal(err)
			}
			if err := exportSpans(t, withoutClientCert); err == nil {
				t.Fatal("export without a client certificate to a receiver requiring one succeeded")
			}
			env["OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE"] = cert.CertFile
			env["OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY"] = cert.KeyFile
			if err := otlp.ApplyEnv(&cfg, "traces", envOf(env)); err != nil {
				t.Fatal(err)
			}
			if err := exportSpans(t, cfg); err != nil {
				t.Fatalf("export with the client certificate: %v", err)
			}
			wantKept(t, recv)
		})
	}
}

func TestEnvErrorsNameTheVariable(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_LOGS_HEADERS": "novalue"}, "OTEL_EXPORTER_OTLP_LOGS_HEADERS"},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=%zz"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, "OTEL_EXPORTER_OTLP_COMPRESSION"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE": notPEM}, "no PEM certificate"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": notPEM}, "no client key"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": notPEM, "OTEL_EXPORTER_OTLP_CLIENT_KEY": notPEM}, "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	}
	for _, tt := range tests {
		var cfg otlp.Config
		err := otlp.ApplyEnv(&cfg, "logs", envOf(tt.vars))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one naming %s", tt.vars, err, tt.want)
		}
	}
}

// A gRPC collector answers a gzip request with a gzip reply; a partial
// success in it must still be read.
func TestGzipGRPCReply(t *testing.T) {
	recv := startReceiver(t, "grpc", testkit.WithReplies(testkit.OTLPReply{Rejected: 2, RejectMessage: "compressed"}))
	cfg := configFor(t, "grpc", recv.URL)
	cfg.Compression = otlp.Gzip
	ps, ok := errorsAsPartial(exportSpans(t, cfg))
	if !ok || ps.Rejected != 2 || ps.Message != "compressed" {
		t.Fatalf("partial success = %+v, want 2 rejected, message compressed", ps)
	}
}
