package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Fleet is [fleet] (docs/architecture.md, decision 21, a Go extension): attach mode. With Enabled the supervisor
// spawns nothing and reads no connector provider; it finds runners deployed on their own (Runners,
// DNS), polls their endpoints every Refresh and serves the merged API over them.
type Fleet struct {
	Enabled bool
	// Runners are static runner endpoints: host:port or http(s)://host:port.
	Runners []string
	// DNS are names to resolve on every refresh: SRV names (starting with "_", such as
	// _http._tcp.runners.ns.svc.cluster.local) or A/AAAA names with a port (runners.service.consul:8081).
	DNS []string
	// Refresh is how often discovery runs and the runners are polled.
	Refresh time.Duration
	// RunnerAPIKey is the key the runners expect (their http.api_key); a secret. Give the runners a
	// key of their own, not the supervisor's http.api_key (docs/security.md).
	RunnerAPIKey string
	// Scheme is how runners are called that name no scheme themselves (every DNS-found runner,
	// and fleet.runners entries without one): FleetSchemeHTTP (also when "") or FleetSchemeHTTPS.
	Scheme string
	// CAFile is a PEM file of the certificate authorities the runners' certificates must chain to
	// over https; "" is the system's roots. Certificates are always verified.
	CAFile string
	// ServerName is the name the runners' certificates must carry over https; "" is each
	// endpoint's host (an IP address for DNS-found runners).
	ServerName string
}

// The values of fleet.scheme.
const (
	FleetSchemeHTTP  = "http"
	FleetSchemeHTTPS = "https"
)

// DefaultFleetRefresh is fleet.refresh when not set.
const DefaultFleetRefresh = 10 * time.Second

// DNSName is one parsed fleet.dns entry.
type DNSName struct {
	Name string
	SRV  bool   // an SRV name: ports come from the records
	Port string // the port of an A/AAAA name
}

// ParseFleetDNS reads one fleet.dns entry.
func ParseFleetDNS(entry string) (DNSName, error) {
	if strings.HasPrefix(entry, "_") {
		if strings.ContainsAny(entry, ":/ ") {
			return DNSName{}, fmt.Errorf("%q: an SRV name (starting with _) carries no port or scheme", entry)
		}
		return DNSName{Name: entry, SRV: true}, nil
	}
	host, port, err := net.SplitHostPort(entry)
	if err != nil || host == "" {
		return DNSName{}, fmt.Errorf("%q: expected an SRV name such as _http._tcp.runners.svc.cluster.local, or name:port", entry)
	}
	if err := checkPort(port); err != nil {
		return DNSName{}, fmt.Errorf("%q: %w", entry, err)
	}
	return DNSName{Name: host, Port: port}, nil
}

// FleetEndpoint turns one fleet.runners entry (host:port or http(s)://host:port) into the base
// URL the supervisor calls, without a trailing slash; an entry without a scheme takes scheme
// (fleet.scheme; "" is http).
func FleetEndpoint(entry, scheme string) (string, error) {
	raw := entry
	if !strings.Contains(raw, "://") {
		if scheme == "" {
			scheme = FleetSchemeHTTP
		}
		raw = scheme + "://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%q: %w", entry, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: scheme %q: expected http or https", entry, u.Scheme)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("%q: expected host:port or http(s)://host:port, nothing more", entry)
	}
	if u.Hostname() == "" || u.Port() == "" {
		return "", fmt.Errorf("%q: expected host:port or http(s)://host:port", entry)
	}
	if err := checkPort(u.Port()); err != nil {
		return "", fmt.Errorf("%q: %w", entry, err)
	}
	return u.Scheme + "://" + u.Host, nil
}

func checkPort(port string) error {
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("port %q: expected 1..65535", port)
	}
	return nil
}

// validate checks [fleet] when attach mode is on; bad names the key.
func (f Fleet) validate(bad func(key, format string, args ...any) error) error {
	if !f.Enabled {
		return nil
	}
	if len(f.Runners) == 0 && len(f.DNS) == 0 {
		return bad("fleet.runners", "fleet.enabled is true but neither fleet.runners nor fleet.dns names a runner")
	}
	if f.Scheme != "" && f.Scheme != FleetSchemeHTTP && f.Scheme != FleetSchemeHTTPS {
		return bad("fleet.scheme", "%q: expected %s or %s", f.Scheme, FleetSchemeHTTP, FleetSchemeHTTPS)
	}
	for _, r := range f.Runners {
		if _, err := FleetEndpoint(r, f.Scheme); err != nil {
			return bad("fleet.runners", "%v", err)
		}
	}
	for _, d := range f.DNS {
		if _, err := ParseFleetDNS(d); err != nil {
			return bad("fleet.dns", "%v", err)
		}
	}
	if f.Refresh < 100*time.Millisecond {
		return bad("fleet.refresh", "%s: must be at least 100ms", FormatDuration(f.Refresh))
	}
	return nil
}
