package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/acme"
	"golang.org/x/text/currency"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/mail"
	"github.com/acme-pets/petstore/internal/media"
	"github.com/acme-pets/petstore/internal/media/photo"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/replica"
	"github.com/acme-pets/petstore/internal/tracing"
	"github.com/acme-pets/petstore/internal/webhook"
)

// serveConfig is what `petstore serve` is told by its flags and PETSTORE_* variables,
// checked. Every default is in serveFlags, the one table that the README's
// configuration table is tested against (config_test.go).
type serveConfig struct {
	addr        string
	adminAddr   string
	database    string
	sunsets     repeated
	demo        bool
	noBootstrap bool
	logFormat   string
	logLevel    string
	redis       string
	redisPrefix string
	rateLimit   int
	credLimit   int
	trusted     string
	corsOrigins string
	publicURL   string

	webhooksAllowPrivate bool
	webhooksDeny         string
	webhookWindow        int
	webhookWorkers       int
	eventRetention       time.Duration
	keyMaxLifetime       time.Duration
	currency             string

	smtpURL  string // a secret: it may hold a password (redactDSN)
	smtpFrom string

	handlerTimeout time.Duration
	maxHeaderBytes int

	backupDir   string
	backupEvery time.Duration
	backupKeep  int
	// HTTPS (tls.go): certificate files, or certificates through ACME for tlsDomains.
	tlsCert          string
	tlsKey           string
	tlsDomains       repeated
	acmeCacheDir     string // set by parseServeConfig when empty: beside an SQLite file
	acmeDirectory    string
	acmeEmail        string
	acmeCACert       string
	httpRedirectAddr string
	hstsMaxAge       time.Duration

	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
	shutdownGrace     time.Duration

	replicateTo       string // may hold a key in its URL (redactDSN)
	replicateInterval time.Duration

	// Photos (media.go): files in a directory, or in S3-compatible storage.
	mediaDir         string // set by parseServeConfig when empty: beside an SQLite file
	mediaURL         string // may hold a key in its URL (redactDSN)
	photoCacheBytes  int64
	photoConcurrency int

	// Parsed from the fields above by parseServeConfig.
	sunsetDates    map[string]string
	trustedProxies []netip.Prefix
	webhookDeny    []webhook.Deny
	domains        []string // tlsDomains, split at commas and in lower case
}

// serveFlags registers every flag of `petstore serve` on a new flag set, with its
// default, writing into c.
func serveFlags(c *serveConfig) *flag.FlagSet {
	fs := newFlagSet("serve")
	fs.StringVar(&c.addr, "addr", defaultAddr, "address to listen on: loopback by default; :8080 or 0.0.0.0:8080 listens on every interface (a container, a server)")
	fs.StringVar(&c.adminAddr, "admin-addr", defaultAdminAddr, "operator address for /metrics and /debug/pprof (a bare :port listens on loopback; off turns it off)")
	fs.StringVar(&c.database, "database", defaultDatabase, "SQLite file, or a postgres:// URL")
	fs.Var(&c.sunsets, "sunset", "`OPERATION_ID=YYYY-MM-DD` overrides a deprecated operation's sunset date (repeatable; the variable takes a comma list)")
	fs.BoolVar(&c.demo, "demo", false, "fill an empty database with sample categories, pets and stock")
	fs.BoolVar(&c.noBootstrap, "no-bootstrap", false, "do not create and print an admin key (and its invitation link) on first start")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&c.redis, "redis", "", "Redis URL (redis://host:port/db) to share rate limits between processes")
	fs.StringVar(&c.redisPrefix, "redis-prefix", "petstore:", "start of every key written to Redis, so that deployments can share one")
	fs.IntVar(&c.rateLimit, "rate-limit", 100, "requests per second per account (or client address without a valid key), with a burst as large; 0 turns it off")
	fs.IntVar(&c.credLimit, "credential-limit", httpapi.DefaultCredentialLimit, "sign-ups, HTTP Basic logins and sign-ins (sessions, invitations, resets) per minute per client address; 0 turns the limit off")
	fs.StringVar(&c.trusted, "trusted-proxies", "", "comma-separated addresses or CIDRs of proxies whose X-Forwarded-For names the client")
	fs.StringVar(&c.corsOrigins, "cors-origins", "", "comma-separated browser origins allowed to call the API (none by default)")
	fs.StringVar(&c.publicURL, "public-url", "", "the URL people reach the service at (https://shop.example.com), which invitation and password reset links start with; empty: the address it listens on")
	fs.BoolVar(&c.webhooksAllowPrivate, "webhooks-allow-private", false, "let webhook endpoints be private or loopback addresses, over http too (local development; link-local addresses, the process's own ports and --webhooks-deny stay refused)")
	fs.StringVar(&c.webhooksDeny, "webhooks-deny", defaultWebhooksDeny, "destinations webhooks never reach, even with --webhooks-allow-private (the other instances of a deployment): a comma list of PORT[-PORT] on every private and loopback address, or ADDRESS:PORT[-PORT] (an IP or a CIDR, IPv6 in brackets), or none; the process's own ports are refused on every private and loopback address besides")
	fs.IntVar(&c.webhookWindow, "webhook-window", petstore.DefaultDeliveryWindow, fmt.Sprintf("deliveries one webhook endpoint is sent at once at most (1 to %d); failures narrow an endpoint's window, successes widen it back", petstore.MaxDeliveryWindow))
	fs.IntVar(&c.webhookWorkers, "webhook-workers", webhook.DefaultWorkers, fmt.Sprintf("webhook deliveries in flight at once over every endpoint (1 to %d); each holds a connection and a goroutine, so this bounds the memory deliveries take", petstore.MaxWebhooks*petstore.MaxDeliveryWindow))
	fs.DurationVar(&c.eventRetention, "event-retention", 30*24*time.Hour, "how long the event feed keeps an event and its deliveries")
	fs.DurationVar(&c.keyMaxLifetime, "key-max-lifetime", 0, "longest lifetime of a new API key, and the lifetime of one made without an expiry; 0 allows keys that never expire")
	fs.StringVar(&c.currency, "currency", petstore.DefaultCurrency, "the shop's currency, an ISO 4217 code (EUR, USD, JPY): prices and totals are in its minor unit; a shop with orders keeps the one they are in")
	fs.StringVar(&c.smtpURL, "smtp-url", "", "SMTP server the service sends mail through (invitations, password resets): smtp://user:password@host:port (STARTTLS when offered; port 587 by default) or smtps://… (implicit TLS; 465); put it in the environment, it holds a password")
	fs.StringVar(&c.smtpFrom, "smtp-from", "", "From address of the mail (\"Pet Store <shop@example.com>\"); default petstore@ and the host of the service's public URL")
	fs.StringVar(&c.backupDir, "backup-dir", "", "directory for scheduled backups of the SQLite database (petstore-<UTC time>.db); none by default")
	fs.DurationVar(&c.backupEvery, "backup-every", time.Hour, "how often to take a scheduled backup (1s or more); the first is due this long after the newest backup in --backup-dir, at once if there is none")
	fs.IntVar(&c.backupKeep, "backup-keep", 48, "how many scheduled backups to keep in --backup-dir; older ones are removed")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate file (the chain, leaf first): serve HTTPS with it and --tls-key; SIGHUP reads both files again")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	fs.Var(&c.tlsDomains, "tls-domain", "`DOMAIN` to get a certificate for through ACME (Let's Encrypt by default), accepting the CA's terms of service: serve HTTPS with it (repeatable, or a comma list)")
	fs.StringVar(&c.acmeCacheDir, "acme-cache-dir", "", "directory that keeps the ACME account key and the certificates; default acme beside an SQLite database (a PostgreSQL database needs it set)")
	fs.StringVar(&c.acmeDirectory, "acme-directory", acme.LetsEncryptURL, "directory URL of the ACME CA that --tls-domain asks")
	fs.StringVar(&c.acmeEmail, "acme-email", "", "contact address given to the ACME CA (expiry and incident notices)")
	fs.StringVar(&c.acmeCACert, "acme-ca-cert", "", "PEM file of root certificates to trust, besides the system's, for the ACME directory's own HTTPS (a private CA)")
	fs.StringVar(&c.httpRedirectAddr, "http-redirect-addr", "", "with HTTPS, a plain HTTP address (:80) that redirects to it and answers ACME HTTP-01 challenges")
	fs.DurationVar(&c.hstsMaxAge, "hsts-max-age", 2*365*24*time.Hour, "with HTTPS, the max-age of the Strict-Transport-Security header; 0 sends none")
	fs.DurationVar(&c.handlerTimeout, "handler-timeout", httpapi.DefaultHandlerTimeout, "budget of one request; past it the answer is 503")
	fs.IntVar(&c.maxHeaderBytes, "max-header-bytes", 32<<10, "largest request header block accepted")
	fs.DurationVar(&c.readHeaderTimeout, "read-header-timeout", 5*time.Second, "time to read request headers")
	fs.DurationVar(&c.readTimeout, "read-timeout", 15*time.Second, "time to read a whole request")
	fs.DurationVar(&c.writeTimeout, "write-timeout", 30*time.Second, "time to write a response")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", 120*time.Second, "how long an idle keep-alive connection stays open")
	fs.DurationVar(&c.shutdownGrace, "shutdown-grace", 20*time.Second, "how long in-flight requests may run after SIGINT/SIGTERM")
	fs.StringVar(&c.replicateTo, "replicate-to", "", "copy the SQLite database continuously to file:///dir or s3://bucket/prefix (?endpoint=http://host:port for an S3-compatible server; keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY); see docs/OPERATING.md")
	fs.DurationVar(&c.replicateInterval, "replicate-interval", replica.DefaultInterval, "how often --replicate-to ships new writes; a lost disk loses about two intervals at most")
	fs.StringVar(&c.mediaDir, "media-dir", "", "directory that keeps the photos of pets; default media beside an SQLite database (with PostgreSQL, set it or --media-url, or photos are off)")
	fs.StringVar(&c.mediaURL, "media-url", "", "keep the photos in S3-compatible storage instead, shared by every instance: s3://bucket/prefix (?endpoint=http://host:port for a server other than AWS, &region=…; keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	fs.Int64Var(&c.photoCacheBytes, "photo-cache-bytes", media.DefaultCacheBytes, "memory that serves recent photos, in bytes; a photo served from it reads no disk, no storage and no database")
	fs.IntVar(&c.photoConcurrency, "photo-concurrency", photo.DefaultConcurrency, "photo uploads decoded at once (each may take up to about 400 MB for a 40-megapixel image); the others wait")
	return fs
}

// defaultAddr is where the API listens unless told otherwise: loopback, as the first
// start prints an admin key and a new user has not yet decided to be reachable.
const defaultAddr = "127.0.0.1:8080"

// defaultWebhooksDeny refuses the deployment's other instances on one machine, which
// number their operator and API ports up from the defaults (6060, 8080): a webhook
// aimed at a sibling's profiler or API would act as the service from inside.
const defaultWebhooksDeny = "6060-6069,8080-8089"

// parseServeConfig reads the flags and the environment of `petstore serve` and checks
// them; nothing is opened yet.
func parseServeConfig(args []string, getenv func(string) string) (serveConfig, error) {
	var c serveConfig
	fs := serveFlags(&c)
	if err := parseFlags(fs, args, getenv); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	c.sunsetDates = map[string]string{}
	for _, s := range c.sunsets.values {
		id, date, ok := strings.Cut(s, "=")
		if !ok {
			return c, fmt.Errorf("--sunset %q: want OPERATION_ID=YYYY-MM-DD", s)
		}
		c.sunsetDates[id] = date
	}
	var err error
	if c.trustedProxies, err = parsePrefixes(c.trusted); err != nil {
		return c, fmt.Errorf("--trusted-proxies: %w", err)
	}
	if c.webhookDeny, err = webhook.ParseDeny(c.webhooksDeny); err != nil {
		return c, fmt.Errorf("--webhooks-deny: %w", err)
	}
	if err := c.checkLimits(); err != nil {
		return c, err
	}
	switch c.adminAddr {
	case "off", "":
		c.adminAddr = ""
	case defaultAdminAddr:
	default:
		if c.adminAddr, err = loopbackUnlessTold(c.adminAddr); err != nil {
			return c, fmt.Errorf("--admin-addr: %w", err)
		}
	}
	if err := checkPublicURL(c.publicURL); err != nil {
		return c, err
	}
	if c.currency, err = checkCurrency(c.currency); err != nil {
		return c, err
	}
	if err := c.checkBackups(); err != nil {
		return c, err
	}
	if _, err := newLogger(io.Discard, c.logFormat, c.logLevel); err != nil {
		return c, err
	}
	if err := c.checkTLS(); err != nil {
		return c, err
	}
	if _, err := c.mailer(); err != nil {
		return c, err
	}
	if err := c.checkReplicate(); err != nil {
		return c, err
	}
	if err := c.checkMedia(); err != nil {
		return c, err
	}
	return c, nil
}

// checkLimits checks the flags that are numbers and durations.
func (c serveConfig) checkLimits() error {
	if c.rateLimit < 0 {
		return fmt.Errorf("--rate-limit %d: want 0 (off) or more", c.rateLimit)
	}
	if c.webhookWindow < 1 || c.webhookWindow > petstore.MaxDeliveryWindow {
		return fmt.Errorf("--webhook-window %d: want 1 to %d", c.webhookWindow, petstore.MaxDeliveryWindow)
	}
	if c.webhookWorkers < 1 || c.webhookWorkers > petstore.MaxWebhooks*petstore.MaxDeliveryWindow {
		return fmt.Errorf("--webhook-workers %d: want 1 to %d", c.webhookWorkers, petstore.MaxWebhooks*petstore.MaxDeliveryWindow)
	}
	if c.credLimit < 0 {
		return fmt.Errorf("--credential-limit %d: want 0 (off) or more", c.credLimit)
	}
	for name, d := range map[string]time.Duration{
		"handler-timeout": c.handlerTimeout, "read-header-timeout": c.readHeaderTimeout,
		"read-timeout": c.readTimeout, "write-timeout": c.writeTimeout,
		"idle-timeout": c.idleTimeout, "shutdown-grace": c.shutdownGrace, "event-retention": c.eventRetention,
	} {
		if d <= 0 {
			return fmt.Errorf("--%s %v: want a positive duration", name, d)
		}
	}
	if c.keyMaxLifetime < 0 || c.keyMaxLifetime > 0 && c.keyMaxLifetime < time.Second {
		// Expiries are kept to the second: a shorter limit could make keys born expired.
		return fmt.Errorf("--key-max-lifetime %v: want 0 (no limit) or a second or more", c.keyMaxLifetime)
	}
	if c.maxHeaderBytes <= 0 {
		return fmt.Errorf("--max-header-bytes %d: want a positive size", c.maxHeaderBytes)
	}
	if c.photoCacheBytes < 1<<20 {
		return fmt.Errorf("--photo-cache-bytes %d: want 1048576 (1 MiB) or more", c.photoCacheBytes)
	}
	if c.photoConcurrency < 1 {
		return fmt.Errorf("--photo-concurrency %d: want 1 or more", c.photoConcurrency)
	}
	return nil
}

// mailer is the mail sender of --smtp-url and --smtp-from, nil without --smtp-url.
// Its errors never quote the URL.
func (c serveConfig) mailer() (*mail.Sender, error) {
	if c.smtpFrom != "" {
		if err := mail.CheckAddress(c.smtpFrom); err != nil {
			return nil, fmt.Errorf("--smtp-from: %w", err)
		}
	}
	if c.smtpURL == "" {
		return nil, nil
	}
	from := c.smtpFrom
	if from == "" {
		from = defaultMailFrom(cmp.Or(c.publicURL, "http://"+c.addr)) // only the host counts
	}
	s, err := mail.New(c.smtpURL, from)
	if err != nil {
		return nil, fmt.Errorf("--smtp-url: %w", hideURL(err, c.smtpURL))
	}
	return s, nil
}

// defaultMailFrom is the From address when --smtp-from is not given: petstore at the
// host of the service's public URL, or at localhost when that host is an IP address
// or none (a mail server may refuse either: set --smtp-from).
func defaultMailFrom(publicURL string) string {
	host := ""
	if u, err := url.Parse(publicURL); err == nil {
		host = u.Hostname()
	}
	if host == "" || net.ParseIP(host) != nil || mail.CheckAddress("petstore@"+host) != nil {
		host = "localhost"
	}
	return "petstore@" + strings.ToLower(host)
}

// defaultAdminAddr is the operator port unless told otherwise: on loopback, so that
// only the machine itself (an agent, a sidecar, an operator's shell) reaches it.
const defaultAdminAddr = "127.0.0.1:6060"

// loopbackUnlessTold gives an address without a host (":6060") the loopback host, so
// that the operator port is never public unless a host says so.
func loopbackUnlessTold(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// api is the configuration of the HTTP layer that `petstore serve` runs with. Fields
// it leaves zero take httpapi's defaults (Config.WithDefaults): the key cache above all.
// listening is the address it listens on; the served document names the public URL
// when there is one, since that is where /docs and clients reach the API (behind a
// proxy, or under an ACME domain), not the socket.
func (c serveConfig) api(d deps, listening string) httpapi.Config {
	cfg := httpapi.Config{
		Store:           d.store,
		Logger:          d.log,
		ServerURL:       cmp.Or(c.publicURL, listening),
		Sunsets:         c.sunsetDates,
		HandlerTimeout:  c.handlerTimeout,
		ReadTimeout:     c.readTimeout,
		KeyMaxLifetime:  c.keyMaxLifetime,
		RateLimit:       c.rateLimit,
		Limits:          d.limits.shared,
		CredentialLimit: c.credLimit,
		TrustedProxies:  c.trustedProxies,
		CORSOrigins:     splitList(c.corsOrigins),
		PoolStats:       poolStats(d.store),
		CheckWebhookURL: d.sender.CheckURL,
		Media:           d.media,
		PhotoCacheBytes: c.photoCacheBytes,

		PhotoConcurrency: c.photoConcurrency,
		Collectors:       []prometheus.Collector{d.deliveries},
		PublicURL:        c.publicURL,
	}
	if d.backups != nil {
		cfg.Collectors = append(cfg.Collectors, d.backups.collectors()...)
	}
	if c.credLimit == 0 {
		cfg.CredentialLimit = -1 // off on the command line; zero is the default in httpapi
	}
	if d.mail != nil {
		cfg.Mailer = d.mail // never a nil *mail.Sender in the interface
	}
	if d.tracer != nil {
		// The hot store calls become spans; PoolStats above reads the store itself.
		cfg.Tracer = d.tracer
		cfg.Store = tracing.Store(d.store, d.tracer, storeSystem(d.store))
	}
	return cfg
}

// checkPublicURL accepts an empty public URL (the address the server listens on) or
// an absolute http(s) URL without a query or fragment, which links are built on.
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("--public-url %q: want an http:// or https:// URL such as https://shop.example.com, without a query", s)
	}
	return nil
}

// parsePrefixes reads a comma-separated list of addresses and CIDR prefixes.
func parsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range splitList(list) {
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, err
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// checkCurrency reads an ISO 4217 code (in any letter case) that names a currency: not
// one of the codes for precious metals, units of account and tests, which no shop
// prices in (XAF, XOF, XCD and XPF are currencies and pass).
func checkCurrency(code string) (string, error) {
	u, err := currency.ParseISO(code)
	if err != nil || len(code) != 3 || notMoney[u.String()] {
		return "", fmt.Errorf("--currency %q: want the ISO 4217 code of a currency, such as EUR, USD or JPY", code)
	}
	return u.String(), nil
}

// notMoney are the ISO 4217 codes that name no currency.
var notMoney = map[string]bool{
	"XAU": true, "XAG": true, "XPD": true, "XPT": true, "XBA": true, "XBB": true, "XBC": true,
	"XBD": true, "XDR": true, "XSU": true, "XUA": true, "XTS": true, "XXX": true,
}
