package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/api"
	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/console"
	"github.com/acme-pets/petstore/internal/docs"
	"github.com/acme-pets/petstore/internal/eventhub"
	"github.com/acme-pets/petstore/internal/invite"
	"github.com/acme-pets/petstore/internal/media"
	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/ratelimit"
	"github.com/acme-pets/petstore/internal/shop"
	"github.com/acme-pets/petstore/internal/tracing"
	"github.com/acme-pets/petstore/internal/webasset"
	"github.com/acme-pets/petstore/internal/webhook"
)

// apiPrefix is where the API lives: the major version is in the path.
const apiPrefix = "/v1"

// DefaultBodyLimit is the largest request body accepted.
const DefaultBodyLimit = 64 << 10

// Config is what the HTTP layer needs. A zero field takes its default (WithDefaults
// holds them all); a negative duration or limit turns its feature off where that makes
// sense (KeyCacheTTL), and a zero RateLimit turns the general rate limit off.
type Config struct {
	Store  petstore.Store
	Logger *slog.Logger
	// ServerURL is where clients reach the server (scheme://host:port); the served
	// document names ServerURL + "/v1".
	ServerURL string
	// Sunsets overrides the sunset date (YYYY-MM-DD) of deprecated operations by id.
	Sunsets   map[string]string
	Passwords auth.Passwords
	// KeyCacheTTL bounds how long a key revoked by another process keeps working;
	// 0 is auth.DefaultKeyCacheTTL, a negative value turns the cache off.
	KeyCacheTTL time.Duration
	// KeyMaxLifetime is the longest an API key may live, and the lifetime of one made
	// without an expiry; 0 for no limit (keys may then never expire).
	KeyMaxLifetime time.Duration
	BodyLimit      int64
	// HandlerTimeout is each request's budget; past it the answer is 503 unavailable.
	HandlerTimeout time.Duration
	// ReadTimeout is the http.Server's time for a whole request, named in the 408 of a
	// body that came slower (0: not named; the server, not this layer, enforces it).
	ReadTimeout time.Duration
	// RateLimit is how many /v1 requests an account may make per second (a client
	// address without a valid key), and its burst; 0 turns the limit off.
	RateLimit int
	// TrustedProxies are the addresses whose X-Forwarded-For names the client.
	TrustedProxies []netip.Prefix
	// CORSOrigins are the browser origins allowed to call /v1 (none by default).
	CORSOrigins []string
	// CredentialLimit bounds the requests that carry a password (sign-ups and HTTP
	// Basic) per client address per minute; 0 is DefaultCredentialLimit, a negative
	// value turns the limit off.
	CredentialLimit int
	// FailedLoginLimit is how many failed logins an account (by email) may have before
	// its logins are refused for a while; one more is allowed each minute after. 0 is
	// DefaultFailedLoginLimit, a negative value turns it off.
	FailedLoginLimit int
	// Limits is where every limit is kept (the general one, CredentialLimit,
	// FailedLoginLimit); nil keeps them in process memory. With ratelimit.InRedis every
	// process shares them, and while Redis cannot answer each is counted in the
	// process's memory instead (ratelimit.Failover): a limit never lapses.
	Limits ratelimit.Factory
	// PoolStats reports the database pools for the metrics.
	PoolStats func() []PoolStats
	// CheckWebhookURL decides whether a URL may be a webhook endpoint's, and says why
	// not in words that fit after the field's name ("must be an https:// URL"); the
	// command gives the delivery sender's own check (webhook.Sender.CheckURL), so that
	// no endpoint is accepted that the sender would refuse. nil is that check with
	// private addresses refused: https:// only, and no private, loopback or
	// link-local IP address.
	CheckWebhookURL func(string) error
	// Collectors are more metrics served at /metrics, such as the webhook
	// dispatcher's; their label values must come from fixed sets, as the API's do.
	Collectors []prometheus.Collector
	// StreamHeartbeat is the time between an event stream's heartbeat comments
	// (DefaultStreamHeartbeat), StreamsPerAccount how many streams an account may
	// hold open at once in this process (DefaultStreamsPerAccount), and StreamPoll how
	// often the streams' reader reads the feed when no commit of this process woke it
	// (eventhub.DefaultPoll).
	StreamHeartbeat   time.Duration
	StreamsPerAccount int
	StreamPoll        time.Duration
	// PublicURL is where people reach the service (scheme://host[:port][/path]): the
	// links of invitations and password resets start with it, never with a request's
	// Host header, which the client chooses. Empty is ServerURL.
	PublicURL string
	// Mailer sends invitations and reset links; nil for a server without mail.
	Mailer Mailer
	// Tracer, when set, makes a span of each API request, named by its operation id,
	// under the caller's trace when its traceparent header names one; nil (tracing
	// off) costs a request nothing.
	Tracer trace.TracerProvider
	// Media keeps the files of pets' photos (media.NewDir, media.Open); nil for a
	// server that keeps none (the photo operations answer 501). PhotoCacheBytes bounds
	// the memory that serves them (media.DefaultCacheBytes when 0), and
	// PhotoConcurrency how many uploads are decoded at once (photo.DefaultConcurrency).
	Media            media.Store
	PhotoCacheBytes  int64
	PhotoConcurrency int
	// UploadTimeout is the budget of a photo upload, when longer than HandlerTimeout
	// (DefaultUploadTimeout).
	UploadTimeout time.Duration
	Now           func() time.Time
}

// DefaultUploadTimeout is the budget of a photo upload: its body, up to 10 MiB, then
// the decoding and resizing of up to 40 megapixels.
const DefaultUploadTimeout = time.Minute

// DefaultServerURL is the server URL the document names when none is configured.
const DefaultServerURL = "http://localhost:8080"

// WithDefaults returns c with every zero field set to its default. It is the one
// place that holds the HTTP layer's defaults; New applies it, and the command's tests
// check what it gives for the configuration `petstore serve` builds.
func (c Config) WithDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.BodyLimit == 0 {
		c.BodyLimit = DefaultBodyLimit
	}
	if c.HandlerTimeout == 0 {
		c.HandlerTimeout = DefaultHandlerTimeout
	}
	if c.UploadTimeout == 0 {
		c.UploadTimeout = DefaultUploadTimeout
	}
	if c.KeyCacheTTL == 0 {
		c.KeyCacheTTL = auth.DefaultKeyCacheTTL
	}
	if c.ServerURL == "" {
		c.ServerURL = DefaultServerURL
	}
	if c.PublicURL == "" {
		c.PublicURL = c.ServerURL
	}
	if c.CredentialLimit == 0 {
		c.CredentialLimit = DefaultCredentialLimit
	}
	if c.FailedLoginLimit == 0 {
		c.FailedLoginLimit = DefaultFailedLoginLimit
	}
	if c.StreamHeartbeat == 0 {
		c.StreamHeartbeat = DefaultStreamHeartbeat
	}
	if c.StreamsPerAccount == 0 {
		c.StreamsPerAccount = DefaultStreamsPerAccount
	}
	if c.StreamPoll == 0 {
		c.StreamPoll = eventhub.DefaultPoll
	}
	if c.CheckWebhookURL == nil {
		// The safe side: what a sender that may not reach private addresses accepts.
		c.CheckWebhookURL = webhook.NewSender(webhook.SenderOptions{}).CheckURL
	}
	return c
}

// The defaults of the limits on passwords: guessing one account's password gets five
// tries and then one a minute; one address gets ten sign-ups or logins a minute.
const (
	DefaultCredentialLimit  = 10
	DefaultFailedLoginLimit = 5
)

// Server is the whole HTTP surface of the service: /v1, the document and the probes.
type Server struct {
	cfg     Config
	h       *Handler
	api     *oas.Server
	doc     api.Document
	metrics *metrics
	// idLists are the operations with an ids query list, read comma-separated too.
	idLists map[string]bool
	// open are the operations anyone may call, without credentials (security: []).
	open    map[string]bool
	handler http.Handler
	// docs, console and shop are the pages at /docs, /console and /shop, with their
	// assets; home is what / answers, the way to them.
	docs    *webasset.Page
	console *webasset.Page
	shop    *webasset.Page
	home    *home
	// limiter is the general limit (nil when off), and ratePolicy its
	// RateLimit-Policy header value.
	limiter    ratelimit.Limiter
	ratePolicy []string
	// credentials limits requests with a password per client address.
	credentials      ratelimit.Limiter
	credentialPolicy string
	// tracer makes the requests' spans; nil when tracing is off.
	tracer trace.Tracer
	// inFlight counts the API requests being served (the metric's twin, readable
	// without a scrape), for Busy.
	inFlight atomic.Int64
}

// WaitBackground waits for the work that answers started and left running (the
// lookups and mails of password resets).
func (s *Server) WaitBackground() { s.h.resets.Wait() }

// Busy reports whether API requests are being served: background work (webhook
// deliveries) paces itself while they are, so that a sale never waits for it.
func (s *Server) Busy() bool { return s.inFlight.Load() > 0 }

// KeyUseFlush is how often RecordKeyUses writes the keys' last uses: with the
// minute precision they are kept at, a key's lastUsedAt is at most this much behind.
const KeyUseFlush = 10 * time.Second

// RecordKeyUses writes the API keys' last uses to the store every KeyUseFlush, in one
// statement for all keys, until ctx ends; then once more, so that the uses of the
// last requests are kept. Requests only note a use in memory and never wait for it.
func (s *Server) RecordKeyUses(ctx context.Context) {
	t := time.NewTicker(KeyUseFlush)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.flushKeyUses(ctx)
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			s.flushKeyUses(fctx)
			cancel()
			return
		}
	}
}

func (s *Server) flushKeyUses(ctx context.Context) {
	if err := s.h.auth.FlushUses(ctx); err != nil {
		s.cfg.Logger.Warn("record API key uses; retrying at the next flush", "err", err)
	}
}

// New assembles the service's HTTP handler.
func New(cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if cfg.Store == nil {
		return nil, errors.New("httpapi: a Store is required")
	}
	ops, err := api.Operations()
	if err != nil {
		return nil, err
	}
	sunsets, err := sunsetDates(ops, cfg.Sunsets)
	if err != nil {
		return nil, err
	}
	doc, err := api.Render(strings.TrimSuffix(cfg.ServerURL, "/")+apiPrefix, sunsets)
	if err != nil {
		return nil, err
	}
	sunset, err := time.Parse(time.DateOnly, sunsets[getPetByID])
	if err != nil {
		return nil, fmt.Errorf("sunset of getPetById: %w", err)
	}
	m := newMetrics(ops, cfg.PoolStats)
	for _, c := range cfg.Collectors {
		if err := m.registry.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	h := &Handler{
		metrics:     m,
		store:       cfg.Store,
		auth:        auth.NewAuthenticator(cfg.Store, max(cfg.KeyCacheTTL, 0)).WithClock(cfg.Now),
		passwords:   cfg.Passwords.Limit(2 * runtime.GOMAXPROCS(0)),
		log:         cfg.Logger,
		now:         cfg.Now,
		depr:        newDeprecation(sunset),
		checkURL:    cfg.CheckWebhookURL,
		keys:        keyPolicy{allowed: api.RoleScopes(ops), maxLifetime: cfg.KeyMaxLifetime},
		currency:    cfg.Store.Currency(),
		streams:     &streams{open: map[int64]int{}, limit: cfg.StreamsPerAccount},
		heartbeat:   cfg.StreamHeartbeat,
		publicURL:   cfg.PublicURL,
		mailer:      cfg.Mailer,
		resets:      newBackground(),
		readTimeout: cfg.ReadTimeout,
		photos:      newPhotoFiles(cfg),
	}
	h.hub = eventhub.New(eventhub.Options{Feed: cfg.Store, Encode: EventEncoder(h.currency), Poll: cfg.StreamPoll, Logger: cfg.Logger})
	s := &Server{cfg: cfg, h: h, doc: doc, metrics: m, idLists: map[string]bool{}, open: map[string]bool{}}
	for _, op := range ops {
		s.idLists[op.ID] = op.IDs
		s.open[op.ID] = op.Open
	}
	s.setLimits()
	if cfg.Tracer != nil {
		s.tracer = cfg.Tracer.Tracer(tracing.Name)
	}
	s.api, err = oas.NewServer(h, security{h: h, roles: rolesByOperation(ops), scopes: scopesByOperation(ops), ownKey: ownKeyByOperation(ops)},
		oas.WithPathPrefix(apiPrefix),
		oas.WithErrorHandler(decodeError(cfg.Logger, cfg.ReadTimeout, lazySchemas(doc.JSON, cfg.Logger))),
		oas.WithNotFound(notFound),
		oas.WithMethodNotAllowed(methodNotAllowed),
	)
	if err != nil {
		return nil, fmt.Errorf("new oas server: %w", err)
	}
	if s.docs, err = docs.New(doc.JSON); err != nil {
		return nil, fmt.Errorf("docs page: %w", err)
	}
	if s.console, err = console.New(); err != nil {
		return nil, fmt.Errorf("console page: %w", err)
	}
	if s.shop, err = shop.New(); err != nil {
		return nil, fmt.Errorf("shop page: %w", err)
	}
	if s.home, err = newHome(doc.JSON); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// setLimits makes the server's rate limiters from its configuration: per account,
// per address for credential checks, and per email for failed logins.
func (s *Server) setLimits() {
	cfg := s.cfg
	limit := limits(cfg, s.metrics)
	if n := cfg.FailedLoginLimit; n > 0 {
		s.h.failedLogins = limit(n, time.Duration(n)*time.Minute)
	}
	if cfg.CredentialLimit > 0 {
		s.credentials = limit(cfg.CredentialLimit, time.Minute)
		s.credentialPolicy = `"credentials";q=` + strconv.Itoa(cfg.CredentialLimit) + `;w=60`
	}
	if cfg.RateLimit > 0 {
		s.limiter = limit(cfg.RateLimit, time.Second)
		s.ratePolicy = []string{`"default";q=` + strconv.Itoa(cfg.RateLimit) + `;w=1`}
	}
}

// lazySchemas reads the request schemas of doc on the first refused request: the
// error path needs them, no other.
func lazySchemas(doc []byte, log *slog.Logger) func() *requestSchemas {
	return sync.OnceValue(func() *requestSchemas {
		rs, err := newRequestSchemas(doc)
		if err != nil { // the document the service serves: cannot fail
			log.Error("read the request schemas of the document", "err", err)
		}
		return rs
	})
}

// sunsetDates merges the operator's overrides into the document's sunset dates and
// checks them.
func sunsetDates(ops []api.Operation, overrides map[string]string) (map[string]string, error) {
	dates := map[string]string{}
	for _, op := range ops {
		if op.Sunset != "" {
			dates[op.ID] = op.Sunset
		}
	}
	for id, date := range overrides {
		if _, ok := dates[id]; !ok {
			return nil, fmt.Errorf("sunset %s=%s: no deprecated operation has id %q", id, date, id)
		}
		if _, err := time.Parse(time.DateOnly, date); err != nil {
			return nil, fmt.Errorf("sunset %s=%s: want a date as YYYY-MM-DD", id, date)
		}
		dates[id] = date
	}
	return dates, nil
}

func (s *Server) routes() {
	mux := http.NewServeMux()
	api := s.v1(http.HandlerFunc(s.serveAPI))
	mux.Handle(apiPrefix+"/", api)
	mux.HandleFunc(photoPattern, s.servePhoto)
	mux.HandleFunc("GET /openapi.yaml", s.serveDocument("application/yaml", s.doc.YAML))
	mux.HandleFunc("GET /openapi.json", s.serveDocument("application/json", s.doc.JSON))
	for _, p := range s.docs.Paths() {
		mux.Handle("GET "+p, s.docs)
	}
	mux.Handle("GET /docs/{$}", http.RedirectHandler("/docs", http.StatusMovedPermanently))
	for _, p := range s.console.Paths() {
		mux.Handle("GET "+p, s.console)
	}
	mux.Handle("GET /console/{$}", http.RedirectHandler("/console", http.StatusMovedPermanently))
	// The pages of the one-time links (invitations, password resets) are the console's
	// page, which reads the token; Referrer-Policy: no-referrer (webasset.ServePage)
	// keeps the token out of every request the page makes.
	for _, p := range linkPages {
		mux.HandleFunc("GET "+p, s.serveLinkPage)
	}
	for _, p := range s.shop.Paths() {
		mux.Handle("GET "+p, s.shop)
	}
	mux.Handle("GET /shop/{$}", http.RedirectHandler("/shop", http.StatusMovedPermanently))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", s.ready)
	// Every method, so that one other than GET and HEAD gets the 405 of the error body,
	// not the 404 of the catch-all below.
	mux.Handle("/{$}", s.home)
	mux.HandleFunc("/", notFound)
	s.handler = s.outer(apiFirst(api, mux))
}

// apiFirst sends a request for the API proper straight to api, where mux would send
// it too, and every other one to mux: ServeMux's match of /v1/ costs five allocations
// and a walk of its tree on the hottest requests. The photos (a pattern of mux's own)
// and a path that mux would clean and redirect (//, /./, /../) still go to mux.
func apiFirst(api, mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; strings.HasPrefix(p, apiPrefix+"/") && !strings.HasPrefix(p, photoPrefix) && isCleanPath(p) {
			api.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// isCleanPath reports whether ServeMux would leave p as it is rather than redirect
// to its clean form (path.Clean, keeping a trailing slash).
func isCleanPath(p string) bool {
	if strings.HasSuffix(p, "/") {
		return len(p) > 1 && path.Clean(p)+"/" == p
	}
	return path.Clean(p) == p
}

// linkPages are the console's pages that the links of invitations and resets open.
var linkPages = []string{invite.AcceptPath, resetPath}

// serveLinkPage serves the console's page at a link's path, never stored by a cache
// (the URL holds a token).
func (s *Server) serveLinkPage(w http.ResponseWriter, r *http.Request) {
	r2 := r.Clone(r.Context())
	r2.URL.Path = console.Prefix
	s.console.ServeHTTP(noStoreWriter{w}, r2)
}

// noStoreWriter makes its response Cache-Control: no-store, whatever the handler set.
type noStoreWriter struct{ http.ResponseWriter }

func (w noStoreWriter) WriteHeader(code int) {
	w.Header()["Cache-Control"] = noStore
	w.ResponseWriter.WriteHeader(code)
}

func (w noStoreWriter) Write(b []byte) (int, error) {
	w.Header()["Cache-Control"] = noStore
	return w.ResponseWriter.Write(b)
}

// serveAPI serves an API request by the operation the middleware found for it (v1),
// without the generated server's routing it again; a request no operation matches goes
// to the generated router for its 404, or its 405 with Allow.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	if !s.api.ServeRoute(info(r.Context()).route, w, r) {
		s.api.ServeHTTP(w, r)
	}
}

// Metrics serves the Prometheus metrics of this server. They tell order volumes and
// the state of the pools, so they belong on the operator port, not on the public one.
func (s *Server) Metrics() http.Handler {
	return promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})
}

// ServeHTTP serves every route of the service.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) serveDocument(contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if s.h.orders.failing(s.cfg.Now()) {
		writeError(w, petstore.Errorf(petstore.EUnavailable, "Orders cannot be committed: the last %d failed.", orderFailureRun))
		return
	}
	if err := s.cfg.Store.Ping(ctx); err != nil {
		s.cfg.Logger.WarnContext(ctx, "not ready", "err", err)
		writeError(w, petstore.Errorf(petstore.EUnavailable, "The database is unreachable."))
		return
	}
	writeStatus(w, http.StatusOK, "ready")
}

func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, "{\"status\":%q}\n", status)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, petstore.Errorf(petstore.ENotFound, "No route matches %s %s.", r.Method, r.URL.Path))
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, allowed string) {
	w.Header().Set("Allow", allowed)
	writeError(w, petstore.Errorf(petstore.EMethodNotAllowed, "%s is not allowed here; use %s.", r.Method, allowed))
}

// limits returns the Factory of the server's limits: process memory, or cfg.Limits
// with process memory in its stead while it cannot answer. The shared store's state is
// logged once per change and exported as metrics.
func limits(cfg Config, m *metrics) ratelimit.Factory {
	if cfg.Limits == nil {
		return ratelimit.InMemory
	}
	f := ratelimit.NewFailover(cfg.Limits, ratelimit.InMemory, func(up bool, err error) {
		if up {
			cfg.Logger.Info("shared rate limits answer again; counting there")
			return
		}
		cfg.Logger.Warn("shared rate limits unavailable; counting in this process's memory until they answer", "err", err)
	})
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "petstore_rate_limit_shared_up",
			Help: "1 while the shared store of the rate limits (Redis) answers, 0 while limits are counted in this process's memory instead.",
		}, func() float64 {
			if f.Up() {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "petstore_rate_limit_local_decisions_total",
			Help: "Rate-limit decisions made in this process's memory because the shared store did not answer.",
		}, func() float64 { return float64(f.LocalDecisions()) }),
	)
	return f.Limit
}
