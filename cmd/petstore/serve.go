package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

type serveConfig struct {
	addr        string
	database    string
	sunsets     repeated
	demo        bool
	noBootstrap bool
	logFormat   string
	logLevel    string
	redis       string
	rateLimit   int
	trusted     string
	corsOrigins string

	handlerTimeout time.Duration
	maxHeaderBytes int

	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
	shutdownGrace     time.Duration
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var c serveConfig
	fs := flag.NewFlagSet("petstore serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", ":8080", "address to listen on")
	fs.StringVar(&c.database, "database", defaultDatabase, "SQLite file, or a postgres:// URL")
	fs.Var(&c.sunsets, "sunset", "OPERATION_ID=YYYY-MM-DD: override a deprecated operation's sunset date (repeatable)")
	fs.BoolVar(&c.demo, "demo", false, "fill an empty database with sample categories, pets and stock")
	fs.BoolVar(&c.noBootstrap, "no-bootstrap", false, "do not create and print an admin key on first start")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&c.redis, "redis", "", "Redis URL (redis://host:port/db) to share rate limits between processes")
	fs.IntVar(&c.rateLimit, "rate-limit", 100, "requests per second per API key (or client address), with a burst as large; 0 turns it off")
	fs.StringVar(&c.trusted, "trusted-proxies", "", "comma-separated addresses or CIDRs of proxies whose X-Forwarded-For names the client")
	fs.StringVar(&c.corsOrigins, "cors-origins", "", "comma-separated browser origins allowed to call the API (none by default)")
	fs.DurationVar(&c.handlerTimeout, "handler-timeout", httpapi.DefaultHandlerTimeout, "budget of one request; past it the answer is 503")
	fs.IntVar(&c.maxHeaderBytes, "max-header-bytes", 32<<10, "largest request header block accepted")
	fs.DurationVar(&c.readHeaderTimeout, "read-header-timeout", 5*time.Second, "time to read request headers")
	fs.DurationVar(&c.readTimeout, "read-timeout", 15*time.Second, "time to read a whole request")
	fs.DurationVar(&c.writeTimeout, "write-timeout", 30*time.Second, "time to write a response")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", 120*time.Second, "how long an idle keep-alive connection stays open")
	fs.DurationVar(&c.shutdownGrace, "shutdown-grace", 20*time.Second, "how long in-flight requests may run after SIGINT/SIGTERM")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	log, err := newLogger(stderr, c.logFormat, c.logLevel)
	if err != nil {
		return err
	}
	sunsets := map[string]string{}
	for _, s := range c.sunsets.values {
		id, date, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("--sunset %q: want OPERATION_ID=YYYY-MM-DD", s)
		}
		sunsets[id] = date
	}

	trusted, err := parsePrefixes(c.trusted)
	if err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	if c.rateLimit < 0 {
		return fmt.Errorf("--rate-limit %d: want 0 (off) or more", c.rateLimit)
	}

	st, err := openStore(ctx, c.database)
	if err != nil {
		return err
	}
	defer st.Close()
	limiter, closeLimiter, err := newLimiter(ctx, c.rateLimit, c.redis)
	if err != nil {
		return err
	}
	defer closeLimiter()
	if !c.noBootstrap {
		if err := bootstrap(ctx, st, stdout); err != nil {
			return err
		}
	}
	if c.demo {
		if err := fillDemo(ctx, st, log); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	base := baseURL(ln.Addr())
	api, err := httpapi.New(httpapi.Config{
		Store:          st,
		Logger:         log,
		ServerURL:      base,
		Sunsets:        sunsets,
		HandlerTimeout: c.handlerTimeout,
		Limiter:        limiter,
		TrustedProxies: trusted,
		CORSOrigins:    splitList(c.corsOrigins),
		PoolStats:      poolStats(st),
	})
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: c.readHeaderTimeout,
		ReadTimeout:       c.readTimeout,
		WriteTimeout:      c.writeTimeout,
		IdleTimeout:       c.idleTimeout,
		MaxHeaderBytes:    c.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// Requests must outlive the signal that starts the shutdown: Shutdown lets them
		// finish, and the grace period bounds how long.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	fmt.Fprintf(stdout, "petstore listening on %s\n  API       %s/v1\n  docs      %s/docs\n  document  %s/openapi.yaml\n", base, base, base, base)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	go purgeIdempotencyKeys(ctx, st, log)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", c.shutdownGrace)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// The grace period is over: cut what is left before the store closes under it.
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// purgeIdempotencyKeys deletes expired Idempotency-Keys every hour until ctx ends, so
// that the table holds at most a day of them.
func purgeIdempotencyKeys(ctx context.Context, st petstore.Store, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := st.PurgeIdempotencyKeys(ctx, time.Now().Add(-httpapi.IdempotencyTTL))
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

// baseURL is how a client on this machine reaches a listener: an unspecified host
// (":8080", "0.0.0.0") becomes localhost.
func baseURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
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

// bootstrap makes an admin account and prints its key once when the database has no
// account at all, so that a new operator can start working at once.
func bootstrap(ctx context.Context, st petstore.Store, stdout io.Writer) error {
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
	fmt.Fprintf(stdout, "\nFirst start: created the admin account %s. Its API key is shown only this once:\n\n    %s\n\nTurn this off with --no-bootstrap; make more keys with `petstore keys create`.\n\n", bootstrapEmail, key)
	return nil
}
