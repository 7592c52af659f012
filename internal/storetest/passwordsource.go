package storetest

import (
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// testPasswordSource: an account records where its password came from, which decides
// whether an admin may make it admin (petstore.CheckRoleGrant).
func testPasswordSource(t *testing.T, open Opener) {
	t.Run("invited staff made a customer is made admin again", func(t *testing.T) { testInvitedPromotedAgain(t, open) })
	t.Run("a sign-up is still not made admin", func(t *testing.T) { testSignUpNotPromoted(t, open) })
	t.Run("a reset keeps where the password came from", func(t *testing.T) { testResetKeepsSource(t, open) })
	t.Run("accounts read back with their password's source", func(t *testing.T) { testSourceReadBack(t, open) })
}

// wantSource reads the account with email back every way a store reads accounts, and
// checks its password's source.
func (f *fixture) wantSource(email string, want petstore.PasswordSource) {
	f.t.Helper()
	a, _, err := f.s.AccountByEmail(f.ctx, email)
	must(f.t, err)
	byID, err := f.s.Account(f.ctx, a.ID)
	must(f.t, err)
	listed, err := f.s.Accounts(f.ctx, petstore.AccountFilter{IDs: []int64{a.ID}}, petstore.Page{Limit: 1})
	must(f.t, err)
	if a.Password != want || byID.Password != want || len(listed) != 1 || listed[0].Password != want {
		f.t.Errorf("%s: password source by email %q, by id %q, listed %+v; want %q", email, a.Password, byID.Password, listed, want)
	}
}

func testInvitedPromotedAgain(t *testing.T, open Opener) {
	f := setup(t, open)
	f.account(petstore.Admin) // the last-admin rule is not what this is about
	email := newEmail()
	a, err := f.redeem(petstore.TokenInvitation, f.invite(email, petstore.Admin, inAWeek()), "their hash")
	must(t, err)
	if a.Password != petstore.InvitedPassword {
		t.Errorf("accepted into %+v, want its password from the invitation", a)
	}
	f.wantSource(email, petstore.InvitedPassword)
	demoted, err := f.s.UpdateAccount(f.ctx, a.ID, petstore.AccountChange{Role: roleOf(petstore.Customer)})
	must(t, err)
	if demoted.Role != petstore.Customer {
		t.Fatalf("demoted to %+v", demoted)
	}
	promoted, err := f.s.UpdateAccount(f.ctx, a.ID, petstore.AccountChange{Role: roleOf(petstore.Admin)})
	must(t, err)
	if promoted.Role != petstore.Admin || promoted.Password != petstore.InvitedPassword {
		t.Errorf("made admin again: %+v", promoted)
	}
	// The operator's keys create --role admin applies the same rule.
	_, err = f.s.UpdateAccount(f.ctx, a.ID, petstore.AccountChange{Role: roleOf(petstore.Customer)})
	must(t, err)
	got, err := f.s.EnsureAccount(f.ctx, email, petstore.Admin)
	must(t, err)
	if got.Role != petstore.Admin {
		t.Errorf("ensured as admin: %+v", got)
	}
	// A key-only account invited as a customer is vouched for too.
	keyOnly, err := f.s.EnsureAccount(f.ctx, newEmail(), petstore.Customer)
	must(t, err)
	_, err = f.redeem(petstore.TokenInvitation, f.invite(keyOnly.Email, petstore.Customer, inAWeek()), "h")
	must(t, err)
	f.wantSource(keyOnly.Email, petstore.InvitedPassword)
	_, err = f.s.UpdateAccount(f.ctx, keyOnly.ID, petstore.AccountChange{Role: roleOf(petstore.Admin)})
	must(t, err)
}

func testSignUpNotPromoted(t *testing.T, open Opener) {
	f := setup(t, open)
	f.account(petstore.Admin)
	signUp := f.account(petstore.Customer)
	if signUp.Password != petstore.SignUpPassword {
		t.Errorf("signed up as %+v, want its password from the sign-up", signUp)
	}
	_, err := f.s.UpdateAccount(f.ctx, signUp.ID, petstore.AccountChange{Role: roleOf(petstore.Admin)})
	wantCode(t, err, petstore.EConflict)
	_, err = f.s.EnsureAccount(f.ctx, signUp.Email, petstore.Admin)
	wantCode(t, err, petstore.EConflict)
	got, err := f.s.Account(f.ctx, signUp.ID)
	must(t, err)
	if got.Role != petstore.Customer {
		t.Errorf("a sign-up became %+v", got)
	}
	// Taken over, it has no password, and may be made admin.
	must(t, f.s.TakeOverAccount(f.ctx, signUp.Email))
	f.wantSource(signUp.Email, petstore.NoPassword)
	_, err = f.s.UpdateAccount(f.ctx, signUp.ID, petstore.AccountChange{Role: roleOf(petstore.Admin)})
	must(t, err)
}

func testResetKeepsSource(t *testing.T, open Opener) {
	f := setup(t, open)
	invited := newEmail()
	_, err := f.redeem(petstore.TokenInvitation, f.invite(invited, petstore.Admin, inAWeek()), "h")
	must(t, err)
	signUp := f.account(petstore.Customer)
	for email, want := range map[string]petstore.PasswordSource{invited: petstore.InvitedPassword, signUp.Email: petstore.SignUpPassword} {
		got, err := f.redeem(petstore.TokenReset, f.resetToken(email, time.Now().Add(time.Hour)), "reset hash")
		must(t, err)
		if got.Password != want {
			t.Errorf("%s reset into %+v, want source %q", email, got, want)
		}
		f.wantSource(email, want)
	}
}

func testSourceReadBack(t *testing.T, open Opener) {
	f := setup(t, open)
	keyOnly, err := f.s.EnsureAccount(f.ctx, newEmail(), petstore.Customer)
	must(t, err)
	if keyOnly.Password != petstore.NoPassword {
		t.Errorf("a key-only account %+v, want no password", keyOnly)
	}
	f.wantSource(keyOnly.Email, petstore.NoPassword)
	f.wantSource(f.account(petstore.Customer).Email, petstore.SignUpPassword)
}
