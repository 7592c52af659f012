package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The api_key.* events: a key made or revoked writes its event in the same
// transaction, with the key as the account lists it (never its hash), the account's
// email and who acted; a change refused writes none.

const (
	keyCreated = petstore.APIKeyCreated
	keyRevoked = petstore.APIKeyRevoked
)

// keyEvent is the event a test expects of key k of account a, by by, dated at.
func keyEvent(typ petstore.EventType, k petstore.APIKey, a petstore.Account, by petstore.Actor, at time.Time) petstore.Event {
	return petstore.Event{Type: typ, CreatedAt: at, Key: &petstore.KeyChange{Key: k, AccountEmail: a.Email, By: by}}
}

func testKeyEvents(t *testing.T, open Opener) {
	t.Run("making a key writes api_key.created with the key, its account and who made it, and never its hash", func(t *testing.T) { testKeyEventCreated(t, open) })
	t.Run("a key that is not made writes no event", func(t *testing.T) { testKeyEventNotCreated(t, open) })
	t.Run("revoking a key writes api_key.revoked with the key as it was; a revocation that fails writes none", func(t *testing.T) { testKeyEventRevoked(t, open) })
	t.Run("a take-over writes api_key.revoked for each live key, by the operator", func(t *testing.T) { testKeyEventTakeOver(t, open) })
	t.Run("at the cap, keys that expired make room: each revoked with its event, by the maker of the new key", func(t *testing.T) { testKeyEventExpiredAtCap(t, open) })
	t.Run("endpoints subscribed to a key event, or to every type, are sent it; others are not", func(t *testing.T) { testKeyEventDelivered(t, open) })
}

func testKeyEventCreated(t *testing.T, open Opener) {
	f, _ := clocked(t, open)
	fd := f.feed()
	a := f.account(petstore.Customer)
	expires := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	by := petstore.Actor{AccountID: a.ID, KeyID: 41}
	k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "warehouse sync", Prefix: "psk_wh",
		Hash: []byte("the-hash-of-the-secret"), Scopes: []string{"inventory:write", "pets:read"}, ExpiresAt: &expires, By: by})
	must(t, err)
	got := fd.next(keyCreated)
	wantEvents(t, got, keyEvent(keyCreated, k, a, by, epoch()))
	data, err := petstore.MarshalEventData(got[0])
	must(t, err)
	if strings.Contains(string(data), "the-hash-of-the-secret") {
		t.Errorf("the event keeps the key's hash: %s", data)
	}

	// The operator (petstore keys create, the first start) is the zero Actor.
	plain, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "cli", Prefix: "psk_c", Hash: []byte("cli")})
	must(t, err)
	wantEvents(t, fd.next(keyCreated), keyEvent(keyCreated, plain, a, petstore.Actor{}, epoch()))
}

func testKeyEventNotCreated(t *testing.T, open Opener) {
	f := setup(t, open)
	fd := f.feed()
	a := f.account(petstore.Customer)
	for i := range petstore.MaxKeysPerAccount {
		_, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte{'h', byte(i)}})
		must(t, err)
	}
	want := make([]petstore.EventType, petstore.MaxKeysPerAccount)
	for i := range want {
		want[i] = keyCreated
	}
	fd.next(want...)
	_, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte("one too many")})
	wantCode(t, err, petstore.EConflict)
	b := f.account(petstore.Customer)
	_, err = f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: b.ID, Name: "k", Prefix: "psk_", Hash: []byte{'h', 0}})
	wantCode(t, err, petstore.EConflict) // the hash is a's key's
	_, err = f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: 999999, Name: "k", Prefix: "psk_", Hash: []byte("nobody's")})
	wantCode(t, err, petstore.ENotFound)
	fd.nothing()
}

func testKeyEventRevoked(t *testing.T, open Opener) {
	f, c := clocked(t, open)
	fd := f.feed()
	a, b := f.account(petstore.Customer), f.account(petstore.Customer)
	k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "laptop", Prefix: "psk_l", Hash: []byte("laptop"),
		Scopes: []string{"orders:read"}})
	must(t, err)
	other, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "phone", Prefix: "psk_p", Hash: []byte("phone")})
	must(t, err)
	fd.next(keyCreated, keyCreated)
	used := epoch().Truncate(time.Minute).Add(30 * time.Minute)
	must(t, f.s.TouchAPIKeys(f.ctx, []int64{k.ID}, used))

	t1 := epoch().Add(time.Hour)
	c.Set(t1)
	// A key may revoke itself; a password (HTTP Basic) acts with no key.
	for _, by := range []petstore.Actor{{AccountID: a.ID, KeyID: k.ID}, {AccountID: a.ID}} {
		revoked := k
		if by.KeyID == 0 {
			revoked = other
		} else {
			revoked.LastUsedAt = &used
		}
		must(t, f.s.RevokeAPIKey(f.ctx, a.ID, revoked.ID, by))
		wantEvents(t, fd.next(keyRevoked), keyEvent(keyRevoked, revoked, a, by, t1))
	}

	wantCode(t, f.s.RevokeAPIKey(f.ctx, a.ID, k.ID, petstore.Actor{AccountID: a.ID}), petstore.ENotFound) // already revoked
	theirs, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: b.ID, Name: "theirs", Prefix: "psk_t", Hash: []byte("theirs")})
	must(t, err)
	fd.next(keyCreated)
	wantCode(t, f.s.RevokeAPIKey(f.ctx, a.ID, theirs.ID, petstore.Actor{AccountID: a.ID}), petstore.ENotFound) // another account's
	wantCode(t, f.s.RevokeAPIKey(f.ctx, a.ID, 999999, petstore.Actor{AccountID: a.ID}), petstore.ENotFound)    // unknown
	fd.nothing()
}

func testKeyEventTakeOver(t *testing.T, open Opener) {
	f, c := clocked(t, open)
	fd := f.feed()
	a, err := f.s.CreateAccount(f.ctx, "Squatter@example.com", "their-hash", petstore.Customer)
	must(t, err)
	var live []petstore.APIKey
	for _, n := range []string{"one", "two", "three"} {
		k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: n, Prefix: "psk_" + n, Hash: []byte(n),
			By: petstore.Actor{AccountID: a.ID}})
		must(t, err)
		live = append(live, k)
	}
	fd.next(keyCreated, keyCreated, keyCreated)
	must(t, f.s.RevokeAPIKey(f.ctx, a.ID, live[1].ID, petstore.Actor{AccountID: a.ID}))
	fd.next(keyRevoked)

	t1 := epoch().Add(time.Hour)
	c.Set(t1)
	must(t, f.s.TakeOverAccount(f.ctx, "squatter@EXAMPLE.com"))
	wantEvents(t, fd.next(keyRevoked, keyRevoked),
		keyEvent(keyRevoked, live[0], a, petstore.Actor{}, t1),
		keyEvent(keyRevoked, live[2], a, petstore.Actor{}, t1))

	// Nothing left to revoke, or no such account: no event.
	must(t, f.s.TakeOverAccount(f.ctx, a.Email))
	wantCode(t, f.s.TakeOverAccount(f.ctx, "nobody@example.com"), petstore.ENotFound)
	fd.nothing()
}

func testKeyEventExpiredAtCap(t *testing.T, open Opener) {
	f, c := clocked(t, open)
	fd := f.feed()
	a := f.account(petstore.Customer)
	by := petstore.Actor{AccountID: a.ID}
	soon := epoch().Add(time.Minute)
	var expiring []petstore.APIKey
	for i := range petstore.MaxKeysPerAccount {
		nk := petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte(fmt.Sprint("room-", i)), By: by}
		if i%10 == 0 {
			nk.ExpiresAt = &soon
		}
		k, err := f.s.CreateAPIKey(f.ctx, nk)
		must(t, err)
		if nk.ExpiresAt != nil {
			expiring = append(expiring, k)
		}
	}
	made := make([]petstore.EventType, petstore.MaxKeysPerAccount)
	for i := range made {
		made[i] = keyCreated
	}
	fd.next(made...)
	// While they live, they count.
	_, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte("early"), By: by})
	wantCode(t, err, petstore.EConflict)
	fd.nothing()
	later := soon.Add(time.Second)
	c.Set(later)
	k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte("late"), By: by})
	must(t, err)
	want := []petstore.Event{}
	for _, e := range expiring {
		want = append(want, keyEvent(keyRevoked, e, a, by, later))
	}
	want = append(want, keyEvent(keyCreated, k, a, by, later))
	wantEvents(t, fd.next(keyRevoked, keyRevoked, keyRevoked, keyCreated), want...)
	keys, err := f.s.APIKeys(f.ctx, a.ID, petstore.Page{Limit: 100})
	must(t, err)
	if len(keys) != petstore.MaxKeysPerAccount-len(expiring)+1 {
		t.Errorf("%d keys listed after making room, want %d", len(keys), petstore.MaxKeysPerAccount-len(expiring)+1)
	}
}

func testKeyEventDelivered(t *testing.T, open Opener) {
	f, _ := clocked(t, open)
	fd := f.feed()
	created, revoked := f.hook(keyCreated.Bit()), f.hook(keyRevoked.Bit())
	all, orders := f.hook(petstore.MaskAll), f.hook(petstore.OrderPlaced.Bit())
	a := f.account(petstore.Customer)
	k, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_k", Hash: []byte("k")})
	must(t, err)
	must(t, f.s.RevokeAPIKey(f.ctx, a.ID, k.ID, petstore.Actor{AccountID: a.ID}))
	got := fd.next(keyCreated, keyRevoked)
	jobs := f.fanOut(epoch().Add(time.Second),
		key{created.ID, got[0].Seq}, key{revoked.ID, got[1].Seq}, key{all.ID, got[0].Seq}, key{all.ID, got[1].Seq})
	for _, j := range jobs {
		if j.Webhook.ID == orders.ID || j.Event.Key == nil || j.Event.Key.Key.ID != k.ID || j.Delivery.EventType != j.Event.Type {
			t.Errorf("endpoint %d was sent %s", j.Webhook.ID, describeEvent(j.Event))
		}
	}
}
