package httpguard

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Exposed reports whether a server listening on address (host:port as http.address takes it, or
// unix:/path) can be reached from other machines: anything but a Unix socket or a loopback host.
// A host name other than localhost counts as exposed, since it may resolve to any interface.
func Exposed(address string) bool {
	if strings.HasPrefix(address, "unix:") {
		return false
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err != nil || !ip.IsLoopback()
}

// hostNames decides which Host header values name this server for a client without the key.
type hostNames struct {
	any      bool
	exact    map[string]bool
	suffixes []string // ".example.com": any name below it
}

// newHostNames builds the matcher from http.allowed_hosts and the listener's own address.
func newHostNames(allowed []string, listenAddress string) (hostNames, error) {
	h := hostNames{exact: map[string]bool{}}
	for _, entry := range allowed {
		name := strings.ToLower(strings.TrimSpace(entry))
		switch {
		case name == "*":
			h.any = true
			continue
		case name == "" || name == "." || name == "*.":
			return hostNames{}, fmt.Errorf("http.allowed_hosts: %q is not a host name", entry)
		case strings.ContainsAny(name, "/:@ \t") || strings.Contains(name[1:], "*"):
			return hostNames{}, fmt.Errorf("http.allowed_hosts: %q: list host names only (no scheme, port or path); .example.com or *.example.com matches the names below it", entry)
		}
		if rest, ok := strings.CutPrefix(name, "*"); ok {
			name = rest
		}
		if strings.HasPrefix(name, ".") {
			h.suffixes = append(h.suffixes, name)
			continue
		}
		h.exact[strings.TrimSuffix(name, ".")] = true
	}
	if host, _, err := net.SplitHostPort(listenAddress); err == nil && host != "" {
		h.exact[strings.ToLower(strings.TrimSuffix(host, "."))] = true
	}
	return h, nil
}

// allows reports whether a request's Host header names this server. IP addresses always do: DNS
// rebinding needs a name, and a page whose origin is an address of this server was served by it.
// An empty Host (HTTP/1.0) cannot come from a browser.
func (h hostNames) allows(hostHeader string) bool {
	if h.any || hostHeader == "" {
		return true
	}
	host := hostHeader
	if name, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = name
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || h.exact[host] {
		return true
	}
	for _, s := range h.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}
