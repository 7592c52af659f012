package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func noEnv(string) string { return "" }

// startServe runs `petstore serve` with args until the test ends, and waits until it
// answers /healthz.
func startServe(t *testing.T, getenv func(string) string, args ...string) (base string, stdout *syncBuffer) {
	t.Helper()
	base, stdout, _ = startServeLogged(t, getenv, args...)
	return base, stdout
}

// startServeLogged is startServe that also keeps what serve writes to stderr: its log.
func startServeLogged(t *testing.T, getenv func(string) string, args ...string) (base string, stdout, stderr *syncBuffer) {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", addr}, args...), getenv, stdout, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v", err)
		}
	})
	base = "http://" + addr
	// Generous: with --demo the server draws and processes six photos before it
	// listens, 1.5 s as shipped and over 10 s under the race detector on two cores.
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return base, stdout, stderr
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v\n%s", err, stdout)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not become healthy: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var keyPattern = regexp.MustCompile(`psk_[a-z2-7]{32}`)

func get(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	r, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body
}

func TestFirstStartPrintsAnAdminKeyOnceAndDemoDataIsThere(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	base, out := startServe(t, noEnv, "--database", db, "--demo")
	key := keyPattern.FindString(out.String())
	if key == "" || !strings.Contains(out.String(), "admin") {
		t.Fatalf("no admin key printed:\n%s", out)
	}
	for _, want := range []string{"listening on " + base, base + "/docs", base + "/openapi.yaml"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve did not print %q:\n%s", want, out)
		}
	}
	status, body := get(t, base+"/v1/pets?limit=100", key)
	var pets []map[string]any
	_ = json.Unmarshal(body, &pets)
	if status != 200 || len(pets) != len(demoCatalog[0].pets)+len(demoCatalog[1].pets)+len(demoCatalog[2].pets) {
		t.Fatalf("GET /v1/pets = %d %s", status, body)
	}
	status, _ = get(t, base+"/v1/pets", "psk_"+strings.Repeat("a", 32))
	if status != 401 {
		t.Fatalf("an unknown key got %d", status)
	}
	_, doc := get(t, base+"/openapi.json", "")
	if !bytes.Contains(doc, []byte(`"url":"`+base+`/v1"`)) {
		t.Errorf("the document does not name %s/v1 as its server", base)
	}
}

func TestTheAdminKeyIsPrintedOnceAndNotWithNoBootstrap(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	var buf bytes.Buffer
	if err := run(context.Background(), []string{"migrate", "--database", db}, noEnv, &buf, io.Discard); err != nil {
		t.Fatal(err)
	}
	_, out := startServe(t, noEnv, "--database", db, "--no-bootstrap")
	if keyPattern.MatchString(out.String()) {
		t.Fatalf("--no-bootstrap printed a key:\n%s", out)
	}
	_, first := startServe(t, noEnv, "--database", db)
	if !keyPattern.MatchString(first.String()) {
		t.Fatalf("the first bootstrapping start printed no key:\n%s", first)
	}
	_, again := startServe(t, noEnv, "--database", db)
	if keyPattern.MatchString(again.String()) {
		t.Fatalf("a later start printed another key:\n%s", again)
	}
}

func TestKeysCreateMakesAnAdminAndPrintsOnlyTheKey(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	var out bytes.Buffer
	err := run(context.Background(), []string{"keys", "create", "--create", "--email", "ops@example.com", "--role", "admin", "--database", db}, noEnv, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(out.String())
	if !auth.WellFormed(key) {
		t.Fatalf("stdout is %q, want only a key", out.String())
	}
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.PrincipalByKeyHash(context.Background(), auth.HashKey(key))
	if err != nil || p.Role != petstore.Admin {
		t.Fatalf("principal = %+v, %v", p, err)
	}
}

func TestFlagsComeFromTheEnvironmentAndAFlagWins(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	env := map[string]string{
		"PETSTORE_DATABASE_URL": db, // the contract's name for PETSTORE_DATABASE
		"PETSTORE_NO_BOOTSTRAP": "true",
		"PETSTORE_SUNSET":       "getPetById=2020-01-01",
	}
	base, out := startServe(t, func(k string) string { return env[k] }, "--sunset", "getPetById=2099-01-01")
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("PETSTORE_DATABASE_URL was not used: %v", err)
	}
	if keyPattern.MatchString(out.String()) {
		t.Fatal("PETSTORE_NO_BOOTSTRAP was ignored")
	}
	_, doc := get(t, base+"/openapi.json", "")
	if !bytes.Contains(doc, []byte(`"x-deprecated-sunset":"2099-01-01"`)) {
		t.Fatalf("the --sunset flag did not win over PETSTORE_SUNSET")
	}
}

func TestBadConfigurationIsRefused(t *testing.T) {
	tests := [][]string{
		{"serve", "--sunset", "getPetById=next-year"},
		{"serve", "--sunset", "listPets=2027-01-01"},
		{"serve", "--log-format", "xml"},
		{"serve", "--key-max-lifetime", "-1h"},
		{"serve", "--key-max-lifetime", "500ms"},
		{"keys", "create", "--email", "not-an-email"},
		{"keys", "create", "--email", "a@example.com", "--role", "owner"},
		{"frobnicate"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "petstore.db")
			args := append(args, "--database", db, "--addr", freeAddr(t))
			if args[0] == "frobnicate" || args[0] == "keys" {
				args = args[:len(args)-2]
			}
			if err := run(context.Background(), args, noEnv, io.Discard, io.Discard); err == nil {
				t.Fatalf("run %v succeeded", args)
			}
		})
	}
}

// The operator's command follows the text policy of addresses as a sign-up does: an
// email with a bidirectional override or mark, or an invisible character (a look-alike
// of the admin's address), makes no account.
func TestKeysCreateRefusesAnEmailOutsideTheTextPolicy(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	for email, why := range map[string]string{
		"a\u202eb@example.com":           "bidirectional",
		"a\u200eb@example.com":           "bidirectional",
		"a\u2028b@example.com":           "line or paragraph separators",
		"admin@petstore.local\u200b":     "invisible characters",
		"ad\ufeffmin@petstore.local":     "invisible characters",
		"admin\u3164@petstore.local":     "U+3164",
		"admin@petstore.local\U000e0041": "invisible characters",
	} {
		var out bytes.Buffer
		err := run(context.Background(), []string{"keys", "create", "--create", "--email", email, "--database", db}, noEnv, &out, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--email") || !strings.Contains(err.Error(), why) || out.Len() != 0 {
			t.Errorf("keys create --email %q: %v, stdout %q; want a refusal for %s and no key", email, err, out.String(), why)
		}
	}
}

// An account whose address was kept before invisible characters were refused still
// gets keys from the operator: the policy of addresses holds for new accounts only.
func TestKeysCreateServesAnAccountKeptBeforeThePolicy(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	old := "old\u200b@example.com"
	st, err := sqlite.Open(context.Background(), db) // the schema
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	raw, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Exec(`INSERT INTO accounts (email, email_lower, role, created_at) VALUES (?, ?, 'customer', '2026-11-20T09:00:00.000000000Z')`,
		old, petstore.EmailKey(old))
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"keys", "create", "--email", old, "--database", db}, noEnv, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "psk_") {
		t.Fatalf("keys create for an account kept before the policy: %v, stdout %q", err, out.String())
	}
}

// Someone signs up with the operator's address first; the operator's `keys create
// --role admin` must not hand that account, and its password, the admin role.
func TestKeysCreateNeverMakesAnAdminOfAnAccountWithAPassword(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	squat, theirs := signedUpWithAKey(t, db, "ops@example.com")

	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"keys", "create", "--email", "ops@example.com", "--role", "admin", "--database", db}, noEnv, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "--take-over") || stdout.Len() != 0 {
		t.Fatalf("keys create on an account with a password: %v, stdout %q", err, stdout.String())
	}
	stdout.Reset()
	err = run(context.Background(), []string{"keys", "create", "--email", "ops@example.com", "--role", "admin", "--take-over", "--database", db}, noEnv, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, hash, err := st.AccountByEmail(context.Background(), "ops@example.com")
	if err != nil || a.ID != squat.ID || a.Role != petstore.Admin || hash != "" {
		t.Fatalf("after --take-over: %+v, hash %q, %v", a, hash, err)
	}
	if _, err := st.PrincipalByKeyHash(context.Background(), []byte("their-key")); petstore.ErrorCode(err) != petstore.ENotFound {
		t.Errorf("the squatter's key %d still works: %v", theirs.ID, err)
	}
	p, err := st.PrincipalByKeyHash(context.Background(), auth.HashKey(strings.TrimSpace(stdout.String())))
	if err != nil || p.Role != petstore.Admin {
		t.Errorf("the new key: %+v, %v", p, err)
	}
}

// The server that ships records keys' last uses: a use is in the database once the
// server has stopped, though no flush interval passed.
func TestServeRecordsAKeysLastUseByTheTimeItStops(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	addr := freeAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", addr, "--database", db}, noEnv, &out, io.Discard) }()
	var key string
	for deadline := time.Now().Add(10 * time.Second); key == ""; time.Sleep(20 * time.Millisecond) {
		if key = keyPattern.FindString(out.String()); key == "" && time.Now().After(deadline) {
			t.Fatalf("no admin key printed:\n%s", out.String())
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not answer")
		}
	}
	before := time.Now().Truncate(time.Minute)
	if status, body := get(t, "http://"+addr+"/v1/pets", key); status != 200 {
		t.Fatalf("GET /v1/pets = %d %s", status, body)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.PrincipalByKeyHash(context.Background(), auth.HashKey(key))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.APIKeys(context.Background(), p.AccountID, petstore.Page{})
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys = %v, %v", keys, err)
	}
	if at := keys[0].LastUsedAt; at == nil || at.Before(before) || at.After(time.Now()) {
		t.Errorf("lastUsedAt = %v, want the minute of the request", at)
	}
}

// signedUpWithAKey makes, in the SQLite file db, a customer account with a password
// and one API key, as a sign-up would have.
func signedUpWithAKey(t *testing.T, db, email string) (petstore.Account, petstore.APIKey) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acct, err := st.CreateAccount(context.Background(), email, "their-hash", petstore.Customer)
	if err != nil {
		t.Fatal(err)
	}
	key, err := st.CreateAPIKey(context.Background(), petstore.NewAPIKey{AccountID: acct.ID, Name: "theirs", Prefix: "psk_", Hash: []byte("their-key")})
	if err != nil {
		t.Fatal(err)
	}
	return acct, key
}

// TestTheFirstStartPrintsAnInvitationOfTheFirstAdmin: beside the key, the first start
// prints a one-time link on the address it listens on, which gives admin@petstore.local
// a password and signs it in as admin.
func TestTheFirstStartPrintsAnInvitationOfTheFirstAdmin(t *testing.T) {
	db := filepath.Join(t.TempDir(), "petstore.db")
	base, out := startServe(t, noEnv, "--database", db)
	link := regexp.MustCompile(`http://\S+/console/accept\?token=(psi_[A-Za-z0-9_-]{43})`).FindStringSubmatch(out.String())
	if link == nil || !strings.HasPrefix(link[0], base+"/console/accept") {
		t.Fatalf("the first start printed no invitation link on %s:\n%s", base, out)
	}
	res, err := http.Post(base+"/v1/invitations/accept", "application/json",
		strings.NewReader(`{"token":"`+link[1]+`","password":"correct horse battery"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"email":"admin@petstore.local","role":"admin"`) {
		t.Fatalf("accepting the printed link: %d %s", res.StatusCode, body)
	}
}
