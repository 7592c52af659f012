package storetest

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

func testTokens(t *testing.T, open Opener) {
	t.Run("an accepted invitation makes the account with its role, once", func(t *testing.T) { testInvitationAccepted(t, open) })
	t.Run("of two accepts of one token at once, exactly one wins", func(t *testing.T) { testParallelAccepts(t, open) })
	t.Run("a token past its expiry is refused", func(t *testing.T) { testTokenExpiry(t, open) })
	t.Run("a newer invitation or reset replaces the open one", func(t *testing.T) { testTokenReplaced(t, open) })
	t.Run("a token of one kind is no token of the other", func(t *testing.T) { testTokenKinds(t, open) })
	t.Run("a key-only account is invited, one with a password is not", func(t *testing.T) { testInviteExisting(t, open) })
	t.Run("a disabled account's tokens are refused", func(t *testing.T) { testDisabledTokens(t, open) })
	t.Run("a reset sets the password and revokes session keys alone", func(t *testing.T) { testReset(t, open) })
	t.Run("the operator revokes any account's key by id", func(t *testing.T) { testRevokeKeyByID(t, open) })
	t.Run("a session at the cap ends the oldest session; another key meets the cap", func(t *testing.T) { testSessionsAtTheCap(t, open) })
}

// tokenHash is the stored form of a test's token secret.
func tokenHash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// invite stores an invitation to email for role with a new secret, and returns it.
func (f *fixture) invite(email string, role petstore.Role, expires time.Time) string {
	f.t.Helper()
	secret := fmt.Sprintf("psi_test%d", unique.Add(1))
	inv, err := f.s.CreateInvitation(f.ctx, petstore.NewToken{Kind: petstore.TokenInvitation, Email: email, Role: role,
		Hash: tokenHash(secret), ExpiresAt: expires})
	if err != nil {
		f.t.Fatalf("invite %s: %v", email, err)
	}
	if inv.ID == 0 || inv.Email != email || inv.Role != role || inv.ExpiresAt.Sub(expires).Abs() >= time.Microsecond || inv.CreatedAt.Location() != time.UTC {
		f.t.Fatalf("invitation %+v, want one to %s as %s until %s", inv, email, role, expires)
	}
	return secret
}

// resetToken stores a password reset of email's account with a new secret.
func (f *fixture) resetToken(email string, expires time.Time) string {
	f.t.Helper()
	secret := fmt.Sprintf("psr_test%d", unique.Add(1))
	must(f.t, f.s.CreatePasswordReset(f.ctx, petstore.NewToken{Kind: petstore.TokenReset, Email: email, Hash: tokenHash(secret), ExpiresAt: expires}))
	return secret
}

func (f *fixture) redeem(kind petstore.TokenKind, secret, passwordHash string) (petstore.Account, error) {
	return f.s.Redeem(f.ctx, petstore.Redemption{Kind: kind, Hash: tokenHash(secret), PasswordHash: passwordHash})
}

func newEmail() string { return fmt.Sprintf("invited%d@example.com", unique.Add(1)) }

func inAWeek() time.Time { return time.Now().Add(petstore.InvitationLifetime) }

func testInvitationAccepted(t *testing.T, open Opener) {
	f := setup(t, open)
	email := newEmail()
	secret := f.invite(email, petstore.Admin, inAWeek())
	a, err := f.redeem(petstore.TokenInvitation, secret, "chosen hash")
	must(t, err)
	if a.ID == 0 || a.Email != email || a.Role != petstore.Admin || a.Disabled {
		t.Fatalf("accepted into %+v", a)
	}
	got, hash, err := f.s.AccountByEmail(f.ctx, email)
	must(t, err)
	if got.ID != a.ID || got.Role != petstore.Admin || hash != "chosen hash" {
		t.Errorf("read back %+v with hash %q", got, hash)
	}
	_, err = f.redeem(petstore.TokenInvitation, secret, "another hash")
	wantCode(t, err, petstore.EInvalidToken)
	_, hash, err = f.s.AccountByEmail(f.ctx, email)
	must(t, err)
	if hash != "chosen hash" {
		t.Errorf("a replayed token changed the password hash to %q", hash)
	}
	_, err = f.redeem(petstore.TokenInvitation, "psi_never-made", "x")
	wantCode(t, err, petstore.EInvalidToken)
}

func testParallelAccepts(t *testing.T, open Opener) {
	f := setup(t, open)
	for round := range 10 {
		email := newEmail()
		secret := f.invite(email, petstore.Customer, inAWeek())
		var (
			wg   sync.WaitGroup
			won  atomic.Int32
			errs = make([]error, 2)
		)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = f.redeem(petstore.TokenInvitation, secret, fmt.Sprintf("hash %d", i))
				if errs[i] == nil {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Fatalf("round %d: %d of 2 accepts at once won (%v); want exactly 1", round, won.Load(), errs)
		}
		for _, err := range errs {
			if err != nil && petstore.ErrorCode(err) != petstore.EInvalidToken {
				t.Fatalf("round %d: the losing accept answered %v, want invalid_token", round, err)
			}
		}
	}
}

func testTokenExpiry(t *testing.T, open Opener) {
	var now atomic.Pointer[time.Time]
	start := time.Now().UTC()
	now.Store(&start)
	f := setupWith(t, open, Hooks{Now: func() time.Time { return *now.Load() }})
	account := f.account(petstore.Customer)
	invited := newEmail()
	inv := f.invite(invited, petstore.Admin, start.Add(time.Hour))
	reset := f.resetToken(account.Email, start.Add(time.Hour))
	late := start.Add(time.Hour)
	now.Store(&late)
	_, err := f.redeem(petstore.TokenInvitation, inv, "h")
	wantCode(t, err, petstore.EInvalidToken)
	_, err = f.redeem(petstore.TokenReset, reset, "h")
	wantCode(t, err, petstore.EInvalidToken)
	if _, _, err := f.s.AccountByEmail(f.ctx, invited); petstore.ErrorCode(err) != petstore.ENotFound {
		t.Errorf("an expired invitation made the account: %v", err)
	}
	// Just before the expiry, a new one works.
	inv = f.invite(invited, petstore.Admin, late.Add(time.Second))
	_, err = f.redeem(petstore.TokenInvitation, inv, "h")
	must(t, err)
}

func testTokenReplaced(t *testing.T, open Opener) {
	f := setup(t, open)
	email := newEmail()
	first := f.invite(email, petstore.Admin, inAWeek())
	second := f.invite(email, petstore.Customer, inAWeek())
	_, err := f.redeem(petstore.TokenInvitation, first, "h")
	wantCode(t, err, petstore.EInvalidToken)
	a, err := f.redeem(petstore.TokenInvitation, second, "h")
	must(t, err)
	if a.Role != petstore.Customer {
		t.Errorf("the newer invitation gave %s, want customer", a.Role)
	}
	firstReset := f.resetToken(email, time.Now().Add(time.Hour))
	secondReset := f.resetToken(email, time.Now().Add(time.Hour))
	_, err = f.redeem(petstore.TokenReset, firstReset, "h2")
	wantCode(t, err, petstore.EInvalidToken)
	_, err = f.redeem(petstore.TokenReset, secondReset, "h2")
	must(t, err)
}

func testTokenKinds(t *testing.T, open Opener) {
	f := setup(t, open)
	account := f.account(petstore.Customer)
	inv := f.invite(newEmail(), petstore.Admin, inAWeek())
	reset := f.resetToken(account.Email, time.Now().Add(time.Hour))
	_, err := f.redeem(petstore.TokenReset, inv, "h")
	wantCode(t, err, petstore.EInvalidToken)
	_, err = f.redeem(petstore.TokenInvitation, reset, "h")
	wantCode(t, err, petstore.EInvalidToken)
	// Neither was used up by the wrong door.
	_, err = f.redeem(petstore.TokenInvitation, inv, "h")
	must(t, err)
	_, err = f.redeem(petstore.TokenReset, reset, "h")
	must(t, err)
	// Another account's reset token sets that account's password, not the caller's:
	// the token names its account.
	if err := f.s.CreatePasswordReset(f.ctx, petstore.NewToken{Kind: petstore.TokenReset, Email: "nobody@example.com",
		Hash: tokenHash("psr_nobody"), ExpiresAt: time.Now().Add(time.Hour)}); petstore.ErrorCode(err) != petstore.ENotFound {
		t.Errorf("a reset of no account: %v, want not_found", err)
	}
}

func testInviteExisting(t *testing.T, open Opener) {
	f := setup(t, open)
	signUp := f.account(petstore.Customer) // has a password ("hash")
	_, err := f.s.CreateInvitation(f.ctx, petstore.NewToken{Kind: petstore.TokenInvitation, Email: signUp.Email, Role: petstore.Admin,
		Hash: tokenHash("psi_signup"), ExpiresAt: inAWeek()})
	wantCode(t, err, petstore.EConflict)

	keyOnly, err := f.s.EnsureAccount(f.ctx, newEmail(), petstore.Customer)
	must(t, err)
	secret := f.invite(keyOnly.Email, petstore.Admin, inAWeek())
	a, err := f.redeem(petstore.TokenInvitation, secret, "their hash")
	must(t, err)
	if a.ID != keyOnly.ID || a.Role != petstore.Admin {
		t.Errorf("accepted into %+v, want account %d made admin", a, keyOnly.ID)
	}
	// An invitation open when its address signs up is refused at accept: the password
	// chosen at sign-up is not replaced, nor its role raised.
	late := newEmail()
	secret = f.invite(late, petstore.Admin, inAWeek())
	_, err = f.s.CreateAccount(f.ctx, late, "sign-up hash", petstore.Customer)
	must(t, err)
	_, err = f.redeem(petstore.TokenInvitation, secret, "h")
	wantCode(t, err, petstore.EInvalidToken)
	got, hash, err := f.s.AccountByEmail(f.ctx, late)
	must(t, err)
	if got.Role != petstore.Customer || hash != "sign-up hash" {
		t.Errorf("the sign-up became %+v with hash %q", got, hash)
	}
}

func testDisabledTokens(t *testing.T, open Opener) {
	f := setup(t, open)
	f.account(petstore.Admin) // so that disabling is not the last admin's
	keyOnly, err := f.s.EnsureAccount(f.ctx, newEmail(), petstore.Customer)
	must(t, err)
	inv := f.invite(keyOnly.Email, petstore.Admin, inAWeek())
	user := f.account(petstore.Customer)
	reset := f.resetToken(user.Email, time.Now().Add(time.Hour))
	for _, id := range []int64{keyOnly.ID, user.ID} {
		_, err := f.s.UpdateAccount(f.ctx, id, petstore.AccountChange{Disabled: setFlag(true)})
		must(t, err)
	}
	_, err = f.redeem(petstore.TokenInvitation, inv, "h")
	wantCode(t, err, petstore.EInvalidToken)
	_, err = f.redeem(petstore.TokenReset, reset, "h")
	wantCode(t, err, petstore.EInvalidToken)
	got, hash, err := f.s.AccountByEmail(f.ctx, keyOnly.Email)
	must(t, err)
	if got.Role != petstore.Customer || hash != "" {
		t.Errorf("a disabled account's invitation changed it: %+v, hash %q", got, hash)
	}
	_, hash, err = f.s.AccountByEmail(f.ctx, user.Email)
	must(t, err)
	if hash != "hash" {
		t.Errorf("a disabled account's reset set its password hash to %q", hash)
	}
}

func testReset(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	later := time.Now().Add(petstore.SessionLifetime)
	session, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: petstore.SessionKeyName, Prefix: "psk_s",
		Hash: tokenHash(name("session")), ExpiresAt: &later, Session: true})
	must(t, err)
	kept, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: petstore.SessionKeyName, Prefix: "psk_k",
		Hash: tokenHash(name("integration")), ExpiresAt: &later})
	must(t, err)
	secret := f.resetToken(a.Email, time.Now().Add(time.Hour))
	got, err := f.redeem(petstore.TokenReset, secret, "new hash")
	must(t, err)
	if got.ID != a.ID || got.Role != a.Role {
		t.Errorf("reset %+v, want account %d", got, a.ID)
	}
	_, hash, err := f.s.AccountByEmail(f.ctx, a.Email)
	must(t, err)
	if hash != "new hash" {
		t.Errorf("hash after reset %q", hash)
	}
	keys, err := f.s.APIKeys(f.ctx, a.ID, petstore.Page{Limit: 10})
	must(t, err)
	if len(keys) != 1 || keys[0].ID != kept.ID {
		t.Errorf("keys after the reset %+v, want only %d (not a session's, though named like one); session %d revoked", keys, kept.ID, session.ID)
	}
	_, err = f.redeem(petstore.TokenReset, secret, "again")
	wantCode(t, err, petstore.EInvalidToken)
}

func testRevokeKeyByID(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_r", Hash: tokenHash(name("revoke"))})
	must(t, err)
	owner, err := f.s.RevokeKey(f.ctx, k.ID)
	must(t, err)
	if owner != a.ID {
		t.Errorf("revoked a key of account %d, want %d", owner, a.ID)
	}
	_, err = f.s.PrincipalByKeyHash(f.ctx, tokenHash(""))
	wantCode(t, err, petstore.ENotFound)
	_, err = f.s.RevokeKey(f.ctx, k.ID)
	wantCode(t, err, petstore.ENotFound)
	_, err = f.s.RevokeKey(f.ctx, 999_999_999)
	wantCode(t, err, petstore.ENotFound)
}

func testSessionsAtTheCap(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	later := time.Now().Add(petstore.SessionLifetime)
	session := func(i int) (petstore.APIKey, error) {
		return f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: petstore.SessionKeyName, Prefix: "psk_s",
			Hash: tokenHash(fmt.Sprint("cap-session-", a.ID, "-", i)), ExpiresAt: &later, Session: true})
	}
	integration, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "integration", Prefix: "psk_i", Hash: tokenHash(name("cap-integration"))})
	must(t, err)
	var first petstore.APIKey
	for i := range petstore.MaxKeysPerAccount - 1 {
		k, err := session(i)
		must(t, err)
		if i == 0 {
			first = k
		}
	}
	// At the cap: another key is refused, another session ends the oldest session.
	_, err = f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "one more", Prefix: "psk_m", Hash: tokenHash(name("cap-more"))})
	wantCode(t, err, petstore.EConflict)
	_, err = session(petstore.MaxKeysPerAccount)
	must(t, err)
	keys, err := f.s.APIKeys(f.ctx, a.ID, petstore.Page{Limit: 100})
	must(t, err)
	if len(keys) != petstore.MaxKeysPerAccount || keys[0].ID != integration.ID || keys[1].ID == first.ID {
		t.Errorf("after a session at the cap: %d live keys, first %d then %d; want %d with the integration kept and session %d ended",
			len(keys), keys[0].ID, keys[1].ID, petstore.MaxKeysPerAccount, first.ID)
	}
}
