package httpapi_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

// The one-time tokens of invitations and password resets (API2:2023 Broken
// Authentication): a token works once, until it expires, at its own door, for its
// own account; sign-in and reset answers do not tell which emails have accounts, by
// their words or their time; links never take the request's Host.

// storeToken stores a token of kind for email, expiring at expires, and returns it.
func storeToken(t *testing.T, st petstore.Store, kind petstore.TokenKind, email string, expires time.Time) string {
	t.Helper()
	ctx := context.Background()
	if kind == petstore.TokenInvitation {
		token, hash := auth.NewToken(auth.InvitationPrefix)
		if _, err := st.CreateInvitation(ctx, petstore.NewToken{Kind: kind, Email: email, Role: petstore.Admin, Hash: hash, ExpiresAt: expires}); err != nil {
			t.Fatal(err)
		}
		return token
	}
	token, hash := auth.NewToken(auth.ResetPrefix)
	if err := st.CreatePasswordReset(ctx, petstore.NewToken{Kind: kind, Email: email, Hash: hash, ExpiresAt: expires}); err != nil {
		t.Fatal(err)
	}
	return token
}

// signUp opens an account with a password.
func (a *testAPI) signUp(t *testing.T, email, password string) {
	t.Helper()
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]string{"email": email, "password": password}}).expect(201, "")
}

func (a *testAPI) resetWith(t *testing.T, token, password string) *response {
	t.Helper()
	return a.do(t, req{Method: "POST", Path: "/v1/password-resets/confirm", Body: map[string]string{"token": token, "password": password}})
}

func (a *testAPI) signIn(t *testing.T, email, password string) *response {
	t.Helper()
	return a.do(t, req{Method: "POST", Path: "/v1/sessions", Body: map[string]string{"email": email, "password": password}})
}

func TestOWASP_Tokens_AReplayedTokenIsRefused(t *testing.T) {
	a := newTestAPI(t, noCredentialLimit)
	a.signUp(t, "kate@example.com", "correct horse battery")
	reset := storeToken(t, a.Store, petstore.TokenReset, "kate@example.com", time.Now().Add(time.Hour))
	invitation := storeToken(t, a.Store, petstore.TokenInvitation, "ann@example.com", time.Now().Add(time.Hour))
	a.resetWith(t, reset, "a new horse battery").expect(201, "")
	a.accept(t, invitation, "ann's horse battery").expect(201, "")
	a.resetWith(t, reset, "the thief's battery").expect(400, petstore.EInvalidToken)
	a.accept(t, invitation, "the thief's battery").expect(400, petstore.EInvalidToken)
	a.signIn(t, "kate@example.com", "a new horse battery").expect(201, "")
	a.signIn(t, "ann@example.com", "ann's horse battery").expect(201, "")
	a.signIn(t, "kate@example.com", "the thief's battery").expect(401, petstore.EUnauthorized)
}

func TestOWASP_Tokens_AnExpiredTokenIsRefused(t *testing.T) {
	a := newTestAPI(t, noCredentialLimit)
	a.signUp(t, "kate@example.com", "correct horse battery")
	past := time.Now().Add(-time.Second)
	reset := storeToken(t, a.Store, petstore.TokenReset, "kate@example.com", past)
	invitation := storeToken(t, a.Store, petstore.TokenInvitation, "ann@example.com", past)
	for _, res := range []*response{a.resetWith(t, reset, "a new horse battery"), a.accept(t, invitation, "ann's horse battery")} {
		res.expect(400, petstore.EInvalidToken)
		if !strings.Contains(string(res.Body), invalidLink) {
			t.Errorf("answered %s", res.Body)
		}
	}
	a.signIn(t, "kate@example.com", "correct horse battery").expect(201, "")
	a.signIn(t, "ann@example.com", "ann's horse battery").expect(401, petstore.EUnauthorized)
}

func TestOWASP_Tokens_ATokenWorksOnlyAtItsOwnDoor(t *testing.T) {
	a := newTestAPI(t, noCredentialLimit)
	a.signUp(t, "kate@example.com", "correct horse battery")
	reset := storeToken(t, a.Store, petstore.TokenReset, "kate@example.com", time.Now().Add(time.Hour))
	invitation := storeToken(t, a.Store, petstore.TokenInvitation, "ann@example.com", time.Now().Add(time.Hour))
	a.accept(t, reset, "the thief's battery").expect(400, petstore.EInvalidToken)
	a.resetWith(t, invitation, "the thief's battery").expect(400, petstore.EInvalidToken)
	// The same secret behind the other prefix is no token either.
	a.accept(t, "psi_"+strings.TrimPrefix(reset, "psr_"), "the thief's battery").expect(400, petstore.EInvalidToken)
	a.resetWith(t, "psr_"+strings.TrimPrefix(invitation, "psi_"), "the thief's battery").expect(400, petstore.EInvalidToken)
	// Neither was used up at the wrong door.
	a.resetWith(t, reset, "a new horse battery").expect(201, "")
	a.accept(t, invitation, "ann's horse battery").expect(201, "")
}

func TestOWASP_Tokens_AnotherAccountsTokenChangesOnlyThatAccount(t *testing.T) {
	a := newTestAPI(t, noCredentialLimit)
	a.signUp(t, "kate@example.com", "correct horse battery")
	a.signUp(t, "bob@example.com", "bob's horse battery")
	bobSignedIn := a.signIn(t, "bob@example.com", "bob's horse battery").expect(201, "")
	var bob session
	bobSignedIn.JSON(&bob)
	kates := storeToken(t, a.Store, petstore.TokenReset, "kate@example.com", time.Now().Add(time.Hour))
	// Bob, signed in, uses Kate's token: it sets Kate's password and signs in as Kate,
	// never as the caller; Bob's password and session stay.
	var s session
	r := req{Method: "POST", Path: "/v1/password-resets/confirm", Key: bob.Key.Key,
		Body: map[string]string{"token": kates, "password": "bob chose this one"}}
	a.do(t, r).expect(201, "").JSON(&s)
	if s.Account.Email != "kate@example.com" {
		t.Errorf("Kate's token signed in %s", s.Account.Email)
	}
	a.signIn(t, "bob@example.com", "bob's horse battery").expect(201, "")
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: bob.Key.Key}).expect(200, "")
}

func TestOWASP_Tokens_AResetSignsOutTheAccountsSessionsAlone(t *testing.T) {
	a := newTestAPI(t, noCredentialLimit)
	a.signUp(t, "kate@example.com", "correct horse battery")
	var before session
	a.signIn(t, "kate@example.com", "correct horse battery").expect(201, "").JSON(&before)
	var kept struct{ Key string }
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("kate@example.com", "correct horse battery"), Body: `{"name":"integration"}`}).expect(201, "").JSON(&kept)
	reset := storeToken(t, a.Store, petstore.TokenReset, "kate@example.com", time.Now().Add(time.Hour))
	var after session
	a.resetWith(t, reset, "a new horse battery").expect(201, "").JSON(&after)
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: before.Key.Key}).expect(401, petstore.EUnauthorized)
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: after.Key.Key}).expect(200, "")
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: kept.Key}).expect(200, "")
}

func TestOWASP_Tokens_InvitationLinksIgnoreTheHostHeader(t *testing.T) {
	a := newTestAPI(t, withPublicURL("https://shop.example.com"))
	var inv invitation
	a.do(t, req{Method: "POST", Path: "/v1/invitations", Key: a.Admin, Body: `{"email":"clerk@example.com"}`,
		Header: map[string]string{"Host": "evil.example", "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "http", "Forwarded": "host=evil.example"}}).
		expect(201, "").JSON(&inv)
	u, err := url.Parse(inv.URL)
	if err != nil || u.Scheme != "https" || u.Host != "shop.example.com" || u.Path != "/console/accept" {
		t.Errorf("the link is %q", inv.URL)
	}
	// Without a public URL, links name the address the server listens on.
	b := newTestAPI(t)
	b.do(t, req{Method: "POST", Path: "/v1/invitations", Key: b.Admin, Body: `{"email":"clerk@example.com"}`,
		Header: map[string]string{"Host": "evil.example"}}).expect(201, "").JSON(&inv)
	if !strings.HasPrefix(inv.URL, b.URL+"/console/accept?token=psi_") {
		t.Errorf("the link is %q, want one on %s", inv.URL, b.URL)
	}
}

// TestOWASP_Tokens_SignInTimeDoesNotTellAccounts times refused sign-ins of an
// unknown email, a key-only account, a disabled one and a known one with a wrong
// password, with password hashing as costly as a real one's share of the answer, and
// wants their medians close: each refusal checks one password.
func TestOWASP_Tokens_SignInTimeDoesNotTellAccounts(t *testing.T) {
	costly := auth.Passwords{Params: auth.PasswordParams{Memory: 8 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}}
	a := newTestAPI(t, noCredentialLimit, func(c *httpapi.Config) { c.Passwords = costly; c.FailedLoginLimit = -1 })
	a.signUp(t, "kate@example.com", "correct horse battery")
	a.signUp(t, "gone@example.com", "correct horse battery")
	gone, _, err := a.Store.AccountByEmail(context.Background(), "gone@example.com")
	if err != nil {
		t.Fatal(err)
	}
	a.patchAccount(t, a.Admin, gone.ID, `{"disabled":true}`).expect(200, "")
	cases := map[string]string{
		"a wrong password":   "kate@example.com",
		"an unknown email":   "nobody@example.com",
		"a key-only account": "customer@example.com",
		"a disabled account": "gone@example.com",
	}
	const rounds = 20
	times := map[string][]time.Duration{}
	for range rounds {
		for name, email := range cases {
			pw := "not the password"
			if name == "a disabled account" {
				pw = "correct horse battery" // the right one: still refused alike
			}
			start := time.Now()
			a.signIn(t, email, pw).expect(401, petstore.EUnauthorized)
			times[name] = append(times[name], time.Since(start))
		}
	}
	// The lower quartile: what a refusal costs when nothing else on the machine (other
	// tests, other processes) slows it down. Skipping the password check for some
	// refusals makes them an order of magnitude faster; noise is well within 2×.
	ref := lowerQuartile(times["a wrong password"])
	for name, d := range times {
		q := lowerQuartile(d)
		t.Logf("%s: lower quartile %s", name, q)
		if q < ref/2 || q > ref*2 {
			t.Errorf("%s takes %s (lower quartile of %d), a wrong password %s: the time tells them apart", name, q, rounds, ref)
		}
	}
}

// lowerQuartile is the 25th percentile of d (sorted in place).
func lowerQuartile(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/4]
}
