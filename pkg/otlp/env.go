package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// ApplyEnv adds to cfg what the standard OTEL_EXPORTER_OTLP_* environment
// variables set and the OpenTelemetry Go exporters honour once endpoint,
// timeout and retries are configured in code: request headers
// (OTEL_EXPORTER_OTLP_HEADERS, "key=value,key2=value2", values
// URL-escaped), compression (OTEL_EXPORTER_OTLP_COMPRESSION, gzip or none),
// the CA to verify the collector with (OTEL_EXPORTER_OTLP_CERTIFICATE) and a
// client certificate (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and
// _CLIENT_KEY). The signal's own variable (OTEL_EXPORTER_OTLP_TRACES_HEADERS,
// ..._LOGS_...) wins over the general one. getenv is os.Getenv outside
// tests. An unreadable file or malformed value is an error naming the
// variable.
func ApplyEnv(cfg *Config, signal string, getenv func(string) string) error {
	lookup := func(name string) (key, value string) {
		for _, key := range []string{"OTEL_EXPORTER_OTLP_" + strings.ToUpper(signal) + "_" + name, "OTEL_EXPORTER_OTLP_" + name} {
			if v := strings.TrimSpace(getenv(key)); v != "" {
				return key, v
			}
		}
		return "", ""
	}
	var errs []error
	if key, v := lookup("HEADERS"); v != "" {
		headers, err := parseHeaders(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
		cfg.Headers = headers
	}
	if key, v := lookup("COMPRESSION"); v != "" {
		switch strings.ToLower(v) {
		case Gzip:
			cfg.Compression = Gzip
		case "none":
			cfg.Compression = ""
		default:
			errs = append(errs, fmt.Errorf("%s %q: must be gzip or none", key, v))
		}
	}
	tlsConfig := &tls.Config{}
	if cfg.TLS != nil {
		tlsConfig = cfg.TLS.Clone()
	}
	changed := false
	if key, file := lookup("CERTIFICATE"); file != "" {
		pem, err := os.ReadFile(file)
		pool := x509.NewCertPool()
		if err == nil && !pool.AppendCertsFromPEM(pem) {
			err = errors.New("no PEM certificate in it")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", key, file, err))
		}
		tlsConfig.RootCAs, changed = pool, true
	}
	certKey, certFile := lookup("CLIENT_CERTIFICATE")
	keyKey, keyFile := lookup("CLIENT_KEY")
	switch {
	case certFile != "" && keyFile != "":
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s, %s %s: %w", certKey, certFile, keyKey, keyFile, err))
		}
		tlsConfig.Certificates, changed = []tls.Certificate{cert}, true
	case certFile != "":
		errs = append(errs, fmt.Errorf("%s is set but no client key (OTEL_EXPORTER_OTLP_CLIENT_KEY)", certKey))
	case keyFile != "":
		errs = append(errs, fmt.Errorf("%s is set but no client certificate (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE)", keyKey))
	}
	if changed {
		cfg.TLS = tlsConfig
	}
	return errors.Join(errs...)
}

// parseHeaders reads "key=value,key2=value2" (values URL-escaped).
func parseHeaders(s string) (map[string]string, error) {
	headers := map[string]string{}
	var errs []error
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n:\"(),/;<=>?@[\\]{}") {
			errs = append(errs, fmt.Errorf("header %q: want key=value", strings.TrimSpace(pair)))
			continue
		}
		value, err := url.PathUnescape(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("header %s: %w", k, err))
			continue
		}
		headers[k] = strings.TrimSpace(value)
	}
	return headers, errors.Join(errs...)
}
