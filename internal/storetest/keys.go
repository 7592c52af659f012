package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// newKey makes a key named "laptop" for the account.
func newKey(f *fixture, account int64, hash string) petstore.APIKey {
	f.t.Helper()
	k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: account, Name: "laptop", Prefix: "psk_abcd", Hash: []byte(hash)})
	if err != nil {
		f.t.Fatalf("create api key: %v", err)
	}
	return k
}

func testKeys(t *testing.T, open Opener) {
	t.Run("a new key is found by its hash and names its holder", func(t *testing.T) { testKeyByHash(t, open) })
	t.Run("a key keeps its scopes and expiry, and its holder's principal carries them", func(t *testing.T) { testKeyScopesAndExpiry(t, open) })
	t.Run("a key's last use moves forward only, a minute at a time", func(t *testing.T) { testKeyLastUse(t, open) })
	t.Run("an unknown hash is not found", func(t *testing.T) { testKeyUnknownHash(t, open) })
	t.Run("the principal has the account's current role", func(t *testing.T) { testKeyPrincipalRole(t, open) })
	t.Run("a hash already stored is a conflict", func(t *testing.T) { testKeyHashConflict(t, open) })
	t.Run("keys are listed by id, only the account's own", func(t *testing.T) { testKeysListed(t, open) })
	t.Run("keys are listed a page at a time", func(t *testing.T) { testKeysPaged(t, open) })
	t.Run("an account without keys lists none", func(t *testing.T) { testKeysNone(t, open) })
	t.Run("a revoked key is not found and no longer listed", func(t *testing.T) { testKeyRevoked(t, open) })
	t.Run("a key revoked twice is not found the second time", func(t *testing.T) { testKeyRevokedTwice(t, open) })
	t.Run("another account's key cannot be revoked", func(t *testing.T) { testKeyRevokeOthers(t, open) })
	t.Run("an unknown key cannot be revoked", func(t *testing.T) { testKeyRevokeUnknown(t, open) })
}

func testKeyByHash(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Admin)
	k := newKey(f, a.ID, "hash-1")
	if k.ID < 1 || k.AccountID != a.ID || k.Name != "laptop" || k.Prefix != "psk_abcd" {
		t.Errorf("key = %+v", k)
	}
	wantRecent(t, "createdAt", k.CreatedAt)
	p, err := f.s.PrincipalByKeyHash(f.ctx, []byte("hash-1"))
	must(t, err)
	if !reflect.DeepEqual(p, petstore.Principal{AccountID: a.ID, Role: petstore.Admin, KeyID: k.ID}) {
		t.Errorf("principal = %+v", p)
	}
}

func testKeyScopesAndExpiry(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	expires := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "shop", Prefix: "psk_s", Hash: []byte("scoped"),
		Scopes: []string{"orders:read", "pets:read"}, ExpiresAt: &expires})
	must(t, err)
	if !slices.Equal(k.Scopes, []string{"orders:read", "pets:read"}) || k.ExpiresAt == nil || !k.ExpiresAt.Equal(expires) {
		t.Errorf("key = %+v", k)
	}
	p, err := f.s.PrincipalByKeyHash(f.ctx, []byte("scoped"))
	must(t, err)
	if !slices.Equal(p.Scopes, []string{"orders:read", "pets:read"}) || !p.ExpiresAt.Equal(expires) || !p.HasScope("pets:read") || p.HasScope("orders:write") {
		t.Errorf("principal = %+v", p)
	}
	keys, err := f.s.APIKeys(f.ctx, a.ID, petstore.Page{})
	must(t, err)
	if len(keys) != 1 || !slices.Equal(keys[0].Scopes, k.Scopes) || keys[0].ExpiresAt == nil || !keys[0].ExpiresAt.Equal(expires) || keys[0].LastUsedAt != nil {
		t.Errorf("listed = %+v", keys)
	}
	// A key without scopes has every scope of its role, and never expires.
	newKey(f, a.ID, "plain")
	p, err = f.s.PrincipalByKeyHash(f.ctx, []byte("plain"))
	must(t, err)
	if p.Scopes != nil || !p.ExpiresAt.IsZero() || !p.HasScope("webhooks:manage") {
		t.Errorf("principal of a plain key = %+v", p)
	}
}

func testKeyLastUse(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	k1, k2 := newKey(f, a.ID, "used-1"), newKey(f, a.ID, "used-2")
	at := time.Date(2030, 5, 6, 7, 8, 0, 0, time.UTC)
	must(t, f.s.TouchAPIKeys(f.ctx, []int64{k1.ID}, at))
	must(t, f.s.TouchAPIKeys(f.ctx, []int64{k1.ID, k2.ID}, at.Add(-time.Minute)))
	must(t, f.s.TouchAPIKeys(f.ctx, nil, at))
	keys, err := f.s.APIKeys(f.ctx, a.ID, petstore.Page{})
	must(t, err)
	if keys[0].LastUsedAt == nil || !keys[0].LastUsedAt.Equal(at) {
		t.Errorf("key 1 last used %v, want %v", keys[0].LastUsedAt, at)
	}
	if keys[1].LastUsedAt == nil || !keys[1].LastUsedAt.Equal(at.Add(-time.Minute)) {
		t.Errorf("key 2 last used %v, want %v", keys[1].LastUsedAt, at.Add(-time.Minute))
	}
}

func testKeyUnknownHash(t *testing.T, open Opener) {
	f := setup(t, open)
	newKey(f, f.account(petstore.Customer).ID, "hash-1")
	_, err := f.s.PrincipalByKeyHash(f.ctx, []byte("hash-2"))
	wantCode(t, err, petstore.ENotFound)
}

func testKeyPrincipalRole(t *testing.T, open Opener) {
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
}

func testKeyHashConflict(t *testing.T, open Opener) {
	f := setup(t, open)
	newKey(f, f.account(petstore.Customer).ID, "hash-1")
	_, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: f.account(petstore.Customer).ID, Name: "x", Prefix: "psk_x", Hash: []byte("hash-1")})
	wantCode(t, err, petstore.EConflict)
}

func testKeysListed(t *testing.T, open Opener) {
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
}

func testKeysPaged(t *testing.T, open Opener) {
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
}

func testKeysNone(t *testing.T, open Opener) {
	f := setup(t, open)
	keys, err := f.s.APIKeys(f.ctx, f.account(petstore.Customer).ID, petstore.Page{})
	must(t, err)
	if len(keys) != 0 {
		t.Errorf("keys = %+v", keys)
	}
}

func testKeyRevoked(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	k1 := newKey(f, a.ID, "a1")
	k2 := newKey(f, a.ID, "a2")
	must(t, f.s.RevokeAPIKey(f.ctx, a.ID, k1.ID, petstore.Actor{}))
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
}

func testKeyRevokedTwice(t *testing.T, open Opener) {
	f := setup(t, open)
	a := f.account(petstore.Customer)
	k := newKey(f, a.ID, "a1")
	must(t, f.s.RevokeAPIKey(f.ctx, a.ID, k.ID, petstore.Actor{}))
	wantCode(t, f.s.RevokeAPIKey(f.ctx, a.ID, k.ID, petstore.Actor{}), petstore.ENotFound)
}

func testKeyRevokeOthers(t *testing.T, open Opener) {
	f := setup(t, open)
	a, b := f.account(petstore.Customer), f.account(petstore.Customer)
	k := newKey(f, a.ID, "a1")
	wantCode(t, f.s.RevokeAPIKey(f.ctx, b.ID, k.ID, petstore.Actor{}), petstore.ENotFound)
	if _, err := f.s.PrincipalByKeyHash(f.ctx, []byte("a1")); err != nil {
		t.Errorf("the key stopped working: %v", err)
	}
}

func testKeyRevokeUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	wantCode(t, f.s.RevokeAPIKey(f.ctx, f.account(petstore.Customer).ID, 999, petstore.Actor{}), petstore.ENotFound)
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
		must(t, f.s.RevokeAPIKey(f.ctx, a.ID, first.ID, petstore.Actor{}))
		_, err = f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte("one too many")})
		must(t, err)
	})
}
