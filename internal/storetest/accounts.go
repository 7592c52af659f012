package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

func testAccounts(t *testing.T, open Opener) {
	t.Run("a new account has an id, its email, its role and a creation time", func(t *testing.T) { testAccountCreated(t, open) })
	t.Run("accounts are listed by id, by ids or a page at a time, without their password hashes", func(t *testing.T) { testAccountsListed(t, open) })
	t.Run("an account without a role is a customer", func(t *testing.T) { testAccountDefaultRole(t, open) })
	t.Run("an unknown role is refused", func(t *testing.T) { testAccountUnknownRole(t, open) })

	for _, email := range []string{"ada@example.com", "ADA@EXAMPLE.COM", "Ada@example.COM"} {
		t.Run("an email already used is a conflict, written as "+email, func(t *testing.T) {
			f := setup(t, open)
			_, err := f.s.CreateAccount(f.ctx, "ada@Example.com", "h", petstore.Customer)
			must(t, err)
			_, err = f.s.CreateAccount(f.ctx, email, "h", petstore.Customer)
			wantCode(t, err, petstore.EConflict)
		})
	}

	t.Run("an account is found by its email in any letter case, with its password hash", func(t *testing.T) { testAccountByEmail(t, open) })
	t.Run("an unknown email is not found", func(t *testing.T) { testAccountUnknownEmail(t, open) })
	t.Run("an account is found by its id, as it was created and as it is now", func(t *testing.T) { testAccountByID(t, open) })
	t.Run("an unknown account id is not found", func(t *testing.T) { testAccountUnknownID(t, open) })
	t.Run("ensuring a missing account creates it without a password", func(t *testing.T) { testEnsureAccountCreates(t, open) })
	t.Run("ensuring a missing account without a role creates a customer", func(t *testing.T) { testEnsureAccountCreatesCustomer(t, open) })
	t.Run("ensuring an existing account without a password sets its role", func(t *testing.T) { testEnsureAccountSetsRole(t, open) })
	t.Run("an account with a password is never made admin, and stays as it was", func(t *testing.T) { testEnsureAccountWithPassword(t, open) })
	t.Run("taking an account over removes its password and revokes its keys", func(t *testing.T) { testAccountTakeOver(t, open) })
	t.Run("ensuring an existing account without a role keeps its role", func(t *testing.T) { testEnsureAccountKeepsRole(t, open) })
	t.Run("accounts are counted", func(t *testing.T) { testAccountsCounted(t, open) })
}

func testAccountCreated(t *testing.T, open Opener) {
	f := setup(t, open)
	a, err := f.s.CreateAccount(f.ctx, "Ada@Example.com", "h1", petstore.Admin)
	must(t, err)
	if a.ID < 1 || a.Email != "Ada@Example.com" || a.Role != petstore.Admin {
		t.Errorf("account = %+v", a)
	}
	wantRecent(t, "createdAt", a.CreatedAt)
}

func testAccountsListed(t *testing.T, open Opener) {
	f := setup(t, open)
	var made []petstore.Account
	for range 4 {
		made = append(made, f.account(petstore.Customer))
	}
	got, err := f.s.Accounts(f.ctx, petstore.AccountFilter{IDs: []int64{made[2].ID, 999999, made[0].ID}}, petstore.Page{Limit: 100})
	must(t, err)
	if len(got) != 2 || got[0] != made[0] || got[1] != made[2] {
		t.Errorf("accounts by ids = %+v, want %+v and %+v", got, made[0], made[2])
	}
	got, err = f.s.Accounts(f.ctx, petstore.AccountFilter{}, petstore.Page{Limit: 2, After: made[0].ID})
	must(t, err)
	if len(got) != 2 || got[0] != made[1] || got[1] != made[2] {
		t.Errorf("a page of accounts = %+v, want %+v and %+v", got, made[1], made[2])
	}
	got, err = f.s.Accounts(f.ctx, petstore.AccountFilter{IDs: []int64{999999}}, petstore.Page{})
	must(t, err)
	if len(got) != 0 {
		t.Errorf("unknown ids found %+v", got)
	}
}

func testAccountDefaultRole(t *testing.T, open Opener) {
	f := setup(t, open)
	a, err := f.s.CreateAccount(f.ctx, "bob@example.com", "h", "")
	must(t, err)
	if a.Role != petstore.Customer {
		t.Errorf("role = %q, want customer", a.Role)
	}
}

func testAccountUnknownRole(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.CreateAccount(f.ctx, "bob@example.com", "h", "owner")
	wantCode(t, err, petstore.EValidationFailed)
}

func testAccountByEmail(t *testing.T, open Opener) {
	f := setup(t, open)
	a, err := f.s.CreateAccount(f.ctx, "Ada@Example.com", "the-hash", petstore.Customer)
	must(t, err)
	for _, email := range []string{"Ada@Example.com", "ada@example.com", "ADA@EXAMPLE.COM"} {
		got, hash, err := f.s.AccountByEmail(f.ctx, email)
		must(t, err)
		if got.ID != a.ID || got.Email != a.Email || got.Role != a.Role || !got.CreatedAt.Equal(a.CreatedAt) {
			t.Errorf("AccountByEmail(%s) = %+v, want %+v", email, got, a)
		}
		if hash != "the-hash" {
			t.Errorf("password hash = %q, want the-hash", hash)
		}
	}
}

func testAccountUnknownEmail(t *testing.T, open Opener) {
	f := setup(t, open)
	_, _, err := f.s.AccountByEmail(f.ctx, "nobody@example.com")
	wantCode(t, err, petstore.ENotFound)
}

func testAccountByID(t *testing.T, open Opener) {
	f := setup(t, open)
	a, err := f.s.CreateAccount(f.ctx, "Ada@Example.com", "the-hash", petstore.Customer)
	must(t, err)
	other := f.account(petstore.Admin)
	got, err := f.s.Account(f.ctx, a.ID)
	must(t, err)
	if got.ID != a.ID || got.Email != "Ada@Example.com" || got.Role != petstore.Customer || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Errorf("Account(%d) = %+v, want %+v", a.ID, got, a)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("createdAt is in %v, want UTC", got.CreatedAt.Location())
	}
	got, err = f.s.Account(f.ctx, other.ID)
	must(t, err)
	if got.ID != other.ID || got.Email != other.Email || got.Role != petstore.Admin {
		t.Errorf("Account(%d) = %+v, want %+v", other.ID, got, other)
	}
	// A role the operator changes later is the one found.
	k, err := f.s.EnsureAccount(f.ctx, "ops@example.com", petstore.Customer)
	must(t, err)
	_, err = f.s.EnsureAccount(f.ctx, "ops@example.com", petstore.Admin)
	must(t, err)
	got, err = f.s.Account(f.ctx, k.ID)
	must(t, err)
	if got.Role != petstore.Admin {
		t.Errorf("role = %q after the operator made the account admin", got.Role)
	}
}

func testAccountUnknownID(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	_, err := f.s.Account(f.ctx, a.ID+1000)
	wantCode(t, err, petstore.ENotFound)
}

func testEnsureAccountCreates(t *testing.T, open Opener) {
	f := setup(t, open)
	a, err := f.s.EnsureAccount(f.ctx, "ops@example.com", petstore.Admin)
	must(t, err)
	if a.ID < 1 || a.Role != petstore.Admin || a.Email != "ops@example.com" {
		t.Errorf("account = %+v", a)
	}
	_, hash, err := f.s.AccountByEmail(f.ctx, "ops@example.com")
	must(t, err)
	if hash != "" {
		t.Errorf("password hash = %q, want none", hash)
	}
}

func testEnsureAccountCreatesCustomer(t *testing.T, open Opener) {
	f := setup(t, open)
	a, err := f.s.EnsureAccount(f.ctx, "ops@example.com", "")
	must(t, err)
	if a.Role != petstore.Customer {
		t.Errorf("role = %q, want customer", a.Role)
	}
}

func testEnsureAccountSetsRole(t *testing.T, open Opener) {
	f := setup(t, open)
	a, err := f.s.EnsureAccount(f.ctx, "ops@example.com", petstore.Customer)
	must(t, err)
	got, err := f.s.EnsureAccount(f.ctx, "OPS@example.com", petstore.Admin)
	must(t, err)
	if got.ID != a.ID || got.Role != petstore.Admin || got.Email != "ops@example.com" {
		t.Errorf("account = %+v, want id %d as admin", got, a.ID)
	}
}

func testEnsureAccountWithPassword(t *testing.T, open Opener) {
	f := setup(t, open)
	a, err := f.s.CreateAccount(f.ctx, "ops@example.com", "attackers-hash", petstore.Customer)
	must(t, err)
	_, err = f.s.EnsureAccount(f.ctx, "OPS@example.com", petstore.Admin)
	wantCode(t, err, petstore.EConflict)
	again, hash, err := f.s.AccountByEmail(f.ctx, "ops@example.com")
	must(t, err)
	if again.Role != petstore.Customer || hash != "attackers-hash" {
		t.Errorf("stored account = %+v with hash %q", again, hash)
	}
	// Ensuring it without a role, or as a customer, is fine.
	got, err := f.s.EnsureAccount(f.ctx, "ops@example.com", petstore.Customer)
	must(t, err)
	if got.ID != a.ID {
		t.Errorf("account = %+v, want id %d", got, a.ID)
	}
}

func testAccountTakeOver(t *testing.T, open Opener) {
	f := setup(t, open)
	a, err := f.s.CreateAccount(f.ctx, "ops@example.com", "attackers-hash", petstore.Customer)
	must(t, err)
	k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "theirs", Prefix: "psk_", Hash: []byte("their-key")})
	must(t, err)
	must(t, f.s.TakeOverAccount(f.ctx, "OPS@example.com"))
	_, hash, err := f.s.AccountByEmail(f.ctx, "ops@example.com")
	must(t, err)
	if hash != "" {
		t.Errorf("password hash = %q after the take-over", hash)
	}
	if _, err := f.s.PrincipalByKeyHash(f.ctx, []byte("their-key")); petstore.ErrorCode(err) != petstore.ENotFound {
		t.Errorf("key %d still works after the take-over: %v", k.ID, err)
	}
	got, err := f.s.EnsureAccount(f.ctx, "ops@example.com", petstore.Admin)
	must(t, err)
	if got.ID != a.ID || got.Role != petstore.Admin {
		t.Errorf("account = %+v, want id %d as admin", got, a.ID)
	}
	wantCode(t, f.s.TakeOverAccount(f.ctx, "nobody@example.com"), petstore.ENotFound)
}

func testEnsureAccountKeepsRole(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Admin)
	got, err := f.s.EnsureAccount(f.ctx, strings.ToUpper(a.Email), "")
	must(t, err)
	if got.ID != a.ID || got.Role != petstore.Admin {
		t.Errorf("account = %+v, want id %d as admin", got, a.ID)
	}
}

func testAccountsCounted(t *testing.T, open Opener) {
	f := setup(t, open)
	n, err := f.s.CountAccounts(f.ctx)
	must(t, err)
	if n != 0 {
		t.Fatalf("a new store counts %d accounts", n)
	}
	f.account(petstore.Customer)
	f.account(petstore.Admin)
	if _, err := f.s.EnsureAccount(f.ctx, "ops@example.com", petstore.Admin); err != nil {
		t.Fatal(err)
	}
	n, err = f.s.CountAccounts(f.ctx)
	must(t, err)
	if n != 3 {
		t.Errorf("counted %d accounts, want 3", n)
	}
}
