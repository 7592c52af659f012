package main

import (
	"path/filepath"
	"strings"
	"testing"
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
	must("keys", "create", "--email", "boss@example.com", "--role", "admin")
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
