package testkit

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// DNSServer is a real DNS server on loopback UDP serving SRV and A/AAAA records that a test
// changes while it runs (runners added and removed), for fleet discovery.
type DNSServer struct {
	Addr string // host:port it listens on

	srv  *dns.Server
	mu   sync.Mutex
	srvs map[string][]*net.SRV // by fully qualified name
	ips  map[string][]net.IP
}

// StartDNS starts the server; it stops at test cleanup.
func StartDNS(tb testing.TB) *DNSServer {
	tb.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("dns listen: %v", err)
	}
	d := &DNSServer{Addr: pc.LocalAddr().String(), srvs: map[string][]*net.SRV{}, ips: map[string][]net.IP{}}
	started := make(chan struct{})
	d.srv = &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.serve), NotifyStartedFunc: func() { close(started) }}
	go func() { _ = d.srv.ActivateAndServe() }()
	<-started
	tb.Cleanup(func() { _ = d.srv.Shutdown() })
	return d
}

// SetSRV replaces the SRV records of name (nil removes them).
func (d *DNSServer) SetSRV(name string, records []*net.SRV) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.srvs[dns.Fqdn(name)] = records
}

// SetIPs replaces the A and AAAA records of name (nil removes them).
func (d *DNSServer) SetIPs(name string, ips ...net.IP) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ips[dns.Fqdn(name)] = ips
}

// Resolver asks only this server (Go's own resolver, dialled here whatever it asks for).
func (d *DNSServer) Resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, network, d.Addr)
	}}
}

func (d *DNSServer) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	d.mu.Lock()
	known := false
	for _, q := range req.Question {
		name := strings.ToLower(q.Name)
		srvs, hasSRV := d.srvs[name]
		ips, hasIPs := d.ips[name]
		known = known || (hasSRV && len(srvs) > 0) || (hasIPs && len(ips) > 0)
		hdr := func(t uint16) dns.RR_Header {
			return dns.RR_Header{Name: q.Name, Rrtype: t, Class: dns.ClassINET, Ttl: 0}
		}
		switch q.Qtype {
		case dns.TypeSRV:
			for _, s := range srvs {
				m.Answer = append(m.Answer, &dns.SRV{Hdr: hdr(dns.TypeSRV), Priority: s.Priority, Weight: s.Weight, Port: s.Port, Target: dns.Fqdn(s.Target)})
			}
		case dns.TypeA:
			for _, ip := range ips {
				if v4 := ip.To4(); v4 != nil {
					m.Answer = append(m.Answer, &dns.A{Hdr: hdr(dns.TypeA), A: v4})
				}
			}
		case dns.TypeAAAA:
			for _, ip := range ips {
				if ip.To4() == nil {
					m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr(dns.TypeAAAA), AAAA: ip})
				}
			}
		}
	}
	d.mu.Unlock()
	if !known {
		m.Rcode = dns.RcodeNameError
	}
	_ = w.WriteMsg(m)
}
