package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/mail"
	"github.com/acme-pets/petstore/internal/mail/mailtest"
)

// An SMTP URL or From address that cannot be used stops the server before it opens
// anything, as any bad flag does (exit 2), and the message does not show the password,
// whether the URL came from the command line or the environment.
func TestABadSMTPURLIsAUsageErrorThatHidesItsPassword(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		says string
	}{
		{args: []string{"serve", "--smtp-url", "http://u:s3cret@mail.example.com"}, says: "--smtp-url"},
		{args: []string{"serve", "--smtp-url", "smtp://u:s3cret@mail.example.com:notaport"}, says: "--smtp-url"},
		{args: []string{"serve", "--smtp-url", "smtp://u:s3c%zzret@mail.example.com"}, says: "--smtp-url"},
		{args: []string{"serve"}, env: map[string]string{"PETSTORE_SMTP_URL": "smtp://u:s3cret@mail.example.com/path"}, says: "--smtp-url"},
		{args: []string{"serve"}, env: map[string]string{"PETSTORE_SMTP_URL": "smtp://u@mail.example.com"}, says: "--smtp-url"},
		{args: []string{"serve", "--smtp-url", "smtp://u:s3cret@mail.example.com", "--smtp-from", "not an address"}, says: "--smtp-from"},
		{args: []string{"serve", "--smtp-from", "shop@example.com\r\nBcc: eve@example.com"}, says: "--smtp-from"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runExit(t, func(k string) string { return tt.env[k] }, tt.args...)
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			if !strings.Contains(stderr, tt.says) || !strings.Contains(stderr, "Run `petstore serve --help` for usage.") {
				t.Errorf("stderr is %q; want it to say %q and point at the help", stderr, tt.says)
			}
			if strings.Contains(stderr, "s3c") {
				t.Errorf("stderr shows the password: %q", stderr)
			}
		})
	}
}

func TestTheDefaultFromAddressIsPetstoreAtThePublicHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://shop.example.com":       "petstore@shop.example.com",
		"https://Shop.Example.com:8443/": "petstore@shop.example.com",
		"http://127.0.0.1:8080":          "petstore@localhost",
		"http://[::1]:8080":              "petstore@localhost",
		"http://:8080":                   "petstore@localhost",
		"http://localhost:8080":          "petstore@localhost",
		"%%":                             "petstore@localhost",
	} {
		if got := defaultMailFrom(in); got != want {
			t.Errorf("defaultMailFrom(%q) = %q, want %q", in, got, want)
		}
	}
}

// serve's dependencies carry a mail sender built from --smtp-url (here from the
// environment, as the docs advise) and --smtp-from, and it sends: a real SMTP server
// (Mailpit) receives its mail. Without --smtp-url there is none.
func TestServeCarriesAMailSenderThatSends(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{AcceptAnyAuth: true, AuthWithoutTLS: true})
	db := filepath.Join(t.TempDir(), "petstore.db")
	ctx := t.Context()
	open := func(args []string, env map[string]string) deps {
		t.Helper()
		c, err := parseServeConfig(append([]string{"--database", db, "--no-bootstrap"}, args...), func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		d, err := openDeps(ctx, c, slog.New(slog.NewTextHandler(&logs, nil)), new(bytes.Buffer), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.close)
		if strings.Contains(logs.String(), "s3cret") {
			t.Errorf("the log shows the SMTP password:\n%s", logs.String())
		}
		return d
	}
	if d := open(nil, nil); d.mail != nil {
		t.Fatal("a mail sender without --smtp-url")
	}
	d := open([]string{"--addr", "shop.example.com:0"}, map[string]string{"PETSTORE_SMTP_URL": srv.URL("smtp", "shop", "s3cret")})
	if d.mail == nil || d.mail.Host() != srv.SMTP || d.mail.From() != "<petstore@shop.example.com>" {
		t.Fatalf("the mail sender: %+v", d.mail)
	}
	d = open([]string{"--smtp-from", "Pet Store <shop@example.com>"}, map[string]string{"PETSTORE_SMTP_URL": srv.URL("smtp", "shop", "s3cret")})
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := d.mail.Send(sctx, mail.Message{To: "ann@example.com", Subject: "Welcome", Text: "Hello"}); err != nil {
		t.Fatal(err)
	}
	got := srv.Messages(t)
	if len(got) != 1 || got[0].From != "shop@example.com" || got[0].Subject != "Welcome" || strings.TrimSpace(got[0].Text) != "Hello" {
		t.Fatalf("received %+v", got)
	}
}
