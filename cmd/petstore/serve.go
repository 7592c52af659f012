package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/invite"
	"github.com/acme-pets/petstore/internal/mail"
	"github.com/acme-pets/petstore/internal/media"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/sqlite"
	"github.com/acme-pets/petstore/internal/tracing"
	"github.com/acme-pets/petstore/internal/webhook"
)

// serve runs the service until ctx ends: it reads the configuration, wires the
// store, limiter and HTTP layer, and listens.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := parseServeConfig(args, getenv)
	if err != nil {
		return badUsage("serve", err)
	}
	logs := newLogWriter(stderr, logFlushInterval)
	defer logs.Close()
	log, err := newLogger(logs, c.logFormat, c.logLevel)
	if err != nil {
		return err
	}
	tlsOn, err := c.newHTTPS()
	if err != nil {
		return err
	}
	tp, log, stopTracing, err := startTracing(ctx, getenv, log)
	if err != nil {
		return err
	}
	// After the store closes (deferred below, so run before this): the spans of the
	// last requests and deliveries are flushed.
	defer stopTracing()
	d, err := openDeps(ctx, c, log, stdout, tp)
	if err != nil {
		return err
	}
	defer d.close()
	ls, err := c.listen(log, tlsOn)
	if err != nil {
		return err
	}
	base := ls.baseURL()
	// After listening: the first admin's invitation link names the address.
	if err := c.bootstrap(ctx, d.store, stdout, base); err != nil {
		ls.close()
		return err
	}
	api, err := httpapi.New(c.api(d, base))
	if err != nil {
		ls.close()
		return err
	}
	d.busy.Store(api)
	// No webhook may aim at this service's own ports, allowed addresses or not (nor at
	// the deployment's others, --webhooks-deny).
	d.sender.RefuseOwn(ls.addrs()...)
	if tlsOn != nil {
		// Before the server says it listens: from then on, SIGHUP reloads.
		defer tlsOn.start(ctx, c.domains, log)()
	}
	ls.announce(stdout, base)
	finish := startBackground(ctx, c, &d, api, log)
	err = serveOn(ctx, c, log, ls, api)
	finish()
	return err
}

// startBackground starts the work beside the requests: the scheduled backups, the
// purges, the webhook dispatcher and the record of keys' last uses. finish, called
// once the server has shut down, stops them and waits, so that what they write is
// written before the store closes.
func startBackground(ctx context.Context, c serveConfig, d *deps, api *httpapi.Server, log *slog.Logger) (finish func()) {
	// The schedule and the dispatcher stop with contexts of their own: the server
	// may stop before ctx ends (a listener failed), and waiting on them then would
	// hang the process.
	bctx, stopBackups := context.WithCancel(ctx)
	backedUp := make(chan struct{})
	if d.backups != nil {
		go func() { d.backups.run(bctx); close(backedUp) }()
	} else {
		close(backedUp)
	}
	go purgeIdempotencyKeys(ctx, d.store, log)
	go purgeEvents(ctx, d.store, c.eventRetention, log)
	if d.media != nil {
		go sweepPhotos(ctx, d.media, d.store, log)
	}
	// The dispatcher's last attempts are recorded before the store closes.
	dctx, stopDeliveries := context.WithCancel(ctx)
	delivered := make(chan error, 1)
	go func() { delivered <- d.deliveries.Run(dctx) }()
	// Keys' last uses are written until the server has shut down, so that the
	// requests of the grace period count too.
	uctx, stopUses := context.WithCancel(context.WithoutCancel(ctx))
	usesDone := make(chan struct{})
	go func() { api.RecordKeyUses(uctx); close(usesDone) }()
	return func() {
		api.WaitBackground() // the reset mails the last requests started
		stopBackups()
		<-backedUp // a backup under way ends (cancelled)
		stopDeliveries()
		stopUses()
		<-usesDone
		if err := <-delivered; err != nil {
			log.Error("webhook deliveries", "err", err)
		}
	}
}

// deps are what the HTTP layer is wired to: the store, the rate limiter, the log,
// the webhook sender and dispatcher, and the mail sender.
type deps struct {
	store      petstore.Store
	limits     limits
	log        *slog.Logger
	sender     *webhook.Sender
	deliveries *webhook.Dispatcher
	// mail sends the service's mail (--smtp-url); nil when no SMTP server is set.
	// Hand it to an interface (httpapi's Mailer) only when it is not nil: a nil
	// *mail.Sender in an interface is an interface that is not nil.
	mail *mail.Sender
	// busy is the HTTP server, once made: the dispatcher paces itself while it serves
	// requests.
	busy *atomic.Pointer[httpapi.Server]
	// replica is the continuous copy of the database (--replicate-to), or nil.
	replica *replicating
	// backups takes the scheduled backups (--backup-dir); nil without them.
	backups *backupSchedule
	// tracer makes the spans; nil while tracing is off.
	tracer trace.TracerProvider
	// media keeps the files of photos; nil when photos are off.
	media media.Store
}

// openDeps opens the store and the limiter, then makes the demo
// data when asked.
func openDeps(ctx context.Context, c serveConfig, log *slog.Logger, stdout io.Writer, tp *tracing.Provider) (d deps, err error) {
	d.log = log
	if tp != nil { // never a nil *tracing.Provider in the interface
		d.tracer = tp
	}
	if d.mail, err = c.mailer(); err != nil {
		return d, err
	}
	if d.mail != nil {
		log.Info("mail goes through an SMTP server", "server", d.mail.Host(), "from", d.mail.From())
	}
	// The store wakes the dispatcher when a commit queues deliveries; the dispatcher
	// needs the store, so the hook finds it once it is made.
	var wake atomic.Pointer[webhook.Dispatcher]
	nudge := func() {
		if w := wake.Load(); w != nil {
			w.Nudge()
		}
	}
	// The event streams' reader is the HTTP server's, made after the store: the
	// hook finds it once it is made, as the dispatcher's does.
	busy := new(atomic.Pointer[httpapi.Server])
	d.busy = busy
	feed := func() {
		if s := busy.Load(); s != nil {
			s.WakeStreams()
		}
	}
	if d.store, d.replica, err = openServeStore(ctx, c, log, storeHooks{wake: nudge, feed: feed, tracer: d.tracer}); err != nil {
		return d, err
	}
	if err := d.store.SetCurrency(ctx, c.currency); err != nil {
		closeStore(d.store, d.replica, log)
		if e := (*petstore.Error)(nil); errors.As(err, &e) && e.Code == petstore.EConflict {
			return d, fmt.Errorf("--currency %s: %s", c.currency, e.Message)
		}
		return d, err
	}
	d.sender = webhook.NewSender(webhook.SenderOptions{AllowPrivate: c.webhooksAllowPrivate, Deny: c.webhookDeny, UserAgent: "petstore-webhooks/1"})
	d.deliveries = webhook.NewDispatcher(webhook.DispatcherOptions{
		Queue: d.store, Sender: d.sender, Encode: httpapi.EventEncoder(d.store.Currency()), Window: c.webhookWindow, Workers: c.webhookWorkers, Logger: log, Tracer: d.tracer,
		Busy: func() bool {
			s := busy.Load()
			return s != nil && s.Busy()
		},
	})
	wake.Store(d.deliveries)
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	// A database that cannot take a write (a read-only file, a full disk, a standby)
	// would fail every order: refuse to start rather than serve half a service.
	if err := d.store.Ping(ctx); err != nil {
		return d, fmt.Errorf("the database is not ready: %w", err)
	}
	if d.limits, err = newLimits(ctx, c.redis, c.redisPrefix, log); err != nil {
		return d, err
	}
	if d.media, err = c.openMedia(ctx, log); err != nil {
		return d, err
	}
	if c.demo {
		if err := fillDemo(ctx, d.store, d.media, log); err != nil {
			return d, err
		}
	}
	if c.backupDir != "" {
		db, ok := d.store.(*sqlite.DB)
		if !ok {
			return d, fmt.Errorf("--backup-dir: %s", pgBackupHint)
		}
		if d.backups, err = newBackupSchedule(db, c.backupDir, c.backupEvery, c.backupKeep, log); err != nil {
			return d, err
		}
	}
	return d, nil
}

func (d deps) close() {
	if d.limits.close != nil {
		d.limits.close()
	}
	closeStore(d.store, d.replica, d.log)
}

// serveOn serves api on the API listener (over HTTPS when ls.https says), the operator
// routes and the redirect to HTTPS on theirs, until ctx ends; then it shuts down
// gracefully: in-flight requests get the grace period.
func serveOn(ctx context.Context, c serveConfig, log *slog.Logger, ls listeners, api *httpapi.Server) error {
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: c.readHeaderTimeout,
		ReadTimeout:       c.readTimeout,
		WriteTimeout:      c.writeTimeout,
		IdleTimeout:       c.idleTimeout,
		MaxHeaderBytes:    c.maxHeaderBytes,
		ErrorLog:          serverErrorLog(log),
		// Requests must outlive the signal that starts the shutdown: Shutdown lets them
		// finish, and the grace period bounds how long.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	// Shutdown waits for the requests being served; an event stream ends only when
	// told, so the shutdown tells the streams first (their clients reconnect).
	srv.RegisterOnShutdown(api.CloseStreams)
	errc := make(chan error, 3)
	if ls.https != nil {
		srv.Handler = ls.https.handler(api)
		// ServeTLS adds h2 to the configuration's protocols: HTTP/2 with HTTP/1.1.
		srv.TLSConfig = ls.https.config
		go func() { errc <- srv.ServeTLS(ls.api, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ls.api) }()
	}
	others := c.sideServers(ls, api, srv.ErrorLog)
	if ls.admin != nil {
		go func() { errc <- others[0].Serve(ls.admin) }()
	}
	if ls.redirect != nil {
		go func() { errc <- others[len(others)-1].Serve(ls.redirect) }()
	}
	closeOthers := func() {
		for _, s := range others {
			s.Close()
		}
	}
	select {
	case err := <-errc:
		srv.Close()
		closeOthers()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", c.shutdownGrace)
	closeOthers() // profiles, scrapes and redirects need no grace
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// The grace period is over: cut what is left before the store closes under it.
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// serverErrorLog is the error log of the http.Servers, at warn. A failed TLS
// handshake is the client's doing (a scanner, an old client, a cut connection) and
// would fill a public server's log: it is at debug, unless ACME failed in it.
func serverErrorLog(l *slog.Logger) *log.Logger {
	return log.New(errorLogWriter{l}, "", 0)
}

type errorLogWriter struct{ log *slog.Logger }

func (w errorLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	level := slog.LevelWarn
	if strings.HasPrefix(msg, "http: TLS handshake error") && !strings.Contains(msg, "acme/autocert") {
		level = slog.LevelDebug
	}
	w.log.Log(context.Background(), level, msg)
	return len(p), nil
}

// sideServers are the servers of the operator port and of the redirect to HTTPS, in
// that order, for those of ls that are there.
func (c serveConfig) sideServers(ls listeners, api *httpapi.Server, errorLog *log.Logger) []*http.Server {
	var out []*http.Server
	if ls.admin != nil {
		out = append(out, &http.Server{
			// The process's own command line, as pprof would show it (redacted).
			Handler:           operatorRoutes(api, os.Args),
			ReadHeaderTimeout: c.readHeaderTimeout,
			IdleTimeout:       c.idleTimeout,
			ErrorLog:          errorLog,
			// No write timeout: a CPU profile streams for as long as it is asked to.
		})
	}
	if ls.redirect != nil {
		out = append(out, &http.Server{
			Handler:           ls.toHTTPS,
			ReadHeaderTimeout: c.readHeaderTimeout,
			ReadTimeout:       c.readTimeout,
			WriteTimeout:      c.writeTimeout,
			IdleTimeout:       c.idleTimeout,
			MaxHeaderBytes:    c.maxHeaderBytes,
			ErrorLog:          errorLog,
		})
	}
	return out
}

// operatorRoutes are the routes of the operator port: the metrics and the Go
// profiler, which must never be on the public listener.
func operatorRoutes(api *httpapi.Server, args []string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", api.Metrics())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", cmdline(args))
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// purgeIdempotencyKeys deletes expired Idempotency-Keys every hour until ctx ends, so
// that the table holds at most a day of them.
func purgeIdempotencyKeys(ctx context.Context, st petstore.Store, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := st.PurgeIdempotencyKeys(ctx, time.Now().Add(-petstore.IdempotencyTTL))
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("purge idempotency keys", "err", err)
		case n > 0:
			log.Info("purged expired idempotency keys", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// purgeEvents deletes the events older than retention, with their deliveries, every
// hour until ctx ends.
func purgeEvents(ctx context.Context, st petstore.Store, retention time.Duration, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := st.PurgeEvents(ctx, time.Now().Add(-retention))
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("purge events", "err", err)
		case n > 0:
			log.Info("purged events past their retention", "count", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// baseURL is how a client on this machine reaches a listener with scheme (http or
// https): an unspecified host (":8080", "0.0.0.0") becomes localhost, and the
// scheme's own port (80, 443) is left out.
func baseURL(scheme string, a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return scheme + "://" + a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		return scheme + "://" + strings.TrimSuffix(net.JoinHostPort(host, port), ":"+port)
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// bootstrapEmail is the admin account made on first start.
const bootstrapEmail = "admin@petstore.local"

// bootstrap makes the first admin (bootstrap), unless --no-bootstrap; its link is on
// --public-url, else base (where the server listens).
func (c serveConfig) bootstrap(ctx context.Context, st petstore.Store, stdout io.Writer, base string) error {
	if c.noBootstrap {
		return nil
	}
	return bootstrap(ctx, st, stdout, cmp.Or(c.publicURL, base))
}

// bootstrap makes an admin account when the database has no account at all, and
// prints its key once and an invitation link that gives it a password (publicURL's
// /console/accept), so that a new operator can start working at once, with the API
// or in the console.
func bootstrap(ctx context.Context, st petstore.Store, stdout io.Writer, publicURL string) error {
	n, err := st.CountAccounts(ctx)
	if err != nil || n > 0 {
		return err
	}
	acct, err := st.CreateAccount(ctx, bootstrapEmail, "", petstore.Admin)
	if petstore.ErrorCode(err) == petstore.EConflict {
		return nil // another process bootstrapped at the same moment
	}
	if err != nil {
		return err
	}
	key, err := issueKey(ctx, st, acct.ID, "bootstrap")
	if err != nil {
		return err
	}
	_, link, err := invite.Create(ctx, st, publicURL, acct.Email, petstore.Admin, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nFirst start: created the admin account %s. Its API key is shown only this once:\n\n    %s\n\n"+
		"To sign in to the console with a password instead, open this link (once, within 7 days) and choose one:\n\n    %s\n\n"+
		"Turn this off with --no-bootstrap; make more keys with `petstore keys create`, invite staff with `petstore accounts invite`.\n\n",
		bootstrapEmail, key, link)
	return nil
}

// poolStats reports the store's connection pools for the metrics.
func poolStats(st petstore.Store) func() []httpapi.PoolStats {
	switch db := st.(type) {
	case *sqlite.DB:
		return func() []httpapi.PoolStats {
			s := db.Stats()
			return []httpapi.PoolStats{
				{Pool: "writer", MaxOpen: s.Writer.MaxOpenConnections, InUse: s.Writer.InUse, Idle: s.Writer.Idle, WaitCount: s.Writer.WaitCount, WaitDuration: s.Writer.WaitDuration},
				{Pool: "reader", MaxOpen: s.Reader.MaxOpenConnections, InUse: s.Reader.InUse, Idle: s.Reader.Idle, WaitCount: s.Reader.WaitCount, WaitDuration: s.Reader.WaitDuration},
			}
		}
	case *postgres.DB:
		return func() []httpapi.PoolStats {
			s := db.Stats()
			return []httpapi.PoolStats{{
				Pool: "postgres", MaxOpen: int(s.MaxConns()), InUse: int(s.AcquiredConns()), Idle: int(s.IdleConns()),
				WaitCount: s.EmptyAcquireCount(), WaitDuration: s.EmptyAcquireWaitTime(),
			}}
		}
	}
	return nil
}

// storeSystem names the database of st as OpenTelemetry does (db.system.name).
func storeSystem(st petstore.Store) string {
	if _, ok := st.(*postgres.DB); ok {
		return "postgresql"
	}
	return "sqlite"
}
