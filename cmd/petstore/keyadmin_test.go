package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestKeysListAndRevoke(t *testing.T) {
	checkKeysListAndRevoke(t, filepath.Join(t.TempDir(), "petstore.db"))
}

func TestKeysListAndRevokeOnPostgres(t *testing.T) {
	dsn, _ := postgresURL(t)
	checkKeysListAndRevoke(t, dsn)
}

// checkKeysListAndRevoke makes two keys, lists them, revokes one (gone from the list),
// and refuses to revoke it again, another account's key, or a malformed id.
func checkKeysListAndRevoke(t *testing.T, db string) {
	env := func(string) string { return "" }
	must := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runExit(t, env, append(args, "--database", db)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	must("keys", "create", "--create", "--email", "ops@example.com", "--name", "laptop")
	must("keys", "create", "--email", "ops@example.com", "--name", "ci", "--scope", "pets:read", "--expires-in", "1h")
	must("keys", "create", "--email", "other@example.com")

	lines := strings.Split(strings.TrimSpace(must("keys", "list", "--email", "OPS@example.com")), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("list:\n%s", strings.Join(lines, "\n"))
	}
	laptop, ci := strings.Fields(lines[1]), strings.Fields(lines[2])
	if laptop[1] != "laptop" || !strings.HasPrefix(laptop[2], "psk_") || !strings.Contains(lines[1], "every scope") || !strings.Contains(lines[1], "never") {
		t.Errorf("laptop's row: %q", lines[1])
	}
	if ci[1] != "ci" || ci[3] != "pets:read" || ci[5] == "never" {
		t.Errorf("ci's row: %q", lines[2])
	}
	otherID := strings.Fields(strings.Split(must("keys", "list", "--email", "other@example.com"), "\n")[1])[0]

	if code, _, stderr := runExit(t, env, "keys", "revoke", laptop[0], "--email", "ops@example.com", "--database", db); code != 0 || !strings.Contains(stderr, "revoked key "+laptop[0]) {
		t.Fatalf("revoke: exit %d: %s", code, stderr)
	}
	if after := must("keys", "list", "--email", "ops@example.com"); strings.Contains(after, "laptop") || !strings.Contains(after, "ci") {
		t.Errorf("list after the revoke:\n%s", after)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"revoked already", []string{"keys", "revoke", "--email", "ops@example.com", laptop[0]}, 1, "no live key"},
		{"another account's", []string{"keys", "revoke", "--email", "ops@example.com", otherID}, 1, "no live key"},
		{"unknown", []string{"keys", "revoke", "--email", "ops@example.com", "999999"}, 1, "no live key"},
		{"an unknown account", []string{"keys", "list", "--email", "nobody@example.com"}, 1, "no account"},
		{"not an id", []string{"keys", "revoke", "--email", "ops@example.com", "seven"}, 2, "not a key id"},
		{"no id", []string{"keys", "revoke", "--email", "ops@example.com"}, 2, "want 1 argument"},
		{"no email", []string{"keys", "list"}, 2, "--email"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runExit(t, env, append(tt.args, "--database", db)...)
			if code != tt.code || !strings.Contains(stderr, tt.says) {
				t.Errorf("exit %d, %q; want %d saying %q", code, stderr, tt.code, tt.says)
			}
		})
	}
	if _, stdout, _ := runExit(t, env, "keys", "list", "--email", "other@example.com", "--database", db); !strings.Contains(stdout, otherID) {
		t.Errorf("another account's key went: %s", stdout)
	}
}
