package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

func testAccountAdmin(t *testing.T, open Opener) {
	t.Run("a role is changed and an account disabled, as read back", func(t *testing.T) { testAccountChanged(t, open) })
	t.Run("changing an unknown account is not found", func(t *testing.T) { testAccountChangeUnknown(t, open) })
	t.Run("the last enabled admin is neither demoted nor disabled", func(t *testing.T) { testLastAdminKept(t, open) })
	t.Run("a disabled account's key is found as disabled, and enabled again", func(t *testing.T) { testDisabledKey(t, open) })
	t.Run("of two admins demoted at once, one stays", func(t *testing.T) { testParallelDemotions(t, open) })
}

func roleOf(r petstore.Role) *petstore.Role { return &r }
func setFlag(b bool) *bool                  { return &b }

func testAccountChanged(t *testing.T, open Opener) {
	f := setup(t, open)
	f.account(petstore.Admin)
	// A sign-up (its owner chose its password) is not made admin; an account that signs
	// in with keys alone, as staff made by the operator do, is.
	signUp := f.account(petstore.Customer)
	_, err := f.s.UpdateAccount(f.ctx, signUp.ID, petstore.AccountChange{Role: roleOf(petstore.Admin)})
	wantCode(t, err, petstore.EConflict)
	a, err := f.s.CreateAccount(f.ctx, fmt.Sprintf("staff%d@example.com", unique.Add(1)), "", petstore.Customer)
	must(t, err)
	got, err := f.s.UpdateAccount(f.ctx, a.ID, petstore.AccountChange{Role: roleOf(petstore.Admin)})
	must(t, err)
	if got.Role != petstore.Admin || got.Disabled || got.Email != a.Email || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Errorf("promoted = %+v", got)
	}
	got, err = f.s.UpdateAccount(f.ctx, a.ID, petstore.AccountChange{Disabled: setFlag(true)})
	must(t, err)
	if got.Role != petstore.Admin || !got.Disabled {
		t.Errorf("disabled = %+v", got)
	}
	read, err := f.s.Account(f.ctx, a.ID)
	must(t, err)
	if read != got {
		t.Errorf("read back %+v, want %+v", read, got)
	}
	listed, err := f.s.Accounts(f.ctx, petstore.AccountFilter{IDs: []int64{a.ID}}, petstore.Page{Limit: 10})
	must(t, err)
	if len(listed) != 1 || listed[0] != got {
		t.Errorf("listed %+v, want %+v", listed, got)
	}
	byEmail, _, err := f.s.AccountByEmail(f.ctx, a.Email)
	must(t, err)
	if !byEmail.Disabled {
		t.Errorf("by email %+v, want disabled", byEmail)
	}
}

func testAccountChangeUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.UpdateAccount(f.ctx, 999999, petstore.AccountChange{Disabled: setFlag(true)})
	wantCode(t, err, petstore.ENotFound)
}

func testLastAdminKept(t *testing.T, open Opener) {
	f := setup(t, open)
	first, second := f.account(petstore.Admin), f.account(petstore.Admin)
	_, err := f.s.UpdateAccount(f.ctx, first.ID, petstore.AccountChange{Disabled: setFlag(true)})
	must(t, err)
	_, err = f.s.UpdateAccount(f.ctx, second.ID, petstore.AccountChange{Role: roleOf(petstore.Customer)})
	wantCode(t, err, petstore.ELastAdmin)
	_, err = f.s.UpdateAccount(f.ctx, second.ID, petstore.AccountChange{Disabled: setFlag(true)})
	wantCode(t, err, petstore.ELastAdmin)
	if a, err := f.s.Account(f.ctx, second.ID); err != nil || a.Role != petstore.Admin || a.Disabled {
		t.Errorf("the last admin is now %+v, %v; want it as it was", a, err)
	}
	// A disabled admin is no admin to keep: demoting it leaves the enabled one.
	got, err := f.s.UpdateAccount(f.ctx, first.ID, petstore.AccountChange{Role: roleOf(petstore.Customer)})
	must(t, err)
	if got.Role != petstore.Customer || !got.Disabled {
		t.Errorf("the disabled admin demoted = %+v", got)
	}
}

func testDisabledKey(t *testing.T, open Opener) {
	f := setup(t, open)
	f.account(petstore.Admin)
	a := f.account(petstore.Customer)
	_, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte("disabled-key")})
	must(t, err)
	for _, disabled := range []bool{true, false} {
		_, err := f.s.UpdateAccount(f.ctx, a.ID, petstore.AccountChange{Disabled: setFlag(disabled)})
		must(t, err)
		p, err := f.s.PrincipalByKeyHash(f.ctx, []byte("disabled-key"))
		must(t, err)
		if p.AccountID != a.ID || p.Disabled != disabled {
			t.Errorf("with the account disabled %v, the key's principal is %+v", disabled, p)
		}
	}
}

// testParallelDemotions demotes the only two admins at once, round after round: the
// last-admin rule is decided under the store's lock or transaction, so one demotion
// passes and the other finds the last admin.
func testParallelDemotions(t *testing.T, open Opener) {
	f := setup(t, open)
	var survivor *petstore.Account
	for range 10 {
		pair := []petstore.Account{f.account(petstore.Admin), f.account(petstore.Admin)}
		if survivor != nil {
			// The last round's survivor steps down, three admins being there: the pair
			// is all that is left.
			_, err := f.s.UpdateAccount(f.ctx, survivor.ID, petstore.AccountChange{Role: roleOf(petstore.Customer)})
			must(t, err)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(pair))
		for i, adm := range pair {
			wg.Go(func() {
				_, errs[i] = f.s.UpdateAccount(f.ctx, adm.ID, petstore.AccountChange{Role: roleOf(petstore.Customer)})
			})
		}
		wg.Wait()
		survivor = nil
		for i, err := range errs {
			switch {
			case err == nil:
			case petstore.ErrorCode(err) == petstore.ELastAdmin && survivor == nil:
				survivor = &pair[i]
			default:
				t.Fatalf("parallel demotions answered %v; want one to pass and one last_admin", errs)
			}
		}
		if survivor == nil {
			t.Fatal("both parallel demotions passed: no admin is left")
		}
		got, err := f.s.Account(f.ctx, survivor.ID)
		must(t, err)
		if got.Role != petstore.Admin || got.Disabled {
			t.Fatalf("the refused demotion left %+v", got)
		}
	}
}
