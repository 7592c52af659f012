package main

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/mail/mailtest"
)

func TestAccountsListAndDisable(t *testing.T) {
	checkAccountsListAndDisable(t, filepath.Join(t.TempDir(), "petstore.db"))
}

func TestAccountsListAndDisableOnPostgres(t *testing.T) {
	dsn, _ := postgresURL(t)
	checkAccountsListAndDisable(t, dsn)
}

// checkAccountsListAndDisable makes an admin and a customer, lists them, disables the
// customer (listed as disabled), and refuses to disable the last admin, an unknown
// email, or a command line without an email.
func checkAccountsListAndDisable(t *testing.T, db string) {
	env := func(string) string { return "" }
	must := func(args ...string) (string, string) {
		t.Helper()
		code, stdout, stderr := runExit(t, env, append(args, "--database", db)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout, stderr
	}
	must("keys", "create", "--create", "--email", "boss@example.com", "--role", "admin")
	must("keys", "create", "--email", "clerk@example.com")

	list, _ := must("accounts", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID EMAIL ROLE DISABLED CREATED" {
		t.Fatalf("list:\n%s", list)
	}
	boss, clerk := strings.Fields(lines[1]), strings.Fields(lines[2])
	if boss[1] != "boss@example.com" || boss[2] != "admin" || boss[3] != "no" || clerk[1] != "clerk@example.com" || clerk[2] != "customer" || clerk[3] != "no" {
		t.Errorf("rows:\n%s", list)
	}

	if _, stderr := must("accounts", "disable", "--email", "Clerk@example.com"); !strings.Contains(stderr, "disabled account "+clerk[0]) {
		t.Errorf("disable said %q", stderr)
	}
	list, _ = must("accounts", "list")
	if row := strings.Fields(strings.Split(strings.TrimSpace(list), "\n")[2]); row[3] != "yes" {
		t.Errorf("the clerk after the disable: %v", row)
	}
	if _, stderr := must("accounts", "disable", "--email", "clerk@example.com"); !strings.Contains(stderr, "disabled already") {
		t.Errorf("disable again said %q", stderr)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"the last admin", []string{"accounts", "disable", "--email", "boss@example.com"}, 1, "last enabled admin"},
		{"an unknown account", []string{"accounts", "disable", "--email", "nobody@example.com"}, 1, "no account"},
		{"no email", []string{"accounts", "disable"}, 2, "--email"},
		{"an argument", []string{"accounts", "list", "extra"}, 2, "unexpected argument"},
		{"no subcommand", []string{"accounts"}, 2, "accounts list"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runExit(t, env, append(tt.args, "--database", db)...)
			if code != tt.code || !strings.Contains(stderr, tt.says) {
				t.Errorf("exit %d, %q; want %d saying %q", code, stderr, tt.code, tt.says)
			}
		})
	}
	list, _ = must("accounts", "list")
	if row := strings.Fields(strings.Split(strings.TrimSpace(list), "\n")[1]); row[2] != "admin" || row[3] != "no" {
		t.Errorf("the last admin after the refusal: %v", row)
	}
}

// TestAccountsInviteEnableAndRevokeByID invites a person (the link on stdout), which
// works once through a running server; enables a disabled account; revokes a key by
// its id alone; and refuses what it cannot do with the exit codes of the other commands.
func TestAccountsInviteEnableAndRevokeByID(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	env := func(string) string { return "" }
	must := func(args ...string) (string, string) {
		t.Helper()
		code, stdout, stderr := runExit(t, env, append(args, "--database", db)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout, stderr
	}
	must("keys", "create", "--create", "--email", "boss@example.com", "--role", "admin")
	link, stderr := must("accounts", "invite", "--email", "clerk@example.com", "--public-url", "https://shop.example.com")
	link = strings.TrimSpace(link)
	if !strings.HasPrefix(link, "https://shop.example.com/console/accept?token=psi_") || strings.Contains(link, "\n") {
		t.Fatalf("stdout %q, want only the link", link)
	}
	if !strings.Contains(stderr, "invited clerk@example.com as admin") {
		t.Errorf("stderr %q", stderr)
	}
	token := link[strings.Index(link, "token=")+len("token="):]
	base, _ := startServe(t, env, "--database", db, "--no-bootstrap")
	accept := func() int {
		res, err := http.Post(base+"/v1/invitations/accept", "application/json",
			strings.NewReader(`{"token":"`+token+`","password":"correct horse battery"}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := accept(); got != http.StatusCreated {
		t.Fatalf("accepting the printed link answered %d", got)
	}
	if got := accept(); got != http.StatusBadRequest {
		t.Fatalf("accepting it again answered %d, want 400", got)
	}

	must("keys", "create", "--email", "temp@example.com")
	must("accounts", "disable", "--email", "temp@example.com")
	if _, stderr := must("accounts", "enable", "--email", "temp@example.com"); !strings.Contains(stderr, "enabled account") {
		t.Errorf("enable said %q", stderr)
	}
	if _, stderr := must("accounts", "enable", "--email", "temp@example.com"); !strings.Contains(stderr, "enabled already") {
		t.Errorf("enable again said %q", stderr)
	}
	keys, _ := must("keys", "list", "--email", "temp@example.com")
	id := strings.Fields(strings.Split(strings.TrimSpace(keys), "\n")[1])[0]
	if _, stderr := must("keys", "revoke", id); !strings.Contains(stderr, "revoked key "+id) {
		t.Errorf("revoke said %q", stderr)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"a key revoked already", []string{"keys", "revoke", id}, 1, "no live key"},
		{"another account's key, by --email", []string{"keys", "revoke", "1", "--email", "temp@example.com"}, 1, "has no live key"},
		{"no key id", []string{"keys", "revoke"}, 2, "want 1 argument"},
		{"an account with a password", []string{"accounts", "invite", "--email", "clerk@example.com"}, 1, "already has a password"},
		{"no email", []string{"accounts", "invite"}, 2, "--email"},
		{"an unknown role", []string{"accounts", "invite", "--email", "x@example.com", "--role", "owner"}, 2, "--role"},
		{"a public URL with a query", []string{"accounts", "invite", "--email", "x@example.com", "--public-url", "https://a.example/?x=1"}, 2, "--public-url"},
		{"enable an unknown email", []string{"accounts", "enable", "--email", "nobody@example.com"}, 1, "no account"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runExit(t, env, append(tt.args, "--database", db)...)
			if code != tt.code || !strings.Contains(stderr, tt.says) {
				t.Errorf("exit %d (%q), want %d saying %q", code, stderr, tt.code, tt.says)
			}
		})
	}
}

// TestAccountsInviteMailsTheLinkWithSMTP: with --smtp-url the printed link also goes,
// through a real SMTP server, to the person invited.
func TestAccountsInviteMailsTheLinkWithSMTP(t *testing.T) {
	box := mailtest.Start(t, mailtest.Options{})
	db := filepath.Join(t.TempDir(), "petstore.db")
	env := func(string) string { return "" }
	code, stdout, stderr := runExit(t, env, "accounts", "invite", "--create", "--email", "clerk@example.com", "--database", db,
		"--public-url", "https://shop.example.com", "--smtp-url", box.URL("smtp", "", ""), "--smtp-from", "shop@example.com")
	if code != 0 || !strings.Contains(stderr, "mailed the link to clerk@example.com") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := box.WaitMessages(t, 1)[0]
	link := strings.TrimSpace(stdout)
	if got.From != "shop@example.com" || !slices.Equal(got.To, []string{"clerk@example.com"}) || !strings.Contains(got.Text, link) {
		t.Errorf("the mail from %s to %v does not hold %s:\n%s", got.From, got.To, link, got.Text)
	}
}
