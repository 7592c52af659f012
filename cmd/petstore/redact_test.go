package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/servetest"
)

func TestRedactDSNHidesPasswords(t *testing.T) {
	tests := []struct{ in, want string }{
		{"petstore.db", "petstore.db"},
		{"postgres://app:s3cret@db:5432/shop", "postgres://app:xxx@db:5432/shop"},
		{"postgres://app@db/shop?sslmode=disable", "postgres://app@db/shop?sslmode=disable"},
		{"postgres://db/shop?password=s3cret&user=app", "postgres://db/shop?password=xxx&user=app"},
		{"redis://:s3cret@127.0.0.1:6379/0", "redis://:xxx@127.0.0.1:6379/0"},
		{"smtp://apikey:s3cret@smtp.example.com:587", "smtp://apikey:xxx@smtp.example.com:587"},
		{"smtps://ann%40example.com:s3%2Fcret@smtp.example.com", "smtps://ann%40example.com:xxx@smtp.example.com"},
		// Too broken to parse, and the password is hidden still.
		{"postgres://app:s3c%zzret@db/shop", "postgres://xxx@db/shop"},
		{"postgres://db:notaport/shop?sslmode=disable&password=s3cret", "postgres://db:notaport/shop?sslmode=disable&password=xxx"},
		{"postgres://db/shop?sslpassword=s3cret&sslkey=k.pem", "postgres://db/shop?sslkey=k.pem&sslpassword=xxx"},
		// A "/" in the password makes its first part read as a port.
		{"postgres://app:123/x@db/shop", "postgres://xxx@db/shop"},
		// What holds no password is left exactly as written.
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"localhost:8080", "localhost:8080"},
		{"https://shop.example,https://admin.example", "https://shop.example,https://admin.example"},
		{"postgres://app@db/shop?b=2&a=1", "postgres://app@db/shop?b=2&a=1"},
	}
	for _, tt := range tests {
		if got := redactDSN(tt.in); got != tt.want {
			t.Errorf("redactDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactArgsHidesThePasswordOfEveryURLOnTheCommandLine(t *testing.T) {
	args := []string{"/usr/local/bin/petstore", "serve", "--database", "postgres://app:s3cret@db/shop",
		"--redis=redis://:s3cret@cache:6379/0", "-cors-origins", "https://u:s3cret@shop.example", "--addr", ":8080",
		"--smtp-url", "smtps://u:s3cret@mail.example.com"}
	want := []string{"/usr/local/bin/petstore", "serve", "--database", "postgres://app:xxx@db/shop",
		"--redis=redis://:xxx@cache:6379/0", "-cors-origins", "https://u:xxx@shop.example", "--addr", ":8080",
		"--smtp-url", "smtps://u:xxx@mail.example.com"}
	if got := redactArgs(args); !slices.Equal(got, want) {
		t.Errorf("redactArgs = %q, want %q", got, want)
	}
	rec := httptest.NewRecorder()
	cmdline(args).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/pprof/cmdline", nil))
	if body := rec.Body.String(); body != strings.Join(want, "\x00") {
		t.Errorf("/debug/pprof/cmdline shows %q", body)
	}
}

// The errors of a database or Redis URL that cannot be used do not quote its
// password, though the libraries quote the URL: a scheme mistyped makes the URL a
// SQLite file name, and go-redis quotes a URL it cannot parse.
func TestAnUnusableURLsErrorHidesItsPassword(t *testing.T) {
	ctx := context.Background()
	if _, err := openStore(ctx, "postgress://app:s3cret@db/shop"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a mistyped scheme: %v", err)
	}
	if _, err := openStore(ctx, "postgres://app:s3cret@db:notaport/shop"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a port that is not one: %v", err)
	}
	if _, err := newLimits(ctx, "redis://:s3c%zzret@127.0.0.1:1/0", "p:", slog.New(slog.DiscardHandler)); err == nil || strings.Contains(err.Error(), "s3c") {
		t.Errorf("a Redis URL that does not parse: %v", err)
	}
	if _, err := newLimits(ctx, "redis://:s3cret@127.0.0.1:1/notadb", "p:", slog.New(slog.DiscardHandler)); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a Redis URL with a bad database: %v", err)
	}
}

// The real binary, given its database and SMTP URLs with passwords on the command
// line, shows them nowhere: not in /debug/pprof/cmdline on the operator port, not in
// what it prints or logs.
func TestThePprofCommandLineHidesTheDatabaseAndSMTPPasswords(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildPetstore(t)
	u, err := url.Parse(pgtest.Schema(t, pgtest.URL(t)))
	if err != nil {
		t.Fatal(err)
	}
	// The test server trusts its clients: the password is ignored, not refused.
	u.User = url.UserPassword(u.User.Username(), "s3cret-in-argv")
	op := freeAddr(t)
	var log syncBuffer
	p, err := servetest.Serve(bin, &log, 30*time.Second, "--addr", freeAddr(t), "--admin-addr", op, "--database", u.String(), "--rate-limit", "0",
		"--smtp-url", "smtp://shop:s3cret-smtp@127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	res, err := http.Get("http://" + op + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	args := strings.Split(string(body), "\x00")
	if res.StatusCode != http.StatusOK || !slices.Contains(args, "--database") || !slices.Contains(args, "smtp://shop:xxx@127.0.0.1:1") || strings.Contains(string(body), "s3cret") || !strings.Contains(string(body), ":xxx@") {
		t.Errorf("/debug/pprof/cmdline: %d %q, want the command line with the password hidden", res.StatusCode, args)
	}
	// Log lines wait up to 100 ms in the log's buffer (logFlushInterval).
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), "server=127.0.0.1:1"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not name the SMTP server:\n%s", log.String())
		}
	}
	if strings.Contains(p.Banner+log.String(), "s3cret") {
		t.Errorf("the password is in what the binary printed:\n%s%s", p.Banner, log.String())
	}
}
