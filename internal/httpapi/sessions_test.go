package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

// session is what the three sign-in operations answer.
type session struct {
	Account struct {
		ID       int64  `json:"id"`
		Email    string `json:"email"`
		Role     string `json:"role"`
		Disabled bool   `json:"disabled"`
	} `json:"account"`
	Key struct {
		ID        int64     `json:"id"`
		Name      string    `json:"name"`
		Key       string    `json:"key"`
		Scopes    []string  `json:"scopes"`
		ExpiresAt time.Time `json:"expiresAt"`
	} `json:"key"`
}

type invitation struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	ExpiresAt time.Time `json:"expiresAt"`
	URL       string    `json:"url"`
	Mailed    bool      `json:"mailed"`
}

// withPublicURL sets the public URL that links start with.
func withPublicURL(u string) apiOption { return func(c *httpapi.Config) { c.PublicURL = u } }

// noCredentialLimit lifts the limit on credential checks per address, for tests that
// make more of them than a person would in a minute.
func noCredentialLimit(c *httpapi.Config) { c.CredentialLimit = -1 }

const invalidLink = "This link is not valid: it may have expired or already been used. Ask for a new one."

// invite makes an invitation as the harness's admin and returns it with its token.
func (a *testAPI) invite(t testing.TB, email, role string) (invitation, string) {
	t.Helper()
	var inv invitation
	a.do(t, req{Method: "POST", Path: "/v1/invitations", Key: a.Admin, Body: map[string]any{"email": email, "role": role}}).expect(201, "").JSON(&inv)
	u, err := url.Parse(inv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return inv, u.Query().Get("token")
}

func (a *testAPI) accept(t testing.TB, token, password string) *response {
	t.Helper()
	return a.do(t, req{Method: "POST", Path: "/v1/invitations/accept", Body: map[string]any{"token": token, "password": password}})
}

func TestAnInvitedPersonSetsAPasswordAndIsSignedIn(t *testing.T) {
	a := newTestAPI(t, withPublicURL("https://shop.example.com/"), noCredentialLimit)
	before := time.Now()
	inv, token := a.invite(t, "Clerk@Example.com", "admin")
	if !strings.HasPrefix(inv.URL, "https://shop.example.com/console/accept?token=psi_") || len(token) != 4+43 {
		t.Fatalf("invitation url %q", inv.URL)
	}
	if inv.Role != "admin" || inv.Mailed || inv.Email != "Clerk@Example.com" ||
		inv.ExpiresAt.Before(before.Add(7*24*time.Hour-2*time.Second)) || inv.ExpiresAt.After(time.Now().Add(7*24*time.Hour)) {
		t.Errorf("invitation %+v", inv)
	}
	var s session
	a.accept(t, token, "correct horse battery").expect(201, "").JSON(&s)
	if s.Account.Email != "Clerk@Example.com" || s.Account.Role != "admin" || s.Key.Name != petstore.SessionKeyName ||
		!strings.HasPrefix(s.Key.Key, "psk_") || s.Key.Scopes != nil {
		t.Fatalf("session %+v", s)
	}
	if d := time.Until(s.Key.ExpiresAt); d < 12*time.Hour-time.Minute || d > 12*time.Hour {
		t.Errorf("the session key expires in %s, want 12h", d)
	}
	// The key works as the admin's, and the password signs in.
	a.do(t, req{Method: "GET", Path: "/v1/accounts", Key: s.Key.Key}).expect(200, "")
	a.do(t, req{Method: "POST", Path: "/v1/sessions", Body: `{"email":"clerk@example.com","password":"correct horse battery"}`}).expect(201, "")
	// The link works once.
	res := a.accept(t, token, "another horse battery").expect(400, petstore.EInvalidToken)
	if !strings.Contains(string(res.Body), invalidLink) {
		t.Errorf("the refusal says %s", res.Body)
	}
	// Sign-out is revoking the session's key with itself.
	a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", s.Key.ID), Key: s.Key.Key}).expect(204, "")
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: s.Key.Key}).expect(401, petstore.EUnauthorized)
}

func TestAnInvitationDefaultsToAdminAndRefusesAnAccountWithAPassword(t *testing.T) {
	a := newTestAPI(t, noCredentialLimit)
	var inv invitation
	a.do(t, req{Method: "POST", Path: "/v1/invitations", Key: a.Admin, Body: `{"email":"staff@example.com"}`}).expect(201, "").JSON(&inv)
	if inv.Role != "admin" {
		t.Errorf("role %q, want admin by default", inv.Role)
	}
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"signed-up@example.com","password":"correct horse battery"}`}).expect(201, "")
	a.do(t, req{Method: "POST", Path: "/v1/invitations", Key: a.Admin, Body: `{"email":"SIGNED-UP@example.com","role":"admin"}`}).expect(409, petstore.EConflict)
	// The harness's admin signs in with keys alone: it may be invited, and accepting
	// gives it a password, keeping its account.
	_, token := a.invite(t, "admin@example.com", "admin")
	var s session
	a.accept(t, token, "correct horse battery").expect(201, "").JSON(&s)
	if s.Account.Email != "admin@example.com" {
		t.Errorf("accepted into %+v", s.Account)
	}
	a.do(t, req{Method: "GET", Path: "/v1/accounts", Key: a.Admin}).expect(200, "")
	// A customer may not invite.
	a.do(t, req{Method: "POST", Path: "/v1/invitations", Key: a.Customer, Body: `{"email":"x@example.com"}`}).expect(403, petstore.EForbidden)
}

func TestSignInRefusalsAreOneAnswer(t *testing.T) {
	a := newTestAPI(t, noCredentialLimit)
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"kate@example.com","password":"correct horse battery"}`}).expect(201, "")
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"gone@example.com","password":"correct horse battery"}`}).expect(201, "")
	var gone struct{ ID int64 }
	a.do(t, req{Method: "POST", Path: "/v1/sessions", Body: `{"email":"gone@example.com","password":"correct horse battery"}`}).expect(201, "").JSON(&struct{}{})
	accts, _, err := a.Store.AccountByEmail(context.Background(), "gone@example.com")
	if err != nil {
		t.Fatal(err)
	}
	gone.ID = accts.ID
	a.patchAccount(t, a.Admin, gone.ID, `{"disabled":true}`).expect(200, "")
	refused := map[string]string{
		"a wrong password":         `{"email":"kate@example.com","password":"not the password"}`,
		"an unknown email":         `{"email":"nobody@example.com","password":"correct horse battery"}`,
		"a key-only account":       `{"email":"customer@example.com","password":"correct horse battery"}`,
		"a disabled account":       `{"email":"gone@example.com","password":"correct horse battery"}`,
		"an email in another case": `{"email":"KATE@example.com","password":"not the password"}`,
	}
	var first string
	for name, body := range refused {
		t.Run(name, func(t *testing.T) {
			res := a.do(t, req{Method: "POST", Path: "/v1/sessions", Body: body}).expect(401, petstore.EUnauthorized)
			if w := res.Header.Get("WWW-Authenticate"); strings.Contains(strings.ToLower(w), "basic") {
				t.Errorf("WWW-Authenticate %q would open a browser's dialog", w)
			}
			if first == "" {
				first = string(res.Body)
			} else if string(res.Body) != first {
				t.Errorf("answered %s, another refusal answered %s", res.Body, first)
			}
			if res.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", res.Header.Get("Cache-Control"))
			}
		})
	}
	var s session
	a.do(t, req{Method: "POST", Path: "/v1/sessions", Body: `{"email":"Kate@example.com","password":"correct horse battery","scopes":["pets:read","orders:read"]}`}).expect(201, "").JSON(&s)
	if strings.Join(s.Key.Scopes, " ") != "orders:read pets:read" || s.Account.Role != "customer" {
		t.Errorf("a narrowed session %+v", s)
	}
	a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: s.Key.Key, Body: `{"petId":1,"quantity":1}`}).expect(403, petstore.EInsufficientScope)
	a.do(t, req{Method: "POST", Path: "/v1/sessions", Body: `{"email":"kate@example.com","password":"correct horse battery","scopes":["webhooks:manage"]}`}).expect(400, petstore.EValidationFailed)
}

func TestSignInCountsAgainstTheCredentialLimit(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.CredentialLimit = 2 })
	for _, p := range []string{"/v1/sessions", "/v1/invitations/accept", "/v1/password-resets/confirm"} {
		t.Run(p, func(t *testing.T) {
			from := map[string]string{"/v1/sessions": "127.0.0.21", "/v1/invitations/accept": "127.0.0.22", "/v1/password-resets/confirm": "127.0.0.23"}[p]
			body := `{"email":"kate@example.com","password":"not the password"}`
			if p != "/v1/sessions" {
				body = `{"token":"psi_nothing","password":"correct horse battery"}`
			}
			var last *response
			for range 3 {
				last = a.do(t, req{Method: "POST", Path: p, Body: body, From: from})
			}
			last.expect(429, petstore.ERateLimited)
			if !strings.Contains(last.Header.Get("RateLimit-Policy"), `"credentials"`) {
				t.Errorf("RateLimit-Policy %q", last.Header.Get("RateLimit-Policy"))
			}
		})
	}
}

func TestAPasswordResetWithoutMailIsUnavailableForEveryEmail(t *testing.T) {
	a := newTestAPI(t, noCredentialLimit)
	var first string
	for _, email := range []string{"customer@example.com", "nobody@example.com", "admin@example.com"} {
		res := a.do(t, req{Method: "POST", Path: "/v1/password-resets", Body: map[string]string{"email": email}}).expect(503, petstore.EUnavailable)
		if first == "" {
			first = string(res.Body)
		} else if string(res.Body) != first {
			t.Errorf("%s: %s, another email: %s", email, res.Body, first)
		}
	}
	if !strings.Contains(first, "not configured") {
		t.Errorf("the refusal does not say why: %s", first)
	}
}

func TestTheLinkPagesAreTheConsoleWithoutReferrer(t *testing.T) {
	a := newTestAPI(t)
	for _, p := range []string{"/console/accept?token=psi_x", "/console/reset?token=psr_x"} {
		res, err := http.Get(a.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
			res.Header.Get("Referrer-Policy") != "no-referrer" || res.Header.Get("Cache-Control") != "no-store" ||
			res.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: %d %v", p, res.StatusCode, res.Header)
		}
	}
}

// Every operation open to all (security: [] in the document) counts against the
// limit of credential checks per address: a new one is limited without being listed.
func TestEveryOpenOperationCountsAgainstTheCredentialLimit(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.CredentialLimit = 2 })
	open := 0
	for _, op := range a.documentOps(t) {
		// The open operations that take a password or a one-time token, in a body;
		// the one without a body, getPhoto, serves public photos, and only its misses
		// count, against the general limit (TestOWASP_API4…).
		if op.Secured || !op.HasBody {
			continue
		}
		open++
		from := fmt.Sprintf("127.0.1.%d", open) // an allowance of its own
		t.Run(op.ID, func(t *testing.T) {
			var last *response
			for range 3 {
				last = a.do(t, req{Method: op.Method, Path: "/v1" + op.Path, Body: `{}`, From: from})
			}
			last.expect(429, petstore.ERateLimited)
			if !strings.Contains(last.Header.Get("RateLimit-Policy"), `"credentials"`) {
				t.Errorf("RateLimit-Policy %q", last.Header.Get("RateLimit-Policy"))
			}
		})
	}
	if open < 5 {
		t.Fatalf("the document has %d operations open to all, want the 5 of sign-up, sign-in, invitations and resets at least", open)
	}
}
