package httpapi_test

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

func basic(email, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(email+":"+password))
}

func TestSignUpThenMakeAKeyThenSendTheFirstMessage(t *testing.T) {
	a := newTestAPI(t)
	var acct struct {
		ID        int64     `json:"id"`
		Email     string    `json:"email"`
		Role      string    `json:"role"`
		CreatedAt time.Time `json:"createdAt"`
		Password  *string   `json:"password"`
	}
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "ada@example.com", "password": "correct horse battery"}}).expect(201, "").JSON(&acct)
	if acct.Email != "ada@example.com" || acct.Role != "customer" || acct.ID == 0 || acct.CreatedAt.IsZero() || acct.Password != nil {
		t.Fatalf("account = %+v", acct)
	}

	var key struct {
		ID     int64  `json:"id"`
		Name   string `json:"name"`
		Key    string `json:"key"`
		Prefix string `json:"prefix"`
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("ada@example.com", "correct horse battery"), Body: map[string]any{"name": "laptop"}}).expect(201, "").JSON(&key)
	if !strings.HasPrefix(key.Key, "psk_") || !strings.HasPrefix(key.Key, key.Prefix) || len(key.Prefix) >= len(key.Key) || key.Name != "laptop" {
		t.Fatalf("key = %+v", key)
	}

	var msg struct {
		ID        string    `json:"id"`
		Message   string    `json:"message"`
		Status    string    `json:"status"`
		CreatedAt time.Time `json:"createdAt"`
	}
	res := a.do(t, req{Method: "POST", Path: "/v1/messages", Key: key.Key, Body: map[string]any{"message": "Hello, pet store!"}}).expect(201, "")
	res.JSON(&msg)
	if msg.Status != "queued" || msg.Message != "Hello, pet store!" || msg.ID == "" || msg.CreatedAt.IsZero() {
		t.Fatalf("message = %+v", msg)
	}
	if loc := res.Header.Get("Location"); loc != "/v1/messages/"+msg.ID {
		t.Errorf("Location = %q", loc)
	}
	a.do(t, req{Method: "GET", Path: "/v1/messages/" + msg.ID, Key: key.Key}).expect(200, "")
	t.Run("another account cannot read the message", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/messages/" + msg.ID, Key: a.Customer}).expect(404, "not_found")
	})
}

func TestSignUpRules(t *testing.T) {
	a := newTestAPI(t)
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "Bob@Example.com", "password": "twelve chars"}}).expect(201, "")
	tests := []struct {
		name       string
		body       any
		status     int
		code, path string
	}{
		{"an email taken in another letter case is a conflict", map[string]any{"email": "bob@example.COM", "password": "twelve chars!"}, 409, "conflict", ""},
		{"a password under 12 characters is refused", map[string]any{"email": "c@example.com", "password": "eleven char"}, 400, "validation_failed", "password"},
		{"a malformed email is refused", map[string]any{"email": "not-an-email", "password": "twelve chars!"}, 400, "validation_failed", "email"},
		{"a missing password is refused", map[string]any{"email": "d@example.com"}, 400, "validation_failed", ""},
		{"an unknown field is refused", map[string]any{"email": "e@example.com", "password": "twelve chars!", "role": "admin"}, 400, "validation_failed", "role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: tt.body}).expect(tt.status, tt.code)
			if tt.path != "" && !strings.Contains(string(res.Body), `"field":"`+tt.path+`"`) {
				t.Errorf("no detail on %s: %s", tt.path, res.Body)
			}
		})
	}
}

func TestAPIKeys(t *testing.T) {
	a := newTestAPI(t)
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "kim@example.com", "password": "correct horse battery"}}).expect(201, "")
	pass := basic("kim@example.com", "correct horse battery")

	t.Run("a wrong password makes no key", func(t *testing.T) {
		res := a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("kim@example.com", "wrong password!"), Body: map[string]any{"name": "x"}}).expect(401, "unauthorized")
		if res.Header.Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
	})
	t.Run("an unknown email makes no key", func(t *testing.T) {
		a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("nobody@example.com", "correct horse battery"), Body: map[string]any{"name": "x"}}).expect(401, "unauthorized")
	})

	var first, second struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: pass, Body: map[string]any{"name": "first"}}).expect(201, "").JSON(&first)
	t.Run("an existing key makes another key", func(t *testing.T) {
		a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: first.Key, Body: map[string]any{"name": "second"}}).expect(201, "").JSON(&second)
	})

	t.Run("the listing shows the caller's keys without secrets", func(t *testing.T) {
		res := a.do(t, req{Method: "GET", Path: "/v1/api-keys", Key: first.Key}).expect(200, "")
		var keys []map[string]any
		res.JSON(&keys)
		if len(keys) != 2 {
			t.Fatalf("got %d keys, want 2: %s", len(keys), res.Body)
		}
		if strings.Contains(string(res.Body), first.Key) || strings.Contains(string(res.Body), second.Key) || strings.Contains(string(res.Body), `"key"`) {
			t.Fatalf("listing reveals a secret: %s", res.Body)
		}
	})
	t.Run("the listing is paginated", func(t *testing.T) {
		res := a.do(t, req{Method: "GET", Path: "/v1/api-keys?limit=1", Key: first.Key}).expect(200, "")
		var keys []map[string]any
		res.JSON(&keys)
		next := nextPath(t, res.Header.Get("Link"))
		if len(keys) != 1 || next == "" {
			t.Fatalf("first page %s, Link %q", res.Body, res.Header.Get("Link"))
		}
		a.do(t, req{Method: "GET", Path: next, Key: first.Key}).expect(200, "").JSON(&keys)
		if len(keys) != 1 {
			t.Fatalf("second page %v", keys)
		}
	})
	t.Run("another account cannot revoke the key", func(t *testing.T) {
		a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", first.ID), Key: a.Customer}).expect(404, "not_found")
		a.do(t, req{Method: "GET", Path: "/v1/api-keys", Key: first.Key}).expect(200, "")
	})
	t.Run("a revoked key answers 401 on its very next use", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/pets", Key: first.Key}).expect(200, "") // cached now
		a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", first.ID), Key: second.Key}).expect(204, "")
		a.do(t, req{Method: "GET", Path: "/v1/pets", Key: first.Key}).expect(401, "unauthorized")
		a.do(t, req{Method: "GET", Path: "/v1/pets", Key: second.Key}).expect(200, "")
	})
	t.Run("the password can list and revoke keys too", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/api-keys", Auth: pass}).expect(200, "")
		a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", second.ID), Auth: pass}).expect(204, "")
		a.do(t, req{Method: "GET", Path: "/v1/pets", Key: second.Key}).expect(401, "unauthorized")
	})
	t.Run("HTTP Basic is refused by the pet store operations", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/pets", Auth: pass}).expect(401, "unauthorized")
	})
}

// The getting-started call, condition by condition as the seed states it.
func TestSendMessageErrorsOfTheSeed(t *testing.T) {
	a := newTestAPI(t)
	good := `{"message":"hi"}`
	tests := []struct {
		name   string
		r      req
		status int
		code   string
	}{
		{"no Authorization header is 401", req{Body: good}, 401, "unauthorized"},
		{"an unknown key is 401", req{Key: "psk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Body: good}, 401, "unauthorized"},
		{"a malformed key is 401", req{Key: "hello", Body: good}, 401, "unauthorized"},
		// RFC 9110, 11.1: the scheme is case-insensitive (until issue 32 the contract
		// asked for exactly "Bearer", and this was a 401).
		{"a lower-case bearer scheme is accepted", req{Auth: "bearer " + a.Customer, Body: good}, 201, ""},
		{"an upper-case BEARER scheme is accepted", req{Auth: "BEARER " + a.Customer, Body: good}, 201, ""},
		{"Bearer without a key is 401", req{Auth: "Bearer", Body: good}, 401, "unauthorized"},
		{"Bearer with a doubled space is 401", req{Auth: "Bearer  " + a.Customer, Body: good}, 401, "unauthorized"},
		{"a Token scheme is 401", req{Auth: "Token " + a.Customer, Body: good}, 401, "unauthorized"},
		{"a body that is not JSON is 400", req{Key: a.Customer, Body: `{"message":`}, 400, "invalid_json"},
		{"trailing data after the JSON is 400", req{Key: a.Customer, Body: good + ` {}`}, 400, "invalid_json"},
		{"an empty body is 400", req{Key: a.Customer, Body: ``, Header: map[string]string{"Content-Type": "application/json"}}, 400, "invalid_json"},
		{"a missing message is 400", req{Key: a.Customer, Body: `{}`}, 400, "validation_failed"},
		{"a message that is not a string is 400", req{Key: a.Customer, Body: `{"message":5}`}, 400, "validation_failed"},
		{"an empty message is 400", req{Key: a.Customer, Body: `{"message":""}`}, 400, "validation_failed"},
		{"a message over 2000 characters is 400", req{Key: a.Customer, Body: `{"message":"` + strings.Repeat("é", 2001) + `"}`}, 400, "validation_failed"},
		{"a message of 2000 characters is accepted", req{Key: a.Customer, Body: `{"message":"` + strings.Repeat("é", 2000) + `"}`}, 201, ""},
		{"an unknown field is 400", req{Key: a.Customer, Body: `{"message":"hi","to":"x"}`}, 400, "validation_failed"},
		{"a NUL character is 400", req{Key: a.Customer, Body: `{"message":"a\u0000b"}`}, 400, "validation_failed"},
		{"text/plain is 400", req{Key: a.Customer, Body: good, Header: map[string]string{"Content-Type": "text/plain"}}, 400, "invalid_content_type"},
		{"a missing Content-Type is 400", req{Key: a.Customer, Body: good, Header: map[string]string{"Content-Type": ""}}, 400, "invalid_content_type"},
		{"authentication is decided before the body is read", req{Body: `not json`}, 401, "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Method, tt.r.Path = "POST", "/v1/messages"
			res := a.do(t, tt.r).expect(tt.status, tt.code)
			// RFC 6750: a Bearer key that will not do is an invalid_token; no key, or
			// another scheme, a plain challenge.
			want := "Bearer"
			if scheme, _, _ := strings.Cut(tt.r.Auth, " "); tt.r.Key != "" || strings.EqualFold(scheme, "Bearer") && tt.r.Auth != "Bearer" {
				want = `Bearer error="invalid_token"`
			}
			if got := res.Header.Get("WWW-Authenticate"); tt.status == 401 && got != want {
				t.Errorf("WWW-Authenticate = %q, want %q", got, want)
			}
		})
	}
}

// A look-alike email (a KELVIN SIGN for the K) is the address it looks like: the
// account shows the plain address, and no second account can hide behind the look-alike.
func TestLookAlikeEmailsAreTheAddressTheyLookLike(t *testing.T) {
	a := newTestAPI(t)
	var acct struct {
		Email string `json:"email"`
	}
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "\u212aate@example.com", "password": "correct horse battery"}}).expect(201, "").JSON(&acct)
	if acct.Email != "Kate@example.com" {
		t.Errorf("the account's email is %q, want Kate@example.com", acct.Email)
	}
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "kate@example.com", "password": "another password"}}).expect(409, "conflict")
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("KATE@example.com", "correct horse battery"), Body: map[string]any{"name": "k"}}).expect(201, "")
}

// Emails in HTTP Basic that no account can have (NUL, invalid UTF-8, not an address)
// are a wrong email or password, never a failure of the store.
func TestMalformedBasicEmailsAreUnauthorized(t *testing.T) {
	a := newTestAPI(t)
	for _, email := range []string{"ada\x00@example.com", "a\xffa@example.com", "not an email", ""} {
		a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic(email, "correct horse battery"), Body: map[string]any{"name": "k"}}).expect(401, "unauthorized")
	}
}

// Requests with a password (sign-ups and HTTP Basic) cost a memory-hard hash each: an
// address gets DefaultCredentialLimit of them a minute, beside the general limit.
func TestSignUpsAndLoginsAreLimitedPerAddress(t *testing.T) {
	a := newTestAPI(t)
	for i := range httpapi.DefaultCredentialLimit {
		res := a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": fmt.Sprintf("u%d@example.com", i), "password": "correct horse battery"}}).expect(201, "")
		if !strings.Contains(res.Header.Get("RateLimit-Policy"), `"credentials";q=10;w=60`) {
			t.Fatalf("RateLimit-Policy = %q", res.Header.Get("RateLimit-Policy"))
		}
	}
	res := a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "one-more@example.com", "password": "correct horse battery"}}).expect(429, "rate_limited")
	if ra, _ := strconv.Atoi(res.Header.Get("Retry-After")); ra < 2 {
		t.Errorf("Retry-After = %q, want the seconds until the next token (about 6)", res.Header.Get("Retry-After"))
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("u0@example.com", "correct horse battery"), Body: map[string]any{"name": "k"}}).expect(429, "rate_limited")
	// Calls with a key are not held back.
	a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer}).expect(200, "")
}

// Guessing one account's password gets DefaultFailedLoginLimit tries; then even the
// right password waits, and the failures are logged with the client and the account.
func TestFailedLoginsMakeTheEmailWait(t *testing.T) {
	logs := &lockedBuffer{}
	a := newTestAPI(t, func(c *httpapi.Config) {
		c.CredentialLimit = -1 // only the per-email limit is under test
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "kate@example.com", "password": "correct horse battery"}}).expect(201, "")
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "other@example.com", "password": "correct horse battery"}}).expect(201, "")
	for range httpapi.DefaultFailedLoginLimit {
		a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("kate@example.com", "a wrong guess!"), Body: map[string]any{"name": "k"}}).expect(401, "unauthorized")
	}
	res := a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("KATE@example.com", "correct horse battery"), Body: map[string]any{"name": "k"}}).expect(429, "rate_limited")
	if ra, _ := strconv.Atoi(res.Header.Get("Retry-After")); ra < 2 {
		t.Errorf("Retry-After = %q, want the wait (about a minute)", res.Header.Get("Retry-After"))
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("other@example.com", "correct horse battery"), Body: map[string]any{"name": "k"}}).expect(201, "")
	if n := strings.Count(logs.String(), `msg="failed login" client=127.0.0.1 account_id=`); n != httpapi.DefaultFailedLoginLimit {
		t.Errorf("%d failed logins logged with client and account, want %d:\n%s", n, httpapi.DefaultFailedLoginLimit, logs)
	}
}

// GET /accounts/me tells a key's holder whose key it is and with which role: what the
// staff console asks first.
func TestTheCurrentAccountIsTheKeysAccount(t *testing.T) {
	a := newTestAPI(t)
	type account struct {
		ID        int64     `json:"id"`
		Email     string    `json:"email"`
		Role      string    `json:"role"`
		CreatedAt time.Time `json:"createdAt"`
	}
	me := func(t *testing.T, key string) account {
		t.Helper()
		var got account
		a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: key}).expect(200, "").JSON(&got)
		return got
	}
	adminID := func() int64 {
		acct, _, err := a.Store.AccountByEmail(t.Context(), "admin@example.com")
		if err != nil {
			t.Fatal(err)
		}
		return acct.ID
	}()

	t.Run("an admin's key answers the admin account", func(t *testing.T) {
		if got := me(t, a.Admin); got.ID != adminID || got.Email != "admin@example.com" || got.Role != "admin" || got.CreatedAt.IsZero() {
			t.Errorf("account = %+v, want id %d, admin@example.com, admin", got, adminID)
		}
	})
	t.Run("a customer's key answers the customer account", func(t *testing.T) {
		if got := me(t, a.Customer); got.ID != a.CustomerID || got.Email != "customer@example.com" || got.Role != "customer" {
			t.Errorf("account = %+v, want id %d, customer@example.com, customer", got, a.CustomerID)
		}
	})
	t.Run("a sign-up's key answers the account as it was created", func(t *testing.T) {
		var created account
		a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "Ada@Example.com", "password": "correct horse battery"}}).expect(201, "").JSON(&created)
		var key struct{ Key string }
		a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("ada@example.com", "correct horse battery"), Body: map[string]any{"name": "k"}}).expect(201, "").JSON(&key)
		if got := me(t, key.Key); got.ID != created.ID || got.Email != "Ada@Example.com" || got.Role != "customer" || !got.CreatedAt.Equal(created.CreatedAt) {
			t.Errorf("account = %+v, want %+v as signed up", got, created)
		}
	})
	t.Run("a role the operator gives shows on the next call", func(t *testing.T) {
		key, id := a.newKey("promoted@example.com", petstore.Customer)
		if got := me(t, key); got.Role != "customer" {
			t.Fatalf("role = %q before the change", got.Role)
		}
		a.newKey("promoted@example.com", petstore.Admin)
		if got := me(t, key); got.ID != id || got.Role != "admin" {
			t.Errorf("account = %+v after the operator made it admin", got)
		}
	})

	revoked, _ := a.newKey("revoked@example.com", petstore.Customer)
	var keys []struct{ ID int64 }
	a.do(t, req{Method: "GET", Path: "/v1/api-keys", Key: revoked}).expect(200, "").JSON(&keys)
	me(t, revoked) // cached now
	a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", keys[0].ID), Key: revoked}).expect(204, "")
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "kim@example.com", "password": "correct horse battery"}}).expect(201, "")
	const invalid = `Bearer error="invalid_token"` // RFC 6750: a key was sent, and will not do
	tests := []struct {
		name      string
		r         req
		challenge string
	}{
		{"no Authorization header is 401", req{}, "Bearer"},
		{"an unknown key is 401", req{Key: "psk_" + strings.Repeat("a", 32)}, invalid},
		{"a malformed key is 401", req{Key: "hello"}, invalid},
		{"a revoked key is 401 on its very next use", req{Key: revoked}, invalid},
		{"a lower-case bearer scheme with an unknown key is 401", req{Auth: "bearer psk_" + strings.Repeat("a", 32)}, invalid},
		{"an account's password is 401: keys only, as everywhere but the key operations", req{Auth: basic("kim@example.com", "correct horse battery")}, "Bearer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Method, tt.r.Path = "GET", "/v1/accounts/me"
			res := a.do(t, tt.r).expect(401, "unauthorized")
			if got := res.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tt.challenge)
			}
			if strings.Contains(string(res.Body), "@example.com") {
				t.Errorf("a refusal shows an account: %s", res.Body)
			}
		})
	}
}

// Staff look up who is behind an order's accountId; a customer may not read another
// account, and a key without accounts:read may not either.
func TestAdminsLookUpAccounts(t *testing.T) {
	a := newTestAPI(t)
	var list []struct {
		ID          int64
		Email, Role string
	}
	res := a.do(t, req{Method: "GET", Path: path("/v1/accounts?ids=%d,999999", a.CustomerID), Key: a.Admin}).expect(200, "")
	res.JSON(&list)
	if len(list) != 1 || list[0].ID != a.CustomerID || list[0].Email != "customer@example.com" || list[0].Role != "customer" {
		t.Errorf("accounts by ids = %+v", list)
	}
	if l := res.Header.Get("Link"); l != "" {
		t.Errorf("a lookup of every id asked for links to more: %s", l)
	}
	// Every account, a page at a time, by id.
	res = a.do(t, req{Method: "GET", Path: "/v1/accounts?limit=1", Key: a.Admin}).expect(200, "")
	res.JSON(&list)
	next := res.Header.Get("Link")
	if len(list) != 1 || !strings.Contains(next, `rel="next"`) {
		t.Fatalf("first page %+v, Link %q", list, next)
	}
	first := list[0].ID
	target := strings.TrimPrefix(strings.SplitN(next, ">", 2)[0], "<")
	a.do(t, req{Method: "GET", Path: target, Key: a.Admin}).expect(200, "").JSON(&list)
	if len(list) != 1 || list[0].ID <= first {
		t.Errorf("second page %+v after account %d", list, first)
	}
	a.do(t, req{Method: "GET", Path: path("/v1/accounts?ids=%d", a.CustomerID), Key: a.Customer}).expect(403, petstore.EForbidden)
	orders := a.scopedKey(t, a.Admin, []string{"orders:read"}, time.Time{})
	a.do(t, req{Method: "GET", Path: "/v1/accounts", Key: orders}).expect(403, petstore.EInsufficientScope)
}
