package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/auth"
)

// Every command but serve works on the database the server uses: run in the wrong
// directory, or with a mistyped --database, it refuses, naming the absolute path it
// looked at, and makes no file; a key or an invitation is never made where the server
// will not see it. --create (keys create, accounts invite) makes the file; migrate, like serve, always does.
func TestCommandsRefuseASQLiteFileThatDoesNotExist(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		create bool // whether the refusal offers --create
	}{
		{"keys create", []string{"keys", "create", "--email", "ops@example.com", "--role", "admin"}, true},
		{"keys list", []string{"keys", "list", "--email", "ops@example.com"}, false},
		{"keys revoke", []string{"keys", "revoke", "1"}, false},
		{"keys revoke --email", []string{"keys", "revoke", "1", "--email", "ops@example.com"}, false},
		{"accounts list", []string{"accounts", "list"}, false},
		{"accounts disable", []string{"accounts", "disable", "--email", "ops@example.com"}, false},
		{"accounts enable", []string{"accounts", "enable", "--email", "ops@example.com"}, false},
		{"accounts invite", []string{"accounts", "invite", "--email", "ops@example.com"}, true},
	}
	for _, tt := range tests {
		for _, given := range []string{"the default", "shop/petstore.db"} {
			t.Run(tt.name+" with "+given, func(t *testing.T) {
				dir := t.TempDir()
				t.Chdir(dir)
				args, file := tt.args, "petstore.db"
				if given != "the default" {
					args, file = append(append([]string{}, tt.args...), "--database", given), given
				}
				want := filepath.Join(dir, file)
				code, stdout, stderr := runExit(t, noEnv, args...)
				if code != 1 || stdout != "" || !strings.Contains(stderr, "no database at "+want+":") {
					t.Fatalf("exit %d, stdout %q, stderr %q; want 1 naming %s", code, stdout, stderr, want)
				}
				if offers := strings.Contains(stderr, "--create"); offers != tt.create {
					t.Errorf("the refusal offers --create: %v, want %v (%q)", offers, tt.create, stderr)
				}
				if _, err := os.Stat(want); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the refusal left a file at %s: %v", want, err)
				}
			})
		}
	}
}

func TestKeysCreateWithCreateMakesTheDatabase(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := runExit(t, noEnv, "keys", "create", "--create", "--email", "ops@example.com", "--role", "admin")
	if code != 0 || !auth.WellFormed(strings.TrimSpace(stdout)) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "petstore.db")); err != nil {
		t.Fatalf("--create made no petstore.db: %v", err)
	}
	// Now that it exists, the other commands find it.
	if code, stdout, stderr := runExit(t, noEnv, "keys", "list", "--email", "ops@example.com"); code != 0 || !strings.Contains(stdout, "cli") {
		t.Fatalf("keys list: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// migrate prepares a database before a first start (a deploy step, the peers'
// benchmark): it makes the file, as serve does, and names where.
func TestMigrateMakesTheDatabaseAndNamesIt(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := runExit(t, noEnv, "migrate", "--database", "shop.db")
	want := filepath.Join(dir, "shop.db")
	if code != 0 || stdout != "migrations applied to "+want+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the migrations applied to %s", code, stdout, stderr, want)
	}
	if code, stdout, stderr := runExit(t, noEnv, "keys", "create", "--email", "ops@example.com", "--role", "admin", "--database", "shop.db"); code != 0 || !auth.WellFormed(strings.TrimSpace(stdout)) {
		t.Fatalf("keys create on the migrated file: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
