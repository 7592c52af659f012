package acmetest

import (
	"context"
	"net"
	"slices"
	"testing"
)

func TestTheDNSServerSendsEveryNameToLoopbackOverTCPAndUDP(t *testing.T) {
	d := StartDNS(t)
	for _, network := range []string{"tcp", "udp"} {
		t.Run(network, func(t *testing.T) {
			r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, d.Addr)
			}}
			name := network + ".shop.example.com"
			addrs, err := r.LookupHost(t.Context(), name)
			if err != nil || !slices.Equal(addrs, []string{"127.0.0.1"}) {
				t.Fatalf("%s resolves to %v (%v); want 127.0.0.1 alone", name, addrs, err)
			}
			if !d.Asked(name) || d.Asked("other.example.com") {
				t.Errorf("Asked(%s) = %v, Asked(other.example.com) = %v; want true, false", name, d.Asked(name), d.Asked("other.example.com"))
			}
		})
	}
}
