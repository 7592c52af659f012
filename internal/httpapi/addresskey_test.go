package httpapi

import "testing"

func TestAddressKeyCountsIPv6ByItsSlash64(t *testing.T) {
	for _, c := range []struct{ name, host, want string }{
		{"an IPv4 address is itself", "203.0.113.7", "203.0.113.7"},
		{"an IPv6 address is its /64", "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"another address of the same /64 is the same", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"the next /64 is another", "2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"IPv6 loopback is its /64", "::1", "::/64"},
		{"a zone is dropped", "fe80::1%eth0", "fe80::/64"},
		{"an IPv4-mapped IPv6 address is the IPv4 address", "::ffff:203.0.113.7", "203.0.113.7"},
		{"an IPv4-mapped address in hex is the IPv4 address", "::ffff:cb00:7107", "203.0.113.7"},
		{"what is not an address counts as it is", "@unix", "@unix"},
		{"nothing is nothing", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := addressKey(c.host); got != c.want {
				t.Errorf("addressKey(%q) = %q, want %q", c.host, got, c.want)
			}
		})
	}
}
