package main

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/acmetest"
	"github.com/acme-pets/petstore/internal/servetest"
)

// TestACMEGetsACertificateFromPebble runs the binary with --tls-domain against Pebble,
// a real ACME CA that validates the challenge by connecting to the domain (which its
// DNS server sends to 127.0.0.1): once at the HTTPS port (TLS-ALPN-01), once at the
// redirect listener (HTTP-01), the other port being one nothing listens on, so that
// only the challenge under test can pass. The certificate must verify against
// Pebble's root, and a second start must serve it from the cache without the CA.
func TestACMEGetsACertificateFromPebble(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and Pebble")
	}
	acmetest.Binary(t) // skips before the build when there is no Pebble
	bin := buildPetstore(t)
	const domain = "shop.example.com"
	tests := []struct {
		name     string
		redirect bool
	}{
		{"answering TLS-ALPN-01 on the HTTPS port", false},
		{"answering HTTP-01 on the redirect listener", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, plain, nobody := freeAddr(t), freeAddr(t), freeAddr(t)
			o := acmetest.Options{HTTPPort: portOf(t, nobody), TLSPort: portOf(t, addr)}
			if tt.redirect {
				o = acmetest.Options{HTTPPort: portOf(t, plain), TLSPort: portOf(t, nobody)}
			}
			ca := acmetest.Start(t, o)
			client := domainClient(ca.Roots(t), domain)
			dir := t.TempDir()
			args := []string{
				"--addr", addr, "--admin-addr", "off", "--database", filepath.Join(dir, "p.db"),
				"--tls-domain", domain, "--acme-directory", ca.Directory, "--acme-ca-cert", ca.CACertFile,
				"--acme-email", "ops@example.com",
			}
			if tt.redirect {
				args = append(args, "--http-redirect-addr", plain)
			}
			logs := &syncBuffer{}
			p, err := servetest.ServeWith(client, bin, logs, 60*time.Second, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, logs)
			}
			t.Cleanup(p.Kill)
			res := get200(t, client, p.URL+"/healthz")
			leaf := res.TLS.PeerCertificates[0]
			if res.Proto != "HTTP/2.0" || len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != domain {
				t.Errorf("%s with a certificate for %q; want HTTP/2.0 and %s", res.Proto, leaf.DNSNames, domain)
			}
			waitFor(t, logs, "ACME: certificate ready")
			if !ca.DNS.Asked(domain) {
				t.Error("Pebble never looked the domain up: no challenge was validated")
			}
			if want := "https://" + domain + ":" + strconv.Itoa(portOf(t, addr)) + "/console/accept?token="; !strings.Contains(p.Banner, want) {
				t.Errorf("the invitation link is not on the domain (%s…):\n%s", want, p.Banner)
			}
			if _, err := os.Stat(filepath.Join(dir, "acme", domain)); err != nil {
				t.Errorf("the certificate is not cached beside the database: %v", err)
			}
			if tt.redirect {
				return
			}
			// Again from the cache, with a CA that cannot be reached.
			p.Stop(10 * time.Second)
			for i := range args {
				if args[i] == ca.Directory {
					args[i] = "https://" + nobody + "/dir"
				}
			}
			p, err = servetest.ServeWith(domainClient(ca.Roots(t), domain), bin, logs, 30*time.Second, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, logs)
			}
			t.Cleanup(p.Kill)
			again := get200(t, domainClient(ca.Roots(t), domain), p.URL+"/healthz").TLS.PeerCertificates[0]
			if again.SerialNumber.Cmp(leaf.SerialNumber) != 0 {
				t.Errorf("after a restart, serial %v; want the cached %v", again.SerialNumber, leaf.SerialNumber)
			}
		})
	}
}

// domainClient is a client that connects wherever the URL says but asks for, and
// verifies, the certificate of domain under roots only.
func domainClient(roots *x509.CertPool, domain string) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots, ServerName: domain},
		ForceAttemptHTTP2: true,
	}}
}

func get200(t *testing.T, c *http.Client, url string) *http.Response {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, res.StatusCode)
	}
	return res
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	return n
}
