package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	netmail "net/mail"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// checkTLS checks the HTTPS flags (usage errors) and fills in their defaults: the
// ACME cache beside an SQLite database, and, with --tls-domain, the public URL on the
// first domain. Nothing is read or opened yet.
func (c *serveConfig) checkTLS() error {
	for _, v := range c.tlsDomains.values {
		for _, d := range splitList(v) {
			d = strings.ToLower(d)
			if net.ParseIP(d) != nil || strings.ContainsAny(d, ":/*@ ") || strings.HasSuffix(d, ".") {
				return fmt.Errorf("--tls-domain %q: want a DNS name such as shop.example.com", d)
			}
			c.domains = append(c.domains, d)
		}
	}
	files, acmeOn := c.tlsCert != "" || c.tlsKey != "", len(c.domains) > 0
	switch {
	case (c.tlsCert == "") != (c.tlsKey == ""):
		return errors.New("--tls-cert and --tls-key go together: give both")
	case files && acmeOn:
		return errors.New("--tls-domain gets its certificates through ACME: give it, or --tls-cert and --tls-key, not both")
	case !acmeOn && (c.acmeCacheDir != "" || c.acmeEmail != "" || c.acmeCACert != "" || c.acmeDirectory != acme.LetsEncryptURL):
		return errors.New("the --acme-* flags go with --tls-domain")
	case !files && !acmeOn && c.httpRedirectAddr != "":
		return errors.New("--http-redirect-addr redirects to HTTPS: it needs --tls-cert and --tls-key, or --tls-domain")
	case c.hstsMaxAge < 0 || c.hstsMaxAge%time.Second != 0:
		return fmt.Errorf("--hsts-max-age %v: want 0 (no header) or whole seconds", c.hstsMaxAge)
	case (files || acmeOn) && strings.HasPrefix(c.publicURL, "http://"):
		// The redirect listener sends every request to the public URL: an http://
		// one would send browsers round in a loop, and links in mail would go out
		// in the clear.
		return fmt.Errorf("--public-url %q: the service speaks HTTPS, so its public URL is https://", c.publicURL)
	}
	if !acmeOn {
		return nil
	}
	if u, err := url.Parse(c.acmeDirectory); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("--acme-directory %q: want an https:// URL", c.acmeDirectory)
	}
	if c.acmeEmail != "" {
		if a, err := netmail.ParseAddress(c.acmeEmail); err != nil || a.Name != "" {
			return fmt.Errorf("--acme-email %q: want a bare address such as ops@example.com", c.acmeEmail)
		}
	}
	if c.acmeCacheDir == "" {
		if isPostgres(c.database) {
			// Beside a PostgreSQL database there is no directory; one made per process
			// would get each its own certificates, and the CA limits how many.
			return errors.New("--tls-domain with a PostgreSQL database needs --acme-cache-dir: a directory for the account key and certificates (shared by the instances, where they can share one)")
		}
		c.acmeCacheDir = filepath.Join(filepath.Dir(c.database), "acme")
	}
	if c.publicURL == "" {
		// Links in mail must reach the service from outside, and only the domain's
		// name matches its certificate.
		c.publicURL = "https://" + c.domains[0]
		if _, port, err := net.SplitHostPort(c.addr); err == nil && port != "443" && port != "0" {
			c.publicURL += ":" + port
		}
	}
	return nil
}

// httpsOn is how serve speaks HTTPS: the API listener's TLS configuration, and either
// the certificate files (reloaded on SIGHUP) or the ACME manager.
type httpsOn struct {
	config *tls.Config
	files  *certFiles        // --tls-cert and --tls-key; nil with ACME
	acme   *autocert.Manager // --tls-domain; nil with files
	hsts   []string          // the Strict-Transport-Security value; nil sends none
}

// newHTTPS reads the certificate files, or prepares ACME; nil when serve speaks plain
// HTTP.
func (c serveConfig) newHTTPS() (*httpsOn, error) {
	h := &httpsOn{}
	if c.hstsMaxAge > 0 {
		h.hsts = []string{fmt.Sprintf("max-age=%d", int64(c.hstsMaxAge/time.Second))}
	}
	switch {
	case c.tlsCert != "":
		f, err := loadCertFiles(c.tlsCert, c.tlsKey)
		if err != nil {
			return nil, err
		}
		h.files = f
		h.config = &tls.Config{GetCertificate: f.getCertificate, MinVersion: tls.VersionTLS12}
	case len(c.domains) > 0:
		m, err := c.acmeManager()
		if err != nil {
			return nil, err
		}
		h.acme = m
		// Its NextProtos offer h2 and answer the TLS-ALPN-01 challenge (acme-tls/1).
		h.config = m.TLSConfig()
		h.config.MinVersion = tls.VersionTLS12
	default:
		return nil, nil
	}
	return h, nil
}

// acmeManager gets and renews the certificates of --tls-domain from --acme-directory,
// keeping them in --acme-cache-dir.
func (c serveConfig) acmeManager() (*autocert.Manager, error) {
	client := &acme.Client{DirectoryURL: c.acmeDirectory, UserAgent: "petstore"}
	if c.acmeCACert != "" {
		pem, err := os.ReadFile(c.acmeCACert)
		if err != nil {
			return nil, fmt.Errorf("--acme-ca-cert: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--acme-ca-cert %s: no PEM certificate in it", c.acmeCACert)
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		client.HTTPClient = &http.Client{Transport: t}
	}
	// Made now so that a directory it cannot write stops the start, not a handshake.
	if err := os.MkdirAll(c.acmeCacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("--acme-cache-dir: %w", err)
	}
	return &autocert.Manager{
		Prompt:     autocert.AcceptTOS, // documented: --tls-domain accepts the CA's terms
		Cache:      autocert.DirCache(c.acmeCacheDir),
		HostPolicy: hostsWithoutPort(autocert.HostWhitelist(c.domains...)),
		Email:      c.acmeEmail,
		Client:     client,
	}, nil
}

// hostsWithoutPort lets a challenge come to a redirect listener that is not on port
// 80: the HTTP-01 answer checks the request's Host, which then names the port.
func hostsWithoutPort(allowed autocert.HostPolicy) autocert.HostPolicy {
	return func(ctx context.Context, host string) error {
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		return allowed(ctx, host)
	}
}

// start runs what HTTPS needs beside the listener until ctx ends: with files, a
// reload on every SIGHUP (caught from now on: its default action ends the process);
// with ACME, a first certificate for each domain, so that the first client does not
// wait for it and a failure shows in the log at once. stop stops catching SIGHUP.
func (h *httpsOn) start(ctx context.Context, domains []string, log *slog.Logger) (stop func()) {
	for _, d := range domains {
		go obtain(ctx, h.acme, d, log)
	}
	if h.files == nil {
		return func() {}
	}
	log.Info("HTTPS with the certificate of --tls-cert", certAttrs("", h.files.current.Load().Leaf)...)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go h.files.reloadOn(ctx, hup, log)
	return func() { signal.Stop(hup) }
}

// obtain gets the certificate of domain as a client that takes ECDSA would, and logs
// how that went unless ctx has ended.
func obtain(ctx context.Context, m *autocert.Manager, domain string, log *slog.Logger) {
	hello := &tls.ClientHelloInfo{
		ServerName:       domain,
		CipherSuites:     []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		SignatureSchemes: []tls.SignatureScheme{tls.ECDSAWithP256AndSHA256},
		SupportedCurves:  []tls.CurveID{tls.CurveP256},
	}
	cert, err := m.GetCertificate(hello)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		log.Error("ACME: no certificate yet; a client's handshake asks again", "domain", domain, "err", err)
	case cert.Leaf != nil:
		log.Info("ACME: certificate ready", certAttrs(domain, cert.Leaf)...)
	}
}

// handler wraps the API with the Strict-Transport-Security header.
func (h *httpsOn) handler(api http.Handler) http.Handler {
	if h.hsts == nil {
		return api
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Strict-Transport-Security"] = h.hsts // shared, never changed
		api.ServeHTTP(w, r)
	})
}

// redirect is the handler of --http-redirect-addr: ACME's HTTP-01 challenges, when
// ACME is on, and a permanent redirect of everything else to HTTPS.
func (h *httpsOn) redirect(publicURL, httpsAddr string) http.Handler {
	to := redirectToHTTPS(publicURL, httpsAddr)
	if h.acme != nil {
		return h.acme.HTTPHandler(to)
	}
	return to
}

// redirectToHTTPS sends a request to the same path on publicURL, or, without one, on
// the host the client asked for at the port of httpsAddr. 308 keeps the method and
// the body of a POST (a client that sent one in clear has sent it already).
func redirectToHTTPS(publicURL, httpsAddr string) http.Handler {
	_, port, _ := net.SplitHostPort(httpsAddr)
	base := strings.TrimSuffix(publicURL, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to := base
		if to == "" {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if host == "" {
				http.Error(w, "This address serves HTTPS only; the request named no host.", http.StatusBadRequest)
				return
			}
			to = "https://" + strings.TrimSuffix(net.JoinHostPort(host, port), ":443")
		}
		http.Redirect(w, r, to+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}

// certFiles is the certificate of --tls-cert and --tls-key, read again on SIGHUP.
type certFiles struct {
	cert, key string
	// current is the pair new handshakes get. A reload swaps it whole: a handshake
	// sees the old pair or the new, never half of each, and connections made before
	// keep theirs.
	current atomic.Pointer[tls.Certificate]
}

func loadCertFiles(cert, key string) (*certFiles, error) {
	f := &certFiles{cert: cert, key: key}
	if _, err := f.reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// reload reads both files and serves the pair they hold, or keeps the one it has and
// says why.
func (f *certFiles) reload() (*x509.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s and --tls-key %s: %w", f.cert, f.key, err)
	}
	f.current.Store(&pair)
	return pair.Leaf, nil // LoadX509KeyPair parses the leaf
}

func (f *certFiles) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return f.current.Load(), nil
}

// reloadOn reads the files again at each signal on hup until ctx ends.
func (f *certFiles) reloadOn(ctx context.Context, hup <-chan os.Signal, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		leaf, err := f.reload()
		if err != nil {
			log.Error("SIGHUP: TLS certificate not reloaded; the previous one is still served", "err", err)
			continue
		}
		log.Info("SIGHUP: TLS certificate reloaded", certAttrs("", leaf)...)
	}
}

// certAttrs describe a certificate in the log, with a warning when it has expired.
func certAttrs(domain string, c *x509.Certificate) []any {
	attrs := []any{"names", c.DNSNames, "serial", c.SerialNumber.String(), "not_after", c.NotAfter.UTC().Format(time.RFC3339)}
	if domain != "" {
		attrs = append([]any{"domain", domain}, attrs...)
	}
	if time.Now().After(c.NotAfter) {
		attrs = append(attrs, "expired", true)
	}
	return attrs
}
