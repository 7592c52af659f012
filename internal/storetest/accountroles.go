package storetest

import (
	"slices"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The console's staff and customers screens list the accounts of one role, a page at a
// time (GET /accounts?role=).
func testAccountRoles(t *testing.T, open Opener) {
	t.Run("a role keeps its accounts, disabled ones too, by id a page at a time", func(t *testing.T) { testAccountsByRole(t, open) })
	t.Run("a role and ids both hold", func(t *testing.T) { testAccountsByRoleAndIDs(t, open) })
	t.Run("a role the store does not know matches no account", func(t *testing.T) { testAccountsByUnknownRole(t, open) })
}

// roleFixture makes customers and admins interleaved by id; the store starts empty, so
// the accounts of a role are exactly those made here.
func roleFixture(t *testing.T, open Opener) (*fixture, []petstore.Account, []petstore.Account) {
	f := setup(t, open)
	var admins, customers []petstore.Account
	for i := range 7 {
		if i%3 == 1 {
			admins = append(admins, f.account(petstore.Admin))
		} else {
			customers = append(customers, f.account(petstore.Customer))
		}
	}
	return f, admins, customers
}

func accountIDs(accounts []petstore.Account) []int64 {
	return ids(accounts, func(a petstore.Account) int64 { return a.ID })
}

// allPages walks the list of f by pages of size, as the API's cursor does.
func allPages(t *testing.T, fx *fixture, f petstore.AccountFilter, size int) (pages [][]int64) {
	t.Helper()
	var after int64
	for {
		got, err := fx.s.Accounts(fx.ctx, f, petstore.Page{Limit: size, After: after})
		must(t, err)
		if len(got) == 0 {
			return pages
		}
		pages = append(pages, accountIDs(got))
		after = got[len(got)-1].ID
		if len(pages) > 10 {
			t.Fatalf("more pages than accounts: %v", pages)
		}
	}
}

func testAccountsByRole(t *testing.T, open Opener) {
	f, admins, customers := roleFixture(t, open)
	disabled := true
	off, err := f.s.UpdateAccount(f.ctx, customers[1].ID, petstore.AccountChange{Disabled: &disabled})
	must(t, err)
	customers[1] = off

	got, err := f.s.Accounts(f.ctx, petstore.AccountFilter{Role: petstore.Admin}, petstore.Page{Limit: 100})
	must(t, err)
	if !slices.Equal(got, admins) {
		t.Errorf("admins = %+v, want %+v", got, admins)
	}
	got, err = f.s.Accounts(f.ctx, petstore.AccountFilter{Role: petstore.Customer}, petstore.Page{Limit: 100})
	must(t, err)
	if !slices.Equal(got, customers) {
		t.Errorf("customers = %+v, want %+v (the disabled one among them)", got, customers)
	}
	pages := allPages(t, f, petstore.AccountFilter{Role: petstore.Customer}, 2)
	want := accountIDs(customers)
	if len(pages) != 3 || !slices.Equal(slices.Concat(pages...), want) {
		t.Errorf("customers by pages of 2 = %v, want %v in 3 pages", pages, want)
	}
}

func testAccountsByRoleAndIDs(t *testing.T, open Opener) {
	f, admins, customers := roleFixture(t, open)
	got, err := f.s.Accounts(f.ctx, petstore.AccountFilter{Role: petstore.Admin, IDs: []int64{customers[0].ID, admins[1].ID, customers[2].ID}}, petstore.Page{Limit: 100})
	must(t, err)
	if !slices.Equal(got, admins[1:2]) {
		t.Errorf("admins among ids = %+v, want %+v", got, admins[1:2])
	}
}

func testAccountsByUnknownRole(t *testing.T, open Opener) {
	f, _, _ := roleFixture(t, open)
	got, err := f.s.Accounts(f.ctx, petstore.AccountFilter{Role: "manager"}, petstore.Page{Limit: 100})
	must(t, err)
	if len(got) != 0 {
		t.Errorf("role manager found %+v", got)
	}
}
