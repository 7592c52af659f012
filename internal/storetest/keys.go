package storetest

import (
	"fmt"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

func testKeys(t *testing.T, open Opener) {
	newKey := func(f *fixture, account int64, hash string) petstore.APIKey {
		f.t.Helper()
		k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: account, Name: "laptop", Prefix: "psk_abcd", Hash: []byte(hash)})
		if err != nil {
			f.t.Fatalf("create api key: %v", err)
		}
		return k
	}

	t.Run("a new key is found by its hash and names its holder", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Admin)
		k := newKey(f, a.ID, "hash-1")
		if k.ID < 1 || k.AccountID != a.ID || k.Name != "laptop" || k.Prefix != "psk_abcd" {
			t.Errorf("key = %+v", k)
		}
		wantRecent(t, "createdAt", k.CreatedAt)
		p, err := f.s.PrincipalByKeyHash(f.ctx, []byte("hash-1"))
		must(t, err)
		if p != (petstore.Principal{AccountID: a.ID, Role: petstore.Admin, KeyID: k.ID}) {
			t.Errorf("principal = %+v", p)
		}
	})

	t.Run("an unknown hash is not found", func(t *testing.T) {
		f := setup(t, open)
		newKey(f, f.account(petstore.Customer).ID, "hash-1")
		_, err := f.s.PrincipalByKeyHash(f.ctx, []byte("hash-2"))
		wantCode(t, err, petstore.ENotFound)
	})

	t.Run("the principal has the account's current role", func(t *testing.T) {
		f := setup(t, open)
		a, err := f.s.EnsureAccount(f.ctx, "key-only@example.com", petstore.Customer)
		must(t, err)
		newKey(f, a.ID, "hash-1")
		_, err = f.s.EnsureAccount(f.ctx, a.Email, petstore.Admin)
		must(t, err)
		p, err := f.s.PrincipalByKeyHash(f.ctx, []byte("hash-1"))
		must(t, err)
		if p.Role != petstore.Admin {
			t.Errorf("role = %s, want admin", p.Role)
		}
	})

	t.Run("a hash already stored is a conflict", func(t *testing.T) {
		f := setup(t, open)
		newKey(f, f.account(petstore.Customer).ID, "hash-1")
		_, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: f.account(petstore.Customer).ID, Name: "x", Prefix: "psk_x", Hash: []byte("hash-1")})
		wantCode(t, err, petstore.EConflict)
	})

	t.Run("keys are listed by id, only the account's own", func(t *testing.T) {
		f := setup(t, open)
		a, b := f.account(petstore.Customer), f.account(petstore.Customer)
		k1 := newKey(f, a.ID, "a1")
		newKey(f, b.ID, "b1")
		k2 := newKey(f, a.ID, "a2")
		keys, err := f.s.APIKeys(f.ctx, a.ID, petstore.Page{})
		must(t, err)
		if got, want := ids(keys, keyID), []int64{k1.ID, k2.ID}; !sameIDs(got, want) {
			t.Fatalf("keys %v, want %v", got, want)
		}
		if keys[0].Name != "laptop" || keys[0].Prefix != "psk_abcd" || keys[0].AccountID != a.ID || !keys[0].CreatedAt.Equal(k1.CreatedAt) {
			t.Errorf("listed key = %+v, want %+v", keys[0], k1)
		}
	})

	t.Run("keys are listed a page at a time", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Customer)
		k1, k2, k3 := newKey(f, a.ID, "p1"), newKey(f, a.ID, "p2"), newKey(f, a.ID, "p3")
		first, err := f.s.APIKeys(f.ctx, a.ID, petstore.Page{Limit: 2})
		must(t, err)
		rest, err := f.s.APIKeys(f.ctx, a.ID, petstore.Page{Limit: 2, After: k2.ID})
		must(t, err)
		if !sameIDs(ids(first, keyID), []int64{k1.ID, k2.ID}) || !sameIDs(ids(rest, keyID), []int64{k3.ID}) {
			t.Fatalf("pages %v and %v", ids(first, keyID), ids(rest, keyID))
		}
	})

	t.Run("an account without keys lists none", func(t *testing.T) {
		f := setup(t, open)
		keys, err := f.s.APIKeys(f.ctx, f.account(petstore.Customer).ID, petstore.Page{})
		must(t, err)
		if len(keys) != 0 {
			t.Errorf("keys = %+v", keys)
		}
	})

	t.Run("a revoked key is not found and no longer listed", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Customer)
		k1 := newKey(f, a.ID, "a1")
		k2 := newKey(f, a.ID, "a2")
		must(t, f.s.RevokeAPIKey(f.ctx, a.ID, k1.ID))
		_, err := f.s.PrincipalByKeyHash(f.ctx, []byte("a1"))
		wantCode(t, err, petstore.ENotFound)
		if _, err := f.s.PrincipalByKeyHash(f.ctx, []byte("a2")); err != nil {
			t.Errorf("the other key stopped working: %v", err)
		}
		keys, err := f.s.APIKeys(f.ctx, a.ID, petstore.Page{})
		must(t, err)
		if got := ids(keys, keyID); !sameIDs(got, []int64{k2.ID}) {
			t.Errorf("keys %v, want [%d]", got, k2.ID)
		}
	})

	t.Run("a key revoked twice is not found the second time", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Customer)
		k := newKey(f, a.ID, "a1")
		must(t, f.s.RevokeAPIKey(f.ctx, a.ID, k.ID))
		wantCode(t, f.s.RevokeAPIKey(f.ctx, a.ID, k.ID), petstore.ENotFound)
	})

	t.Run("another account's key cannot be revoked", func(t *testing.T) {
		f := setup(t, open)
		a, b := f.account(petstore.Customer), f.account(petstore.Customer)
		k := newKey(f, a.ID, "a1")
		wantCode(t, f.s.RevokeAPIKey(f.ctx, b.ID, k.ID), petstore.ENotFound)
		if _, err := f.s.PrincipalByKeyHash(f.ctx, []byte("a1")); err != nil {
			t.Errorf("the key stopped working: %v", err)
		}
	})

	t.Run("an unknown key cannot be revoked", func(t *testing.T) {
		f := setup(t, open)
		wantCode(t, f.s.RevokeAPIKey(f.ctx, f.account(petstore.Customer).ID, 999), petstore.ENotFound)
	})
}

func testKeyCap(t *testing.T, open Opener) {
	t.Run("an account holds at most MaxKeysPerAccount live keys; revoking one makes room", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Customer)
		var first petstore.APIKey
		for i := range petstore.MaxKeysPerAccount {
			k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte(fmt.Sprint("cap-", i))})
			must(t, err)
			if i == 0 {
				first = k
			}
		}
		_, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte("one too many")})
		wantCode(t, err, petstore.EConflict)
		// Another account is not held back.
		b := f.account(petstore.Customer)
		_, err = f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: b.ID, Name: "k", Prefix: "psk_", Hash: []byte("b's")})
		must(t, err)
		must(t, f.s.RevokeAPIKey(f.ctx, a.ID, first.ID))
		_, err = f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte("one too many")})
		must(t, err)
	})
}
