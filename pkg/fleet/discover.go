package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// discoverer finds runner endpoints: the static ones, and the DNS names resolved anew each time.
type discoverer struct {
	static   []string
	names    []config.DNSName
	scheme   string // of every DNS-found endpoint (fleet.scheme)
	resolver *net.Resolver
	// last holds each name's last successful answer: a failed lookup keeps it rather than
	// dropping every replica behind the name while DNS hiccups.
	last map[string][]string
}

func newDiscoverer(runners, dns []string, scheme string, resolver *net.Resolver) (*discoverer, error) {
	d := &discoverer{resolver: resolver, scheme: scheme, last: map[string][]string{}}
	if d.resolver == nil {
		d.resolver = net.DefaultResolver
	}
	for _, r := range runners {
		ep, err := config.FleetEndpoint(r, scheme)
		if err != nil {
			return nil, fmt.Errorf("fleet.runners: %w", err)
		}
		d.static = append(d.static, ep)
	}
	for _, entry := range dns {
		n, err := config.ParseFleetDNS(entry)
		if err != nil {
			return nil, fmt.Errorf("fleet.dns: %w", err)
		}
		d.names = append(d.names, n)
	}
	return d, nil
}

// discover returns every endpoint, sorted and without duplicates, and the lookups that failed
// (their names' previous answers are used instead).
func (d *discoverer) discover(ctx context.Context) ([]string, []error) {
	out := slices.Clone(d.static)
	var errs []error
	for _, n := range d.names {
		eps, err := d.resolve(ctx, n)
		if err != nil {
			errs = append(errs, fmt.Errorf("fleet.dns %q: %w", n.Name, err))
			eps = d.last[n.Name]
		} else {
			d.last[n.Name] = eps
		}
		out = append(out, eps...)
	}
	slices.Sort(out)
	return slices.Compact(out), errs
}

// resolve looks one name up: SRV records give target and port (each target resolved to its
// addresses through the same resolver), an A/AAAA name gives addresses for its configured port.
// An empty answer is not an error: a service may have no runner right now.
func (d *discoverer) resolve(ctx context.Context, n config.DNSName) ([]string, error) {
	if !n.SRV {
		return d.addresses(ctx, n.Name, n.Port)
	}
	_, records, err := d.resolver.LookupSRV(ctx, "", "", n.Name)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	var out []string
	for _, r := range records {
		eps, err := d.addresses(ctx, strings.TrimSuffix(r.Target, "."), strconv.Itoa(int(r.Port)))
		if err != nil {
			return nil, fmt.Errorf("SRV target %s: %w", r.Target, err)
		}
		out = append(out, eps...)
	}
	return out, nil
}

func (d *discoverer) addresses(ctx context.Context, host, port string) ([]string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []string{d.scheme + "://" + net.JoinHostPort(host, port)}, nil
	}
	addrs, err := d.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, d.scheme+"://"+net.JoinHostPort(a.IP.String(), port))
	}
	return out, nil
}

func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}
