// Package acmetest runs a real ACME certificate authority for tests: Pebble
// (github.com/letsencrypt/pebble), Let's Encrypt's test CA, as a process of its own on
// free loopback ports, with a DNS server of the test's that sends every name to
// 127.0.0.1. Pebble validates each challenge for real: it connects to the name, at
// the ports Options gives, and checks the answer.
//
// The binary is found at $PETSTORE_TEST_PEBBLE, in $GOPATH/bin (scripts/setup-pebble
// installs it there), or on PATH. Without it a test skips, saying so, unless
// PETSTORE_E2E=1 or CI=true (as .ci/run and CI set): then it fails.
package acmetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/tooltest"
)

// Version is the Pebble the tests are written against (scripts/setup-pebble installs it).
const Version = "v2.10.3"

// Options are the ports Pebble validates challenges at, on the address the name
// resolves to (127.0.0.1): the HTTP-01 challenge's and the TLS-ALPN-01 challenge's.
// A port nothing listens on fails that challenge.
type Options struct {
	HTTPPort int
	TLSPort  int
}

// Server is a running Pebble.
type Server struct {
	// Directory is the ACME directory URL, https://127.0.0.1:PORT/dir.
	Directory string
	// CACertFile is the PEM file of the root that Pebble's own HTTPS (the directory
	// and the management port) is signed by: what an ACME client must trust.
	CACertFile string
	// DNS is the DNS server Pebble resolves names with.
	DNS *DNS

	management string // https://127.0.0.1:PORT
	client     *http.Client
	log        string // Pebble's log file
}

// Required reports whether a missing pebble fails a test rather than skipping it.
func Required() bool { return tooltest.Required() }

// Binary returns the path of the pebble binary, or stops the test: a skip, or a
// failure when Required.
func Binary(t testing.TB) string {
	t.Helper()
	return tooltest.Binary(t, tooltest.Tool{Name: "pebble", Env: "PETSTORE_TEST_PEBBLE", Script: "scripts/setup-pebble", GOPATHFirst: true})
}

// Start starts a Pebble and its DNS server for the test; both stop when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	dns := StartDNS(t)
	pool := writeCert(t, dir)
	// Two free ports can be taken by someone else before Pebble binds them: try again.
	var lastErr error
	for range 5 {
		s, err := start(t, bin, dir, dns, o)
		if err == nil {
			s.CACertFile = filepath.Join(dir, "ca.pem")
			s.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			return s
		}
		lastErr = err
	}
	t.Fatalf("acmetest: pebble did not start: %v", lastErr)
	return nil
}

func start(t testing.TB, bin, dir string, dns *DNS, o Options) (*Server, error) {
	listen, management := freePort(t), freePort(t)
	s := &Server{
		Directory: "https://" + listen + "/dir", DNS: dns,
		management: "https://" + management, log: filepath.Join(dir, "pebble.log"),
	}
	config := map[string]any{"pebble": map[string]any{
		"listenAddress":           listen,
		"managementListenAddress": management,
		"certificate":             filepath.Join(dir, "cert.pem"),
		"privateKey":              filepath.Join(dir, "key.pem"),
		"httpPort":                o.HTTPPort,
		"tlsPort":                 o.TLSPort,
		// Clients poll an authorization or an order every second, not every 3 and 5.
		"retryAfter": map[string]int{"authz": 1, "order": 1},
	}}
	b, _ := json.Marshal(config)
	file := filepath.Join(dir, "pebble.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "-config", file, "-dnsserver", dns.Addr)
	// Validations start at once instead of after a random sleep of up to 5 s; they
	// are still made, and must succeed (never PEBBLE_VA_ALWAYS_VALID).
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := s.waitReady(rootPool(dir), exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return nil, fmt.Errorf("%w; its log:\n%s", err, s.Log())
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("pebble's log:\n%s", s.Log())
		}
	})
	return s, nil
}

// waitReady waits until the directory answers.
func (s *Server) waitReady(pool *x509.CertPool, exited chan error) error {
	c := http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err // back for the caller, which waits for the exit too
			return fmt.Errorf("pebble exited: %v", err)
		default:
		}
		if res, err := c.Get(s.Directory); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("pebble's directory did not answer within 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Log is what Pebble logged so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// Roots returns the root that Pebble issues certificates under (a new one at each
// start), from its management port.
func (s *Server) Roots(t testing.TB) *x509.CertPool {
	t.Helper()
	res, err := s.client.Get(s.management + "/roots/0")
	if err != nil {
		t.Fatalf("acmetest: GET /roots/0: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("acmetest: GET /roots/0: %d %v", res.StatusCode, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("acmetest: /roots/0 is no PEM certificate: %q", b)
	}
	return pool
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// writeCert makes a root and a certificate it signs for Pebble's own HTTPS
// (127.0.0.1 and localhost), into dir's ca.pem, cert.pem and key.pem, and returns a
// pool of the root.
func writeCert(t testing.TB, dir string) *x509.CertPool {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "acmetest root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "pebble"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"ca.pem": {Type: "CERTIFICATE", Bytes: caDER}, "cert.pem": {Type: "CERTIFICATE", Bytes: der},
		"key.pem": {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return rootPool(dir)
}

// rootPool is the pool of the root in dir/ca.pem.
func rootPool(dir string) *x509.CertPool {
	pool := x509.NewCertPool()
	b, _ := os.ReadFile(filepath.Join(dir, "ca.pem"))
	pool.AppendCertsFromPEM(b)
	return pool
}
