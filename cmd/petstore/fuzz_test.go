package main

import (
	"net"
	"strings"
	"testing"
)

// FuzzParseServeConfig gives `petstore serve` any arguments and environment. It never
// panics, and a configuration it accepts is one the server can run with: positive
// budgets, limits of 0 or more, trusted proxies as masked prefixes, and an operator
// port that is off or has a host (never every interface by accident), and a mail
// sender exactly when an SMTP URL is given.
func FuzzParseServeConfig(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""},
		{"--addr\n:9090\n--rate-limit\n0", ""},
		{"--admin-addr\n:6061", ""},
		{"--admin-addr\noff", "PETSTORE_RATE_LIMIT=5"},
		{"--trusted-proxies\n10.0.0.0/8, 192.168.1.7 ,::1", ""},
		{"--trusted-proxies\n10.0.0.1/33", ""},
		{"--sunset\ngetPetById=2027-06-30\n--sunset\nbad", ""},
		{"--sunset\ngetPetById=9999-12-31\n--key-max-lifetime\n2562047h47m16s", ""}, // the latest date and the longest lifetime
		{"--sunset\ngetPetById=0000-01-01", "PETSTORE_KEY_MAX_LIFETIME=-1s"},
		{"--handler-timeout\n-1s", ""},
		{"", "PETSTORE_CREDENTIAL_LIMIT=-3\nPETSTORE_ADMIN_ADDR=[::1]:0"},
		{"extra", ""},
		{"--smtp-url\nsmtps://u:p%40w@mail.example.com\n--smtp-from\nPet Store <shop@example.com>", ""},
		{"--smtp-from\nshop@example.com", "PETSTORE_SMTP_URL=smtp://u@[::1]:25/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, args, env string) {
		vars := map[string]string{}
		for _, line := range strings.Split(env, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				vars[k] = v
			}
		}
		var argv []string
		if args != "" {
			argv = strings.Split(args, "\n")
		}
		c, err := parseServeConfig(argv, func(k string) string { return vars[k] })
		if err != nil {
			return
		}
		for _, d := range []int64{int64(c.handlerTimeout), int64(c.readHeaderTimeout), int64(c.readTimeout), int64(c.writeTimeout), int64(c.idleTimeout), int64(c.shutdownGrace), int64(c.maxHeaderBytes)} {
			if d <= 0 {
				t.Fatalf("accepted a budget or size of %d: %+v", d, c)
			}
		}
		if c.rateLimit < 0 || c.credLimit < 0 {
			t.Fatalf("accepted negative limits %d, %d", c.rateLimit, c.credLimit)
		}
		for _, p := range c.trustedProxies {
			if !p.IsValid() || p != p.Masked() {
				t.Fatalf("trusted proxy %v is not a masked prefix", p)
			}
		}
		if c.adminAddr != "" {
			host, _, err := net.SplitHostPort(c.adminAddr)
			if err != nil || host == "" {
				t.Fatalf("operator address %q has no host (%v)", c.adminAddr, err)
			}
		}
		if m, err := c.mailer(); err != nil || (m == nil) != (c.smtpURL == "") {
			t.Fatalf("accepted --smtp-url %q, and the sender is %v, %v", c.smtpURL, m, err)
		}
		_ = c.api(deps{}, "http://127.0.0.1:1").WithDefaults()
	})
}
