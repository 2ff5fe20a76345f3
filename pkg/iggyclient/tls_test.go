package iggyclient_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

func TestTLS(t *testing.T) {
	testkit.OverProtocols(t, func(t *testing.T, proto string) {
		cert := testkit.WriteTLSCert(t, t.TempDir(), "iggy.test", "127.0.0.1")
		caFile := cert.CAFile
		withTLS := testkit.BrokerOption(func(cfg *devbroker.Config) { cfg.TLSCertFile, cfg.TLSKeyFile = cert.CertFile, cert.KeyFile })
		srv := startBroker(t, proto, withTLS, testkit.WithStream("demo", map[string]uint32{"orders": 1}))

		tests := []struct {
			name    string
			caFile  string
			domain  string
			wantErr string // "" = must work
		}{
			{"CA file, server name from the address (IP SAN)", caFile, "", ""},
			{"CA file and domain", caFile, "iggy.test", ""},
			{"wrong domain", caFile, "other.test", "certificate is valid for iggy.test, not other.test"},
			{"system roots do not know the CA", "", "", "certificate signed by unknown authority"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, err := iggyclient.Dial(ctx, iggyclient.Options{
					Address: srv.Addr(), Protocol: proto, Username: "iggy", Password: "iggy",
					TLSEnabled: true, TLSCAFile: tt.caFile, TLSDomain: tt.domain,
					Logger: slog.New(slog.DiscardHandler),
				})
				if tt.wantErr != "" {
					if err == nil {
						c.Close()
						t.Fatal("Dial succeeded")
					}
					if !strings.Contains(err.Error(), tt.wantErr) || ctx.Err() != nil {
						t.Fatalf("error %q (deadline hit: %v), want an immediate one mentioning %q", err, ctx.Err() != nil, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := c.TopicInfo(ctx, "demo", "orders"); err != nil {
					t.Fatal(err)
				}
				// A poll into reused buffers runs on the TLS connection too.
				group := "g-" + tt.name
				if err := c.Send(ctx, "demo", "orders", iggyclient.Partitioning{}, []iggyclient.OutMessage{{Payload: []byte(group)}}); err != nil {
					t.Fatal(err)
				}
				if err := c.EnsureConsumerGroup(ctx, "demo", "orders", group); err != nil {
					t.Fatal(err)
				}
				var buf iggyclient.PollBuffers
				b, err := c.Poll(ctx, iggyclient.PollRequest{Stream: "demo", Topic: "orders", Group: group, Count: 10, Reuse: &buf})
				if err != nil || len(b.Messages) == 0 || string(b.Messages[len(b.Messages)-1].Payload) != group {
					t.Fatalf("reused poll over TLS: %+v, %v", b, err)
				}
			})
		}
	})
}
