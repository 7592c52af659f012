package main

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
)

// The commands on PostgreSQL, each test in a schema of its own (named by the
// search_path parameter of the URL). Skipped without PETSTORE_TEST_POSTGRES_URL.

// testPassword is put into the URL when it has none, to check that it is never
// printed; it is only used when the test database accepts it (trust auth).
const testPassword = "not-to-be-printed-7f3k"

// postgresURL returns a URL of a new schema of the test database, with a password in it.
func postgresURL(t *testing.T) (dsn, password string) {
	t.Helper()
	dsn = pgtest.Schema(t, pgtest.URL(t))
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s is not a URL", pgtest.EnvURL)
	}
	if p, ok := u.User.Password(); ok {
		return dsn, p
	}
	u.User = url.UserPassword(u.User.Username(), testPassword)
	conn, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Logf("the test database refuses a made-up password (%v); checking without one", err)
		return dsn, ""
	}
	conn.Close(t.Context())
	return u.String(), testPassword
}

// runCmd runs the command and fails the test on an error or when the password shows
// on stdout or stderr.
func runCmd(t *testing.T, password string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, noEnv, &stdout, &stderr)
	if password != "" {
		for name, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
			if strings.Contains(out, password) {
				t.Errorf("%s shows the database password:\n%s", name, out)
			}
		}
		if err != nil && strings.Contains(err.Error(), password) {
			t.Errorf("the error shows the database password: %v", err)
		}
	}
	if err != nil {
		t.Fatalf("petstore %s: %v\n%s", args[0], err, stderr.String())
	}
	return stdout.String()
}

func TestMigrateAndKeysCreateOnPostgres(t *testing.T) {
	dsn, password := postgresURL(t)

	out := runCmd(t, password, "migrate", "--database", dsn)
	if !strings.Contains(out, "migrations applied") {
		t.Errorf("migrate printed %q", out)
	}

	out = runCmd(t, password, "keys", "create", "--email", "ops@example.com", "--role", "admin", "--database", dsn)
	key := strings.TrimSpace(out)
	if !auth.WellFormed(key) {
		t.Fatalf("stdout is %q, want only a key", out)
	}

	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.PrincipalByKeyHash(context.Background(), auth.HashKey(key))
	if err != nil || p.Role != petstore.Admin {
		t.Fatalf("principal = %+v, %v", p, err)
	}
}

func TestMigratingTwiceOnPostgresChangesNothing(t *testing.T) {
	dsn, password := postgresURL(t)
	runCmd(t, password, "migrate", "--database", dsn)
	runCmd(t, password, "keys", "create", "--email", "ops@example.com", "--database", dsn)
	runCmd(t, password, "migrate", "--database", dsn)
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.CountAccounts(context.Background()); err != nil || n != 1 {
		t.Errorf("%d accounts (%v) after migrating again, want 1", n, err)
	}
}

func TestServeOnPostgres(t *testing.T) {
	dsn, password := postgresURL(t)
	base, out := startServe(t, noEnv, "--database", dsn)
	if password != "" && strings.Contains(out.String(), password) {
		t.Errorf("serve shows the database password:\n%s", out)
	}
	key := keyPattern.FindString(out.String())
	if key == "" {
		t.Fatalf("no admin key printed on first start:\n%s", out)
	}
	if status, body := get(t, base+"/v1/pets", key); status != 200 {
		t.Errorf("GET /v1/pets = %d %s", status, body)
	}
	if status, body := get(t, base+"/readyz", ""); status != 200 {
		t.Errorf("GET /readyz = %d %s", status, body)
	}
}
