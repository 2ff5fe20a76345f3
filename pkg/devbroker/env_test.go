package devbroker_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/devbroker"
)

func TestParseStreams(t *testing.T) {
	tests := []struct {
		spec    string
		want    []devbroker.StreamConfig
		wantErr string
	}{
		{spec: "", want: nil},
		{spec: "demo", want: []devbroker.StreamConfig{{Name: "demo"}}},
		{spec: "demo:orders=3,events; other : t ", want: []devbroker.StreamConfig{
			{Name: "demo", Topics: []devbroker.TopicConfig{{Name: "orders", Partitions: 3}, {Name: "events", Partitions: 1}}},
			{Name: "other", Topics: []devbroker.TopicConfig{{Name: "t", Partitions: 1}}},
		}},
		{spec: ":orders", wantErr: "name must be 1 to 255 bytes"},
		{spec: "demo:orders=many", wantErr: `partitions "many"`},
		{spec: "demo:orders=1001", wantErr: `partitions "1001"`},
		{spec: "demo:=2", wantErr: `topic "=2" of stream "demo"`},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := devbroker.ParseStreams(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseStreams(%q) error = %v, want one containing %q", tc.spec, err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseStreams(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		check   func(devbroker.Config) bool
		wantErr string
	}{
		{
			name:  "everything unset leaves defaults to New",
			env:   map[string]string{},
			check: func(c devbroker.Config) bool { return c.Address == "" && c.TLSCertFile == "" && c.Streams == nil },
		},
		{
			name: "real server names and dev extras",
			env: map[string]string{
				"IGGY_TCP_ADDRESS": "0.0.0.0:9000", "IGGY_ROOT_USERNAME": "admin", "IGGY_ROOT_PASSWORD": "s3cret",
				"IGGY_DEV_PERSONAL_ACCESS_TOKENS": "a, b,", "IGGY_DEV_STREAMS": "demo:t=2",
				"IGGY_DEV_RETAIN_BYTES_PER_PARTITION": "1048576",
			},
			check: func(c devbroker.Config) bool {
				return c.Address == "0.0.0.0:9000" && c.RootUsername == "admin" && c.RootPassword == "s3cret" &&
					len(c.PersonalAccessTokens) == 2 && c.PersonalAccessTokens[1].Token == "b" &&
					len(c.Streams) == 1 && c.Streams[0].Topics[0].Partitions == 2 && c.RetainBytesPerPartition == 1<<20
			},
		},
		{
			name:  "TLS with both files",
			env:   map[string]string{"IGGY_TCP_TLS_ENABLED": "true", "IGGY_TCP_TLS_CERT_FILE": "c.pem", "IGGY_TCP_TLS_KEY_FILE": "k.pem"},
			check: func(c devbroker.Config) bool { return c.TLSCertFile == "c.pem" && c.TLSKeyFile == "k.pem" },
		},
		{
			name:  "TLS files ignored while TLS is off",
			env:   map[string]string{"IGGY_TCP_TLS_ENABLED": "false", "IGGY_TCP_TLS_CERT_FILE": "c.pem"},
			check: func(c devbroker.Config) bool { return c.TLSCertFile == "" },
		},
		{
			name:  "heartbeat verification as the real server names it",
			env:   map[string]string{"IGGY_HEARTBEAT_ENABLED": "true", "IGGY_HEARTBEAT_INTERVAL": "2 s"},
			check: func(c devbroker.Config) bool { return c.HeartbeatInterval == 2*time.Second },
		},
		{
			name:  "heartbeat on with the default interval, off by default",
			env:   map[string]string{"IGGY_HEARTBEAT_ENABLED": "true"},
			check: func(c devbroker.Config) bool { return c.HeartbeatInterval == 5*time.Second },
		},
		{
			name:  "heartbeat interval ignored while verification is off",
			env:   map[string]string{"IGGY_HEARTBEAT_INTERVAL": "2s"},
			check: func(c devbroker.Config) bool { return c.HeartbeatInterval == 0 },
		},
		{
			name:  "protocol forced to 0.9",
			env:   map[string]string{"IGGY_DEV_PROTOCOL": "0.9"},
			check: func(c devbroker.Config) bool { return c.Protocol == devbroker.Protocol09 },
		},
		{
			name:  "protocol unset: chosen per connection",
			env:   map[string]string{},
			check: func(c devbroker.Config) bool { return c.Protocol == "" },
		},
		{name: "protocol unknown", env: map[string]string{"IGGY_DEV_PROTOCOL": "1.0"}, wantErr: `IGGY_DEV_PROTOCOL="1.0"`},
		{name: "heartbeat interval not a duration", env: map[string]string{"IGGY_HEARTBEAT_ENABLED": "true", "IGGY_HEARTBEAT_INTERVAL": "often"}, wantErr: "IGGY_HEARTBEAT_INTERVAL"},
		{name: "TLS without a key", env: map[string]string{"IGGY_TCP_TLS_ENABLED": "true", "IGGY_TCP_TLS_CERT_FILE": "c.pem"}, wantErr: "IGGY_TCP_TLS_KEY_FILE"},
		{name: "TLS flag not a bool", env: map[string]string{"IGGY_TCP_TLS_ENABLED": "yes please"}, wantErr: "IGGY_TCP_TLS_ENABLED"},
		{name: "retention not a number", env: map[string]string{"IGGY_DEV_RETAIN_BYTES_PER_PARTITION": "1GB"}, wantErr: "IGGY_DEV_RETAIN_BYTES_PER_PARTITION"},
		{name: "bad streams", env: map[string]string{"IGGY_DEV_STREAMS": "demo:t=x"}, wantErr: "IGGY_DEV_STREAMS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := devbroker.ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(cfg) {
				t.Fatalf("ConfigFromEnv = %+v, %v", cfg, err)
			}
		})
	}
}

func FuzzParseStreams(f *testing.F) {
	for _, seed := range []string{"", "demo", "demo:orders=3,events;other:t", ":x", "a:b=1001", "a:=", ";;a:b=0,,"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		streams, err := devbroker.ParseStreams(spec)
		if err != nil {
			return
		}
		for _, s := range streams {
			if s.Name == "" || len(s.Name) > 255 {
				t.Fatalf("accepted stream name %q", s.Name)
			}
			for _, tc := range s.Topics {
				if tc.Name == "" || len(tc.Name) > 255 || tc.Partitions > 1000 {
					t.Fatalf("accepted topic %+v", tc)
				}
			}
		}
	})
}
