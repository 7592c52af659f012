package webhook

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Deny is a destination deliveries never go to, whatever else the sender allows: the
// ports Lo to Hi on the addresses of Prefix, or, when Prefix is the zero value, on
// every private and loopback address (where --webhooks-allow-private opens the way
// to the deployment's other instances).
type Deny struct {
	Prefix netip.Prefix
	Lo, Hi uint16
}

// covers reports whether d refuses ap, whose address is unmapped.
func (d Deny) covers(ap netip.AddrPort) bool {
	if ap.Port() < d.Lo || ap.Port() > d.Hi {
		return false
	}
	if !d.Prefix.IsValid() {
		return privateOrLoopback(ap.Addr())
	}
	return d.Prefix.Contains(ap.Addr())
}

// String writes d as ParseDeny reads it.
func (d Deny) String() string {
	ports := strconv.Itoa(int(d.Lo))
	if d.Hi != d.Lo {
		ports += "-" + strconv.Itoa(int(d.Hi))
	}
	switch {
	case !d.Prefix.IsValid():
		return ports
	case d.Prefix.Addr().Is6():
		return "[" + d.Prefix.String() + "]:" + ports
	}
	return d.Prefix.String() + ":" + ports
}

// ParseDeny reads a comma list of destinations to refuse: PORTS (on every private and
// loopback address) or HOST:PORTS, where HOST is an address or a CIDR (IPv6 in
// brackets) and PORTS a port or a range, 6060-6069. "none" is the empty list. Host
// names are not accepted: the sender checks the address it dials, and a name's
// addresses may change.
func ParseDeny(list string) ([]Deny, error) {
	if strings.TrimSpace(list) == "none" {
		return nil, nil
	}
	var out []Deny
	for _, entry := range strings.Split(list, ",") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		d, err := parseDenyEntry(entry)
		if err != nil {
			return nil, fmt.Errorf("%q: %w (want PORT[-PORT] or ADDRESS:PORT[-PORT], ADDRESS an IP address or CIDR, IPv6 in brackets)", entry, err)
		}
		out = append(out, d)
	}
	return out, nil
}

func parseDenyEntry(entry string) (Deny, error) {
	var d Deny
	host, ports := "", entry
	if i := strings.LastIndex(entry, ":"); i >= 0 {
		host, ports = entry[:i], entry[i+1:]
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		} else if strings.Contains(host, ":") {
			return d, fmt.Errorf("an IPv6 address goes in brackets")
		}
		p, err := parseHost(host)
		if err != nil {
			return d, err
		}
		d.Prefix = p
	}
	lo, hi, ok := strings.Cut(ports, "-")
	if !ok {
		hi = lo
	}
	var err error
	if d.Lo, err = parsePort(lo); err != nil {
		return d, err
	}
	if d.Hi, err = parsePort(hi); err != nil {
		return d, err
	}
	if d.Lo > d.Hi {
		return d, fmt.Errorf("the range %s ends before it starts", ports)
	}
	return d, nil
}

func parseHost(host string) (netip.Prefix, error) {
	if strings.Contains(host, "/") {
		p, err := netip.ParsePrefix(host)
		if err != nil {
			return p, fmt.Errorf("%q is not a CIDR", host)
		}
		if p.Addr().Is4In6() {
			return p, fmt.Errorf("%q: write the IPv4 CIDR without the ::ffff: prefix", host)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address", host)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not a port from 1 to 65535", s)
	}
	return uint16(n), nil
}

// RefuseOwn makes the sender refuse the service's own listeners, addrs (its API and
// operator addresses, once bound), whatever else it allows: a webhook aimed at them
// would let an admin post to the operator's profiler or to the API as the service.
// Their ports are refused on every private and loopback address too, since the
// service's instances on other machines usually listen on the same ones. A listener
// on every interface (0.0.0.0, ::) refuses its port on each of the machine's own
// addresses as well, public ones included.
func (s *Sender) RefuseOwn(addrs ...net.Addr) {
	var own []netip.AddrPort
	for _, a := range addrs {
		if t, ok := a.(*net.TCPAddr); ok && t != nil {
			own = append(own, t.AddrPort())
		}
	}
	s.own.Store(&own)
}

// refused reports whether ap reaches one of the deployment's own listeners: this
// service's (RefuseOwn) or one the operator named (SenderOptions.Deny).
func (s *Sender) refused(ap netip.AddrPort) bool {
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	for _, d := range s.deny {
		if d.covers(ap) {
			return true
		}
	}
	own := s.own.Load()
	if own == nil {
		return false
	}
	ip := ap.Addr()
	for _, l := range *own {
		if l.Port() != ap.Port() {
			continue
		}
		lip := l.Addr().Unmap()
		if ip == lip || privateOrLoopback(ip) || ip.IsUnspecified() || lip.IsUnspecified() && machineAddr(ip) {
			return true
		}
	}
	return false
}

// privateOrLoopback reports whether ip is on a private network or this machine: the
// addresses --webhooks-allow-private opens.
func privateOrLoopback(ip netip.Addr) bool { return ip.IsPrivate() || ip.IsLoopback() }

// machineAddr reports whether ip is an address of one of this machine's interfaces.
// Asked only for a dial to one of the service's own ports, so its cost does not
// matter, and it sees interfaces that came up after the start.
func machineAddr(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // unknown: refuse rather than risk it
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == ip {
			return true
		}
	}
	return false
}
