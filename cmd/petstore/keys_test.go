package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// customerScopes are what the document lets a customer's key hold, in its catalogue's
// order, as a refusal lists them.
const customerScopes = "account:read, keys:manage, messages:read, messages:write, pets:read, orders:read, orders:write"

func TestKeysCreateLimitsTheKeyToTheScopesAndLifetimeAskedFor(t *testing.T) {
	hour := func(now time.Time) *time.Time { at := now.Add(time.Hour).UTC().Truncate(time.Second); return &at }
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		scopes  []string
		expires func(now time.Time) *time.Time
		note    string // what stderr says; "" for nothing
	}{
		{name: "neither: every scope of the role, never expires",
			args: []string{"--email", "c@example.com"}},
		{name: "a comma list, sorted and without repeats",
			args:   []string{"--email", "c@example.com", "--scope", "pets:read,orders:write, pets:read"},
			scopes: []string{"orders:write", "pets:read"}, note: "it may use orders:write, pets:read and never expires"},
		{name: "repeated, mixed with a list",
			args:   []string{"--email", "c@example.com", "--scope", "pets:read", "--scope", "orders:read,orders:write"},
			scopes: []string{"orders:read", "orders:write", "pets:read"}},
		{name: "from the environment, a comma list",
			args: []string{"--email", "c@example.com"}, env: map[string]string{"PETSTORE_SCOPE": "pets:read,orders:read"},
			scopes: []string{"orders:read", "pets:read"}},
		{name: "a flag given wins over the environment",
			args: []string{"--email", "c@example.com", "--scope", "account:read"}, env: map[string]string{"PETSTORE_SCOPE": "pets:read"},
			scopes: []string{"account:read"}},
		{name: "an admin's scope for an admin",
			args:   []string{"--email", "a@example.com", "--role", "admin", "--scope", "webhooks:manage"},
			scopes: []string{"webhooks:manage"}, note: "(admin): it may use webhooks:manage"},
		{name: "a lifetime",
			args:    []string{"--email", "c@example.com", "--expires-in", "1h"},
			expires: hour, note: "it may use every scope of the role and expires at "},
		{name: "a lifetime from the environment",
			args: []string{"--email", "c@example.com"}, env: map[string]string{"PETSTORE_EXPIRES_IN": "1h"},
			expires: hour},
		{name: "a lifetime of 0 is none",
			args: []string{"--email", "c@example.com", "--expires-in", "0"}},
		{name: "longer than serve's --key-max-lifetime, which does not bind the operator",
			args: []string{"--email", "c@example.com", "--expires-in", "87600h"}, env: map[string]string{"PETSTORE_KEY_MAX_LIFETIME": "1h"},
			expires: func(now time.Time) *time.Time {
				at := now.Add(87600 * time.Hour).UTC().Truncate(time.Second)
				return &at
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "petstore.db")
			before := time.Now()
			code, stdout, stderr := runExit(t, func(k string) string { return tt.env[k] },
				append([]string{"keys", "create", "--create", "--database", db}, tt.args...)...)
			after := time.Now()
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			key := strings.TrimSuffix(stdout, "\n")
			if !auth.WellFormed(key) {
				t.Fatalf("stdout is %q, want the key alone on one line", stdout)
			}
			switch {
			case tt.note == "" && tt.scopes == nil && tt.expires == nil && stderr != "":
				t.Errorf("a key without limits: stderr %q, want nothing (as before --scope)", stderr)
			case tt.note != "" && !strings.Contains(stderr, tt.note):
				t.Errorf("stderr is %q, want it to say %q", stderr, tt.note)
			}
			k := storedKey(t, db, key)
			if !slices.Equal(k.Scopes, tt.scopes) || (k.Scopes == nil) != (tt.scopes == nil) {
				t.Errorf("the key's scopes are %q, want %q", k.Scopes, tt.scopes)
			}
			switch {
			case tt.expires == nil && k.ExpiresAt != nil:
				t.Errorf("the key expires at %v, want never", k.ExpiresAt)
			case tt.expires != nil && k.ExpiresAt == nil:
				t.Error("the key never expires")
			case tt.expires != nil:
				// Kept to the second: between the expiries of the instants around the command.
				lo, hi := tt.expires(before), tt.expires(after)
				if k.ExpiresAt.Before(*lo) || k.ExpiresAt.After(*hi) {
					t.Errorf("the key expires at %v, want %v to %v", k.ExpiresAt, lo, hi)
				}
			}
		})
	}
}

// storedKey is the key of this secret as the store holds it.
func storedKey(t *testing.T, db, key string) petstore.APIKey {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.PrincipalByKeyHash(context.Background(), auth.HashKey(key))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.APIKeys(context.Background(), p.AccountID, petstore.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.ID == p.KeyID {
			return k
		}
	}
	t.Fatalf("key %d is not among its account's keys", p.KeyID)
	return petstore.APIKey{}
}

func TestKeysCreateRefusesAScopeOrLifetimeItCannotGrant(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		says []string
	}{
		{name: "an unknown scope", args: []string{"--scope", "pets:read,pets:eat"},
			says: []string{`--scope "pets:eat": no such scope`, "account:read, accounts:read, accounts:manage, keys:manage", "webhooks:manage, events:read"}},
		{name: "an unknown scope from the environment", env: map[string]string{"PETSTORE_SCOPE": "pets:eat"},
			says: []string{`--scope "pets:eat": no such scope`}},
		{name: "a scope the customer role does not allow, the role given", args: []string{"--role", "customer", "--scope", "pets:read,webhooks:manage"},
			says: []string{"--scope: must be scopes the customer role allows; webhooks:manage is not one (the customer role allows " + customerScopes + ")"}},
		{name: "a scope the customer role does not allow, a new account", args: []string{"--scope", "events:read"},
			says: []string{"--scope: must be scopes the customer role allows; events:read is not one (the customer role allows " + customerScopes + ")"}},
		{name: "an empty list", args: []string{"--scope", " , "}, says: []string{"--scope: name at least one scope"}},
		{name: "a negative lifetime", args: []string{"--expires-in", "-1h"}, says: []string{"--expires-in -1h0m0s: want 0 (never) or a positive duration"}},
		{name: "a negative lifetime from the environment", env: map[string]string{"PETSTORE_EXPIRES_IN": "-5m"}, says: []string{"--expires-in -5m0s"}},
		{name: "a lifetime under a second", args: []string{"--expires-in", "500ms"}, says: []string{"--expires-in 500ms: want 0 (never) or at least 1s"}},
		{name: "not a duration", args: []string{"--expires-in", "30d"}, says: []string{"--expires-in"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "petstore.db")
			code, stdout, stderr := runExit(t, func(k string) string { return tt.env[k] },
				append([]string{"keys", "create", "--create", "--email", "c@example.com", "--database", db}, tt.args...)...)
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want 2 and no key (stderr %q)", code, stdout, stderr)
			}
			for _, want := range append(tt.says, "Run `petstore keys create --help` for usage.") {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr is %q; want it to say %q", stderr, want)
				}
			}
			st, err := sqlite.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if n, err := st.CountAccounts(context.Background()); err != nil || n != 0 {
				t.Errorf("a refused command made %d accounts (%v)", n, err)
			}
		})
	}
}

// Without --role, the account's own role decides, and the refusal comes before
// --take-over removes anything: the account keeps its password and its keys.
func TestKeysCreateRefusesAScopeOfAnotherRoleBeforeTakingOver(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	signedUpWithAKey(t, db, "c@example.com")

	code, stdout, stderr := runExit(t, noEnv, "keys", "create", "--email", "c@example.com", "--take-over", "--scope", "webhooks:manage", "--database", db)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "webhooks:manage is not one (the customer role allows "+customerScopes+")") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 naming the scope", code, stdout, stderr)
	}
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, hash, err := st.AccountByEmail(context.Background(), "c@example.com"); err != nil || hash != "their-hash" {
		t.Errorf("after the refusal the password hash is %q (%v); want it kept", hash, err)
	}
	if _, err := st.PrincipalByKeyHash(context.Background(), []byte("their-key")); err != nil {
		t.Errorf("after the refusal the account's key fails: %v", err)
	}

	// The same account, made admin on the same command line, may have it.
	code, stdout, stderr = runExit(t, noEnv, "keys", "create", "--email", "c@example.com", "--take-over", "--role", "admin", "--scope", "webhooks:manage", "--database", db)
	if code != 0 || !auth.WellFormed(strings.TrimSpace(stdout)) {
		t.Fatalf("as admin: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// A key made on the command line is what the running service lists and enforces:
// its scopes and expiry in GET /api-keys, its scope opening what it names and
// nothing else.
func TestAKeyFromKeysCreateIsEnforcedByServe(t *testing.T) {
	checkKeysCreateIsEnforced(t, filepath.Join(t.TempDir(), "petstore.db"))
}

func TestAKeyFromKeysCreateIsEnforcedByServeOnPostgres(t *testing.T) {
	dsn, _ := postgresURL(t)
	checkKeysCreateIsEnforced(t, dsn)
}

func checkKeysCreateIsEnforced(t *testing.T, database string) {
	t.Helper()
	before := time.Now()
	code, stdout, stderr := runExit(t, noEnv, "keys", "create", "--create", "--email", "shop@example.com", "--name", "storefront",
		"--scope", "pets:read", "--expires-in", "1h", "--database", database)
	if code != 0 {
		t.Fatalf("keys create: exit %d, %s", code, stderr)
	}
	limited := strings.TrimSpace(stdout)
	code, stdout, stderr = runExit(t, noEnv, "keys", "create", "--email", "shop@example.com", "--name", "full", "--database", database)
	if code != 0 {
		t.Fatalf("keys create: exit %d, %s", code, stderr)
	}
	full := strings.TrimSpace(stdout)

	// The serve flag that bounds keys made through the API leaves this one alone.
	base, _ := startServe(t, noEnv, "--database", database, "--no-bootstrap", "--key-max-lifetime", "1m")

	status, body := get(t, base+"/v1/api-keys", full)
	if status != 200 {
		t.Fatalf("GET /v1/api-keys = %d %s", status, body)
	}
	var keys []struct {
		Name      string     `json:"name"`
		Scopes    []string   `json:"scopes"`
		ExpiresAt *time.Time `json:"expiresAt"`
	}
	if err := json.Unmarshal(body, &keys); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	byName := map[string]int{}
	for i, k := range keys {
		byName[k.Name] = i
	}
	i, ok := byName["storefront"]
	if !ok {
		t.Fatalf("GET /v1/api-keys does not list the key: %s", body)
	}
	sf := keys[i]
	lo, hi := before.Add(time.Hour).Truncate(time.Second), time.Now().Add(time.Hour)
	if !slices.Equal(sf.Scopes, []string{"pets:read"}) || sf.ExpiresAt == nil || sf.ExpiresAt.Before(lo) || sf.ExpiresAt.After(hi) {
		t.Errorf("the key is listed with scopes %q and expiry %v; want [pets:read] and %v to %v\n%s", sf.Scopes, sf.ExpiresAt, lo, hi, body)
	}
	if f := keys[byName["full"]]; f.Scopes != nil || f.ExpiresAt != nil {
		t.Errorf("the key made without limits is listed with scopes %q and expiry %v; want neither", f.Scopes, f.ExpiresAt)
	}

	if status, body := get(t, base+"/v1/pets", limited); status != 200 {
		t.Errorf("GET /v1/pets with the pets:read key = %d %s", status, body)
	}
	for _, c := range []struct{ method, path, body, scope string }{
		{"POST", "/v1/store/orders", `{"petId": 1, "quantity": 1}`, "orders:write"},
		{"GET", "/v1/api-keys", "", "keys:manage"},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+limited)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(b, &e)
		want := `Bearer error="insufficient_scope", scope="` + c.scope + `"`
		if res.StatusCode != 403 || e.Code != "insufficient_scope" || res.Header.Get("WWW-Authenticate") != want {
			t.Errorf("%s %s with the pets:read key = %d %s, WWW-Authenticate %q; want 403 insufficient_scope, %q",
				c.method, c.path, res.StatusCode, b, res.Header.Get("WWW-Authenticate"), want)
		}
	}
}
