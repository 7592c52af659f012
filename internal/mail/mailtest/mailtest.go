// Package mailtest runs a real SMTP server for tests: Mailpit
// (github.com/axllent/mailpit), a process of its own on free loopback ports, whose
// HTTP API tells what it received.
//
// The binary is found on PATH, at $PETSTORE_TEST_MAILPIT, or in $GOPATH/bin
// (scripts/setup-mailpit installs it there). Without it a test skips, saying so,
// unless PETSTORE_E2E=1 or CI=true (as .ci/run and CI set): then it fails.
package mailtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/tooltest"
)

// Version is the Mailpit the tests are written against (scripts/setup-mailpit installs it).
const Version = "v1.33.1"

// Options are how the server is started; the zero value is a plain server on
// loopback that takes mail from anyone, without TLS or authentication.
type Options struct {
	// Host is the address the SMTP port listens on; 127.0.0.1 when empty. The HTTP
	// API listens on 127.0.0.1.
	Host string
	// TLS gives the server a certificate (see NewCert): it offers STARTTLS.
	TLS *Cert
	// RequireSTARTTLS refuses every command but EHLO, STARTTLS, NOOP and QUIT before
	// STARTTLS; needs TLS.
	RequireSTARTTLS bool
	// ImplicitTLS makes the SMTP port speak TLS from the first byte (smtps://); needs TLS.
	ImplicitTLS bool
	// Users are the only user names and passwords the server accepts (AUTH PLAIN or
	// LOGIN); mail without them is refused.
	Users map[string]string
	// AcceptAnyAuth accepts any user name and password, and mail without them too.
	AcceptAnyAuth bool
	// AuthWithoutTLS offers AUTH on a connection without TLS (Mailpit offers it only
	// after STARTTLS otherwise).
	AuthWithoutTLS bool
}

// Server is a running Mailpit.
type Server struct {
	// SMTP is the SMTP server's host:port (on 127.0.0.1 unless Options.Host says).
	SMTP string
	// API is the base of the HTTP API, http://127.0.0.1:PORT.
	API string

	log string // Mailpit's log file
}

// Message is a received mail as Mailpit read it.
type Message struct {
	ID      string
	From    string   // the From header's address
	To      []string // the To header's addresses
	Subject string   // decoded
	Text    string   // the plain text body, decoded
	Raw     string   // the message as received (headers and body)
}

// Required reports whether a missing mailpit fails a test rather than skipping it.
func Required() bool { return tooltest.Required() }

// Binary returns the path of the mailpit binary, or stops the test: a skip, or a
// failure when Required.
func Binary(t testing.TB) string {
	t.Helper()
	return tooltest.Binary(t, tooltest.Tool{Name: "mailpit", Env: "PETSTORE_TEST_MAILPIT", Script: "scripts/setup-mailpit"})
}

// Start starts a Mailpit for the test; it stops when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	var args []string
	if o.TLS != nil {
		args = append(args, "--smtp-tls-cert", o.TLS.CertFile, "--smtp-tls-key", o.TLS.KeyFile)
		if o.ImplicitTLS {
			args = append(args, "--smtp-require-tls")
		}
		if o.RequireSTARTTLS {
			args = append(args, "--smtp-require-starttls")
		}
	} else if o.ImplicitTLS || o.RequireSTARTTLS {
		t.Fatal("mailtest: ImplicitTLS and RequireSTARTTLS need TLS")
	}
	if len(o.Users) > 0 {
		var b strings.Builder
		for u, p := range o.Users {
			fmt.Fprintf(&b, "%s:%s\n", u, p) // plain text: the file format accepts it
		}
		file := filepath.Join(dir, "users")
		if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--smtp-auth-file", file)
	}
	if o.AcceptAnyAuth {
		args = append(args, "--smtp-auth-accept-any")
	}
	if o.AuthWithoutTLS {
		args = append(args, "--smtp-auth-allow-insecure")
	}
	// Two free ports can be taken by someone else before Mailpit binds them: try again.
	host := o.Host
	if host == "" {
		host = "127.0.0.1"
	}
	var lastErr error
	for range 5 {
		s, err := start(t, bin, dir, host, args)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("mailtest: mailpit did not start: %v", lastErr)
	return nil
}

func start(t testing.TB, bin, dir, host string, extra []string) (*Server, error) {
	smtpAddr, apiAddr := freePort(t, host), freePort(t, "127.0.0.1")
	s := &Server{SMTP: smtpAddr, API: "http://" + apiAddr, log: filepath.Join(dir, "mailpit.log")}
	os.Remove(s.log)
	args := append([]string{
		"--smtp", smtpAddr, "--listen", apiAddr,
		"--database", filepath.Join(dir, "mailpit.db"),
		"--log-file", s.log, "--verbose",
		"--disable-version-check", "--smtp-disable-rdns",
	}, extra...)
	os.Remove(filepath.Join(dir, "mailpit.db"))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := s.waitReady(exited); err != nil {
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
			t.Logf("mailpit's log:\n%s", s.Log())
		}
	})
	return s, nil
}

// waitReady waits until the API answers /readyz and the SMTP port takes a connection.
func (s *Server) waitReady(exited chan error) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err // back for the caller, which waits for the exit too
			return fmt.Errorf("mailpit exited: %v", err)
		default:
		}
		if s.ready() {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("mailpit was not ready within 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) ready() bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(s.API + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	conn, err := net.DialTimeout("tcp", s.SMTP, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// Log is what Mailpit logged so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// URL is an SMTP URL of the server with scheme (smtp or smtps) and, when user is
// not empty, the credentials.
func (s *Server) URL(scheme, user, password string) string {
	u := url.URL{Scheme: scheme, Host: s.SMTP}
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	return u.String()
}

func freePort(t testing.TB, host string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Messages returns every message received so far, oldest first.
func (s *Server) Messages(t testing.TB) []Message {
	t.Helper()
	var list struct {
		Messages []struct{ ID string }
	}
	s.get(t, "/api/v1/messages?limit=1000", &list)
	out := make([]Message, 0, len(list.Messages))
	for _, m := range slices.Backward(list.Messages) { // Mailpit lists the newest first
		out = append(out, s.message(t, m.ID))
	}
	return out
}

// WaitMessages waits (10 s at most) until n messages or more have arrived, and
// returns them all, oldest first.
func (s *Server) WaitMessages(t testing.TB, n int) []Message {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list struct{ Total int }
		s.get(t, "/api/v1/messages?limit=1", &list)
		if list.Total >= n {
			return s.Messages(t)
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailtest: %d message(s) arrived in 10s, want %d", list.Total, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) message(t testing.TB, id string) Message {
	t.Helper()
	type address struct{ Address string }
	var m struct {
		ID      string
		From    address
		To      []address
		Subject string
		Text    string
	}
	s.get(t, "/api/v1/message/"+url.PathEscape(id), &m)
	out := Message{ID: m.ID, From: m.From.Address, Subject: m.Subject, Text: m.Text}
	for _, a := range m.To {
		out.To = append(out.To, a.Address)
	}
	out.Raw = string(s.fetch(t, "/api/v1/message/"+url.PathEscape(id)+"/raw"))
	return out
}

func (s *Server) get(t testing.TB, path string, into any) {
	t.Helper()
	if err := json.Unmarshal(s.fetch(t, path), into); err != nil {
		t.Fatalf("mailtest: GET %s: %v", path, err)
	}
}

func (s *Server) fetch(t testing.TB, path string) []byte {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(s.API + path)
	if err != nil {
		t.Fatalf("mailtest: GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("mailtest: GET %s: %d %s %v", path, resp.StatusCode, b, err)
	}
	return b
}

// Cert is a self-signed certificate for 127.0.0.1 and localhost, in files for
// Mailpit, and the pool a client trusts it with.
type Cert struct {
	CertFile, KeyFile string
	Pool              *x509.CertPool
}

// NewCert makes a certificate for 127.0.0.1, ::1 and localhost, valid for a day.
func NewCert(t testing.TB) *Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "mailtest"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:     []string{"localhost"},
		IsCA:         true,

		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &Cert{CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"), Pool: x509.NewCertPool()}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(c.CertFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	if !c.Pool.AppendCertsFromPEM(certPEM) {
		t.Fatal("mailtest: the certificate does not parse")
	}
	return c
}

// Header returns the value of the first header name in a raw message, unfolded, ""
// when it has none.
func Header(raw, name string) string {
	head, _, _ := strings.Cut(raw, "\r\n\r\n")
	var value []string
	found := false
	for line := range strings.SplitSeq(head, "\r\n") {
		switch {
		case found && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")):
			value = append(value, line)
		case found:
			return strings.Join(value, "")
		default:
			if n, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(n, name) {
				found, value = true, []string{strings.TrimLeft(v, " ")}
			}
		}
	}
	return strings.Join(value, "")
}

// Body returns the body of a raw message, after its headers.
func Body(raw string) string {
	_, body, _ := strings.Cut(raw, "\r\n\r\n")
	return body
}
