package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/servetest"
)

func TestTheTLSFlagsThatDoNotGoTogetherAreUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"a certificate without its key", []string{"--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{"a key without its certificate", []string{"--tls-key", "k.pem"}, "--tls-cert and --tls-key go together"},
		{"files and ACME at once", []string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-domain", "shop.example.com"}, "not both"},
		{"an ACME flag without a domain", []string{"--acme-email", "ops@example.com"}, "go with --tls-domain"},
		{"another ACME directory without a domain", []string{"--acme-directory", "https://ca.example/dir"}, "go with --tls-domain"},
		{"a redirect to HTTPS without HTTPS", []string{"--http-redirect-addr", ":80"}, "--http-redirect-addr"},
		{"an IP address for a domain", []string{"--tls-domain", "192.0.2.1"}, "want a DNS name"},
		{"a URL for a domain", []string{"--tls-domain", "https://shop.example.com"}, "want a DNS name"},
		{"an ACME directory over plain HTTP", []string{"--tls-domain", "shop.example.com", "--acme-directory", "http://ca.example/dir"}, "want an https:// URL"},
		{"an http:// public URL with HTTPS", []string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--public-url", "http://shop.example.com"}, "its public URL is https://"},
		{"an http:// public URL with ACME", []string{"--tls-domain", "shop.example.com", "--public-url", "http://shop.example.com"}, "its public URL is https://"},
		{"an ACME contact that is no address", []string{"--tls-domain", "shop.example.com", "--acme-email", "ops"}, "--acme-email"},
		{"ACME on PostgreSQL without a cache directory", []string{"--tls-domain", "shop.example.com", "--database", "postgres://db/shop"}, "needs --acme-cache-dir"},
		{"a negative HSTS max-age", []string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--hsts-max-age", "-1s"}, "--hsts-max-age"},
		{"an HSTS max-age in milliseconds", []string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--hsts-max-age", "1500ms"}, "whole seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runExit(t, noEnv, append([]string{"serve"}, tt.args...)...)
			if code != 2 || !strings.Contains(stderr, tt.says) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.says)
			}
		})
	}
}

func TestACMEKeepsItsCacheBesideTheDatabaseAndLinksOnTheDomain(t *testing.T) {
	tests := []struct {
		name          string
		args          []string
		env           map[string]string
		domains       []string
		cache, public string
	}{
		{"one domain on port 443", []string{"--addr", ":443", "--database", "/var/lib/petstore/shop.db", "--tls-domain", "Shop.Example.com"}, nil,
			[]string{"shop.example.com"}, "/var/lib/petstore/acme", "https://shop.example.com"},
		{"a comma list on another port", []string{"--addr", ":8443", "--tls-domain", "a.example.com,b.example.com"}, nil,
			[]string{"a.example.com", "b.example.com"}, "acme", "https://a.example.com:8443"},
		{"domains from the environment, a cache and a public URL of one's own", []string{"--acme-cache-dir", "/srv/acme", "--public-url", "https://pets.example.com"},
			map[string]string{"PETSTORE_TLS_DOMAIN": "a.example.com, b.example.com"},
			[]string{"a.example.com", "b.example.com"}, "/srv/acme", "https://pets.example.com"},
		{"PostgreSQL with a cache directory", []string{"--database", "postgres://db/shop", "--acme-cache-dir", "/srv/acme", "--tls-domain", "shop.example.com"}, nil,
			[]string{"shop.example.com"}, "/srv/acme", "https://shop.example.com:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseServeConfig(tt.args, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(c.domains, " ") != strings.Join(tt.domains, " ") || c.acmeCacheDir != tt.cache || c.publicURL != tt.public {
				t.Errorf("domains %q, cache %q, public URL %q; want %q, %q, %q", c.domains, c.acmeCacheDir, c.publicURL, tt.domains, tt.cache, tt.public)
			}
		})
	}
}

func TestTheRedirectListenerSendsEveryRequestToHTTPS(t *testing.T) {
	tests := []struct {
		name, publicURL, httpsAddr, host, target, location string
	}{
		{"to the host asked for, at the HTTPS port", "", "[::]:8443", "shop.example.com", "/v1/pets?status=available", "https://shop.example.com:8443/v1/pets?status=available"},
		{"without the port when it is 443", "", "0.0.0.0:443", "shop.example.com:80", "/docs", "https://shop.example.com/docs"},
		{"to an IPv6 host", "", "[::]:443", "[2001:db8::1]:80", "/", "https://[2001:db8::1]/"},
		{"to the public URL when there is one, whatever the Host", "https://pets.example.com/", ":443", "evil.example", "/console", "https://pets.example.com/console"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", tt.target, strings.NewReader("{}"))
			r.Host = tt.host
			w := httptest.NewRecorder()
			redirectToHTTPS(tt.publicURL, tt.httpsAddr).ServeHTTP(w, r)
			if w.Code != http.StatusPermanentRedirect || w.Header().Get("Location") != tt.location {
				t.Errorf("%d to %q; want 308 to %q", w.Code, w.Header().Get("Location"), tt.location)
			}
		})
	}
}

func TestHSTSMaxAgeZeroSendsNoHeader(t *testing.T) {
	ca := newTestCA(t)
	certFile, keyFile := ca.issue(t, t.TempDir(), 1)
	for _, tt := range []struct{ maxAge, want string }{{"17520h", "max-age=63072000"}, {"1h", "max-age=3600"}, {"0", ""}} {
		c, err := parseServeConfig([]string{"--tls-cert", certFile, "--tls-key", keyFile, "--hsts-max-age", tt.maxAge}, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		h, err := c.newHTTPS()
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.handler(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if got := w.Header().Get("Strict-Transport-Security"); got != tt.want {
			t.Errorf("--hsts-max-age %s: Strict-Transport-Security %q, want %q", tt.maxAge, got, tt.want)
		}
	}
}

// TestHTTPSServesHTTP2WithHSTSAndRedirectsPlainHTTP runs the binary with certificate
// files and a redirect listener: the API answers over HTTP/2 with HSTS, says https
// where it listens, the redirect listener sends plain HTTP there, and the operator
// port stays plain HTTP.
func TestHTTPSServesHTTP2WithHSTSAndRedirectsPlainHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ca := newTestCA(t)
	certFile, keyFile := ca.issue(t, t.TempDir(), 7)
	addr, redirect, admin := freeAddr(t), freeAddr(t), freeAddr(t)
	p, err := servetest.ServeWith(ca.client(), buildPetstore(t), io.Discard, 30*time.Second,
		"--addr", addr, "--http-redirect-addr", redirect, "--admin-addr", admin,
		"--database", filepath.Join(t.TempDir(), "p.db"), "--tls-cert", certFile, "--tls-key", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if p.URL != "https://"+addr || !strings.Contains(p.Banner, "https://"+addr+"/console/accept?token=") {
		t.Errorf("listening on %q, invitation in %q; want https://%s for both", p.URL, p.Banner, addr)
	}
	res, err := ca.client().Get(p.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.Proto != "HTTP/2.0" || res.Header.Get("Strict-Transport-Security") != "max-age=63072000" {
		t.Errorf("%s, Strict-Transport-Security %q; want HTTP/2.0 and max-age=63072000", res.Proto, res.Header.Get("Strict-Transport-Security"))
	}
	if !strings.Contains(string(doc), `"url":"https://`+addr+`/v1"`) {
		t.Errorf("the served document does not name https://%s/v1 as its server", addr)
	}

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = noFollow.Post("http://"+redirect+"/v1/orders?x=1", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if want := "https://" + addr + "/v1/orders?x=1"; res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != want {
		t.Errorf("plain HTTP got %d to %q; want 308 to %q", res.StatusCode, res.Header.Get("Location"), want)
	}

	res, err = http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatalf("the operator port no longer speaks plain HTTP: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Strict-Transport-Security") != "" {
		t.Errorf("operator /metrics: %d, HSTS %q; want 200 without HSTS", res.StatusCode, res.Header.Get("Strict-Transport-Security"))
	}
}

// TestSIGHUPReloadsTheCertificateWithoutDroppingConnections runs the binary with
// certificate files, keeps one connection open, and replaces the files: a pair that
// does not load is refused and the old certificate stays; a good one is served to new
// connections after SIGHUP, while the open connection goes on working.
func TestSIGHUPReloadsTheCertificateWithoutDroppingConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ca := newTestCA(t)
	dir := t.TempDir()
	certFile, keyFile := ca.issue(t, dir, 1001)
	logs := &syncBuffer{}
	kept := ca.client() // its one HTTP/2 connection lives across the reloads
	p, err := servetest.ServeWith(kept, buildPetstore(t), logs, 30*time.Second,
		"--addr", freeAddr(t), "--admin-addr", "off", "--no-bootstrap",
		"--database", filepath.Join(dir, "p.db"), "--tls-cert", certFile, "--tls-key", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	first := request(t, kept, p.URL)
	if first.serial != 1001 || first.proto != "HTTP/2.0" {
		t.Fatalf("first request: serial %d over %s; want 1001 over HTTP/2.0", first.serial, first.proto)
	}

	// A certificate with a key that is not its own: refused, the old pair stays.
	other := filepath.Join(t.TempDir(), "other")
	os.Mkdir(other, 0o700)
	newCert, _ := ca.issue(t, other, 1002)
	copyFile(t, newCert, certFile)
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, logs, "TLS certificate not reloaded")
	if got := request(t, ca.client(), p.URL).serial; got != 1001 {
		t.Fatalf("after a bad pair, a new connection got serial %d; want the old 1001", got)
	}

	// Now a good pair.
	certFile2, keyFile2 := ca.issue(t, other, 1003)
	copyFile(t, keyFile2, keyFile)
	copyFile(t, certFile2, certFile)
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, logs, "serial=1003")
	if got := request(t, ca.client(), p.URL).serial; got != 1003 {
		t.Errorf("after the reload a new connection got serial %d; want 1003", got)
	}
	again := request(t, kept, p.URL)
	if !again.reused || again.local != first.local || again.serial != 1001 {
		t.Errorf("the open connection: reused %v, %s (was %s), serial %d; want the same connection, still on 1001", again.reused, again.local, first.local, again.serial)
	}
	select {
	case <-p.Exited():
		t.Fatal("petstore exited on SIGHUP")
	default:
	}
}

// answer is what one request saw of its connection.
type answer struct {
	proto  string
	serial int64 // of the server's certificate
	reused bool
	local  string // the client's end of the connection
}

func request(t *testing.T, c *http.Client, base string) answer {
	t.Helper()
	var a answer
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		a.reused, a.local = i.Reused, i.Conn.LocalAddr().String()
	}}
	r, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "GET", base+"/healthz", nil)
	res, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %d", res.StatusCode)
	}
	a.proto, a.serial = res.Proto, res.TLS.PeerCertificates[0].SerialNumber.Int64()
	return a
}

// waitFor waits (10 s at most) until the log says want.
func waitFor(t *testing.T, logs *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", want, logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// testCA is a certificate authority of the test's own, which its clients trust.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "petstore test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, pool: x509.NewCertPool()}
	ca.pool.AddCert(cert)
	return ca
}

// issue writes cert.pem and key.pem into dir: a certificate for 127.0.0.1 and
// localhost with serial.
func (ca *testCA) issue(t *testing.T, dir string, serial int64) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// client is a new HTTP client, with connections of its own, that trusts the CA and
// speaks HTTP/2.
func (ca *testCA) client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.pool},
		ForceAttemptHTTP2: true,
	}}
}

func TestAFailedTLSHandshakeIsLoggedAtDebugUnlessACMEFailed(t *testing.T) {
	tests := []struct {
		line, level string
	}{
		{"http: TLS handshake error from 192.0.2.1:5555: EOF", "DEBUG"},
		{"http: TLS handshake error from 192.0.2.1:5555: acme/autocert: missing certificate", "WARN"},
		{"http: Accept error: too many open files; retrying in 5ms", "WARN"},
	}
	for _, tt := range tests {
		var b strings.Builder
		serverErrorLog(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}))).Print(tt.line)
		if !strings.Contains(b.String(), "level="+tt.level) {
			t.Errorf("%q logged as %s; want %s", tt.line, b.String(), tt.level)
		}
	}
}

func TestTheBaseURLLeavesOutTheSchemesOwnPort(t *testing.T) {
	tests := []struct{ scheme, addr, want string }{
		{"https", "0.0.0.0:443", "https://localhost"},
		{"https", "[::1]:443", "https://[::1]"},
		{"https", "127.0.0.1:8443", "https://127.0.0.1:8443"},
		{"http", "[::]:80", "http://localhost"},
		{"http", "127.0.0.1:443", "http://127.0.0.1:443"},
	}
	for _, tt := range tests {
		if got := baseURL(tt.scheme, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(tt.addr))); got != tt.want {
			t.Errorf("baseURL(%s, %s) = %s, want %s", tt.scheme, tt.addr, got, tt.want)
		}
	}
}
