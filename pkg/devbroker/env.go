package devbroker

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Environment variables of iggy-dev-server. The first five are the real
// server's names, so compose files and scripts work with either.
const (
	EnvAddress    = "IGGY_TCP_ADDRESS"
	EnvUsername   = "IGGY_ROOT_USERNAME"
	EnvPassword   = "IGGY_ROOT_PASSWORD"
	EnvTLSEnabled = "IGGY_TCP_TLS_ENABLED"
	EnvTLSCert    = "IGGY_TCP_TLS_CERT_FILE"
	EnvTLSKey     = "IGGY_TCP_TLS_KEY_FILE"
	EnvTokens     = "IGGY_DEV_PERSONAL_ACCESS_TOKENS"
	EnvStreams    = "IGGY_DEV_STREAMS"
	EnvRetain     = "IGGY_DEV_RETAIN_BYTES_PER_PARTITION"
	// The real server's [heartbeat] section (off by default there too).
	EnvHeartbeatEnabled  = "IGGY_HEARTBEAT_ENABLED"
	EnvHeartbeatInterval = "IGGY_HEARTBEAT_INTERVAL"
	// EnvProtocol forces the protocol of every connection (Config.Protocol).
	EnvProtocol = "IGGY_DEV_PROTOCOL"
)

// defaultHeartbeatInterval is the real server's [heartbeat] interval.
const defaultHeartbeatInterval = 5 * time.Second

// EnvHelp documents the variables ConfigFromEnv reads.
const EnvHelp = `  IGGY_TCP_ADDRESS                 listen address (default 127.0.0.1:8090)
  IGGY_ROOT_USERNAME               root user name (default iggy)
  IGGY_ROOT_PASSWORD               root password (default iggy)
  IGGY_TCP_TLS_ENABLED             "true" to serve TLS (default false)
  IGGY_TCP_TLS_CERT_FILE           PEM certificate, required with TLS
  IGGY_TCP_TLS_KEY_FILE            PEM private key, required with TLS
  IGGY_DEV_PERSONAL_ACCESS_TOKENS  comma-separated tokens accepted at login as root
  IGGY_DEV_STREAMS                 streams and topics to create at start:
                                   "stream:topic=partitions,topic;other:topic=3"
                                   (a topic without "=n" gets 1 partition)
  IGGY_DEV_RETAIN_BYTES_PER_PARTITION  keep at most this many bytes per partition,
                                   dropping the oldest batches (default 0: keep all)
  IGGY_HEARTBEAT_ENABLED           "true" to drop clients silent (no ping) for 1.2
                                   intervals, as the real server (default false)
  IGGY_HEARTBEAT_INTERVAL          heartbeat interval, e.g. 5s or "5 s" (default 5s)
  IGGY_DEV_PROTOCOL                "0.8" or "0.9" to speak only that protocol (default:
                                   each connection's first bytes choose)
`

// ConfigFromEnv builds a Config from environment variables read with getenv
// (os.Getenv in the binary). Every malformed value is an error naming its variable.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		Address:      getenv(EnvAddress),
		RootUsername: getenv(EnvUsername),
		RootPassword: getenv(EnvPassword),
	}
	if raw := getenv(EnvTLSEnabled); raw != "" {
		enabled, err := strconv.ParseBool(raw)
		if err != nil {
			return Config{}, fmt.Errorf("%s=%q: want true or false", EnvTLSEnabled, raw)
		}
		if enabled {
			cfg.TLSCertFile, cfg.TLSKeyFile = getenv(EnvTLSCert), getenv(EnvTLSKey)
			if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
				return Config{}, fmt.Errorf("%s=true needs both %s and %s", EnvTLSEnabled, EnvTLSCert, EnvTLSKey)
			}
		}
	}
	for token := range strings.SplitSeq(getenv(EnvTokens), ",") {
		if token = strings.TrimSpace(token); token != "" {
			if len(token) > 255 {
				return Config{}, fmt.Errorf("%s: a token is %d bytes, at most 255 allowed", EnvTokens, len(token))
			}
			cfg.PersonalAccessTokens = append(cfg.PersonalAccessTokens, PersonalAccessToken{Token: token})
		}
	}
	if raw := getenv(EnvRetain); raw != "" {
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return Config{}, fmt.Errorf("%s=%q: want a number of bytes", EnvRetain, raw)
		}
		cfg.RetainBytesPerPartition = n
	}
	if raw := getenv(EnvHeartbeatEnabled); raw != "" {
		enabled, err := strconv.ParseBool(raw)
		if err != nil {
			return Config{}, fmt.Errorf("%s=%q: want true or false", EnvHeartbeatEnabled, raw)
		}
		if enabled {
			cfg.HeartbeatInterval = defaultHeartbeatInterval
			if raw := getenv(EnvHeartbeatInterval); raw != "" {
				// The real server writes durations with a space ("5 s").
				d, err := time.ParseDuration(strings.ReplaceAll(raw, " ", ""))
				if err != nil || d <= 0 {
					return Config{}, fmt.Errorf("%s=%q: want a positive duration such as 5s", EnvHeartbeatInterval, raw)
				}
				cfg.HeartbeatInterval = d
			}
		}
	}
	switch raw := getenv(EnvProtocol); raw {
	case "", Protocol08, Protocol09:
		cfg.Protocol = raw
	default:
		return Config{}, fmt.Errorf("%s=%q: want 0.8 or 0.9 (unset: chosen per connection)", EnvProtocol, raw)
	}
	streams, err := ParseStreams(getenv(EnvStreams))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", EnvStreams, err)
	}
	cfg.Streams = streams
	return cfg, nil
}

// ParseStreams reads "stream:topic=partitions,topic;other:topic=3". Streams are
// separated by ";", a stream's topics by ",", and a topic without "=n" gets
// one partition. An empty string means no streams.
func ParseStreams(spec string) ([]StreamConfig, error) {
	var out []StreamConfig
	for part := range strings.SplitSeq(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, topics, _ := strings.Cut(part, ":")
		sc := StreamConfig{Name: strings.TrimSpace(name)}
		if err := validName(sc.Name); err != nil {
			return nil, fmt.Errorf("stream in %q: %w", part, err)
		}
		for entry := range strings.SplitSeq(topics, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			topicName, count, hasCount := strings.Cut(entry, "=")
			tc := TopicConfig{Name: strings.TrimSpace(topicName), Partitions: 1}
			if err := validName(tc.Name); err != nil {
				return nil, fmt.Errorf("topic %q of stream %q: %w", entry, sc.Name, err)
			}
			if hasCount {
				n, err := strconv.ParseUint(strings.TrimSpace(count), 10, 32)
				if err != nil || n > maxPartitions {
					return nil, fmt.Errorf("topic %q of stream %q: partitions %q must be a number from 0 to %d", tc.Name, sc.Name, count, maxPartitions)
				}
				tc.Partitions = uint32(n)
			}
			sc.Topics = append(sc.Topics, tc)
		}
		out = append(out, sc)
	}
	return out, nil
}
