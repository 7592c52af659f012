package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// ttl is how long the idempotency tests keep keys, as the contract does.
const ttl = 24 * time.Hour

// epoch is an arbitrary fixed time for the idempotency tests.
func epoch() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) }

func testIdempotency(t *testing.T, open Opener) {
	// start is when the first claim of each test is made; the store is told the time.
	start := epoch()
	key := func(account int64, hash string) petstore.IdempotencyKey {
		return petstore.IdempotencyKey{AccountID: account, Key: "key-1", RequestHash: []byte(hash)}
	}
	claim := func(f *fixture, k petstore.IdempotencyKey, at time.Time) (petstore.StoredResponse, bool, error) {
		return f.s.ClaimIdempotencyKey(f.ctx, k, at, ttl)
	}
	mustClaim := func(f *fixture, k petstore.IdempotencyKey, at time.Time) {
		f.t.Helper()
		_, replay, err := claim(f, k, at)
		if err != nil || replay {
			f.t.Fatalf("claim at %v = replay %v, %v; want a fresh claim", at, replay, err)
		}
	}
	answer := petstore.StoredResponse{Status: 201, Location: "/v1/store/orders/1", Body: []byte(`{"id":1}`)}
	wantReplay := func(f *fixture, k petstore.IdempotencyKey, at time.Time, want petstore.StoredResponse) {
		f.t.Helper()
		got, replay, err := claim(f, k, at)
		must(f.t, err)
		if !replay || got.Status != want.Status || got.Location != want.Location || !bytes.Equal(got.Body, want.Body) {
			f.t.Errorf("claim = %+v (replay %v), want replay of %+v", got, replay, want)
		}
	}

	t.Run("a new key is claimed", func(t *testing.T) {
		f := setup(t, open)
		mustClaim(f, key(f.account(petstore.Customer).ID, "h1"), start)
	})

	t.Run("a key claimed by a request that still runs is a conflict", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		mustClaim(f, k, start)
		_, _, err := claim(f, k, start.Add(time.Second))
		wantCode(t, err, petstore.EConflict)
	})

	t.Run("a key used with another body is idempotency_key_reused, while it runs and once answered", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		mustClaim(f, k, start)
		other := k
		other.RequestHash = []byte("h2")
		_, _, err := claim(f, other, start.Add(time.Second))
		wantCode(t, err, petstore.EIdempotencyKeyReused)
		must(t, f.s.SaveIdempotentResponse(f.ctx, k, answer))
		_, _, err = claim(f, other, start.Add(time.Hour))
		wantCode(t, err, petstore.EIdempotencyKeyReused)
	})

	t.Run("an answered key replays the stored response", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		mustClaim(f, k, start)
		must(t, f.s.SaveIdempotentResponse(f.ctx, k, answer))
		wantReplay(f, k, start.Add(time.Minute), answer)
		wantReplay(f, k, start.Add(ttl-time.Second), answer)
	})

	t.Run("an answer without a body or location replays as such", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		mustClaim(f, k, start)
		empty := petstore.StoredResponse{Status: 204}
		must(t, f.s.SaveIdempotentResponse(f.ctx, k, empty))
		got, replay, err := claim(f, k, start.Add(time.Minute))
		must(t, err)
		if !replay || got.Status != 204 || got.Location != "" || len(got.Body) != 0 {
			t.Errorf("claim = %+v (replay %v)", got, replay)
		}
	})

	t.Run("keys are scoped to the account", func(t *testing.T) {
		f := setup(t, open)
		a, b := f.account(petstore.Customer), f.account(petstore.Customer)
		mustClaim(f, key(a.ID, "h1"), start)
		mustClaim(f, key(b.ID, "h2"), start)
	})

	t.Run("an unanswered claim older than the claim timeout is taken over", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		mustClaim(f, k, start)
		_, _, err := claim(f, k, start.Add(petstore.ClaimTimeout-time.Second))
		wantCode(t, err, petstore.EConflict)
		mustClaim(f, k, start.Add(petstore.ClaimTimeout+time.Second))
		// The new claim runs from its own start.
		_, _, err = claim(f, k, start.Add(petstore.ClaimTimeout+2*time.Second))
		wantCode(t, err, petstore.EConflict)
	})

	t.Run("an answered key is not taken over after the claim timeout", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		mustClaim(f, k, start)
		must(t, f.s.SaveIdempotentResponse(f.ctx, k, answer))
		wantReplay(f, k, start.Add(2*petstore.ClaimTimeout), answer)
	})

	t.Run("a key older than the ttl is claimed afresh, with any body", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		mustClaim(f, k, start)
		must(t, f.s.SaveIdempotentResponse(f.ctx, k, answer))
		other := k
		other.RequestHash = []byte("h2")
		later := start.Add(ttl + time.Second)
		mustClaim(f, other, later)
		_, _, err := claim(f, other, later.Add(time.Second))
		wantCode(t, err, petstore.EConflict)
	})

	t.Run("a released key can be claimed again", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		mustClaim(f, k, start)
		must(t, f.s.ReleaseIdempotencyKey(f.ctx, k))
		mustClaim(f, k, start.Add(time.Second))
	})

	t.Run("releasing an answered key keeps its response", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		mustClaim(f, k, start)
		must(t, f.s.SaveIdempotentResponse(f.ctx, k, answer))
		must(t, f.s.ReleaseIdempotencyKey(f.ctx, k))
		wantReplay(f, k, start.Add(time.Second), answer)
	})

	t.Run("a response cannot be saved on a key that is not claimed", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		if err := f.s.SaveIdempotentResponse(f.ctx, k, answer); err == nil {
			t.Error("saved a response on a key that was never claimed")
		}
	})

	t.Run("purging deletes the keys claimed before the time", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Customer)
		old1 := petstore.IdempotencyKey{AccountID: a.ID, Key: "old-1", RequestHash: []byte("h")}
		old2 := petstore.IdempotencyKey{AccountID: a.ID, Key: "old-2", RequestHash: []byte("h")}
		fresh := petstore.IdempotencyKey{AccountID: a.ID, Key: "fresh", RequestHash: []byte("h")}
		mustClaim(f, old1, start)
		mustClaim(f, old2, start.Add(time.Minute))
		must(t, f.s.SaveIdempotentResponse(f.ctx, old2, answer))
		mustClaim(f, fresh, start.Add(time.Hour))
		n, err := f.s.PurgeIdempotencyKeys(f.ctx, start.Add(time.Hour))
		must(t, err)
		if n != 2 {
			t.Errorf("purged %d keys, want 2", n)
		}
		// A purged key is free; the fresh one is still held.
		other := old2
		other.RequestHash = []byte("other")
		mustClaim(f, other, start.Add(time.Hour+time.Second))
		_, _, err = claim(f, fresh, start.Add(time.Hour+time.Second))
		wantCode(t, err, petstore.EConflict)
	})

	placeWithKey := func(f *fixture, k petstore.IdempotencyKey, pet int64, quantity int) (petstore.Order, error) {
		return f.s.PlaceOrder(f.ctx, petstore.NewOrder{
			AccountID:   k.AccountID,
			PetID:       pet,
			Quantity:    quantity,
			Idempotency: &k,
			Response: func(o petstore.Order) (petstore.StoredResponse, error) {
				return petstore.StoredResponse{
					Status:   201,
					Location: fmt.Sprintf("/v1/store/orders/%d", o.ID),
					Body:     fmt.Appendf(nil, `{"id":%d,"quantity":%d}`, o.ID, o.Quantity),
				}, nil
			},
		})
	}

	t.Run("an order placed with a key records its response on the key", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		p := f.availablePet(5)
		mustClaim(f, k, start)
		o, err := placeWithKey(f, k, p.ID, 2)
		must(t, err)
		wantReplay(f, k, start.Add(time.Second), petstore.StoredResponse{
			Status:   201,
			Location: fmt.Sprintf("/v1/store/orders/%d", o.ID),
			Body:     fmt.Appendf(nil, `{"id":%d,"quantity":2}`, o.ID),
		})
		f.wantPet(p.ID, petstore.Available, 3)
	})

	t.Run("a refused order records nothing on its key", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		p := f.availablePet(1)
		mustClaim(f, k, start)
		_, err := placeWithKey(f, k, p.ID, 2)
		wantCode(t, err, petstore.EInsufficientStock)
		_, _, err = claim(f, k, start.Add(time.Second))
		wantCode(t, err, petstore.EConflict)
	})

	t.Run("an order whose response cannot be made is not placed", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		p := f.availablePet(5)
		mustClaim(f, k, start)
		failure := errors.New("encode failed")
		_, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{
			AccountID: k.AccountID, PetID: p.ID, Quantity: 2, Idempotency: &k,
			Response: func(petstore.Order) (petstore.StoredResponse, error) { return petstore.StoredResponse{}, failure },
		})
		if !errors.Is(err, failure) {
			t.Errorf("error = %v, want %v", err, failure)
		}
		f.wantPet(p.ID, petstore.Available, 5)
		list, err := f.s.Orders(f.ctx, petstore.OrderFilter{}, petstore.Page{Limit: 100})
		must(t, err)
		if len(list) != 0 {
			t.Errorf("orders = %+v, want none", list)
		}
	})

	t.Run("an order whose key was lost is not placed", func(t *testing.T) {
		f := setup(t, open)
		k := key(f.account(petstore.Customer).ID, "h1")
		p := f.availablePet(5)
		mustClaim(f, k, start)
		must(t, f.s.ReleaseIdempotencyKey(f.ctx, k))
		if _, err := placeWithKey(f, k, p.ID, 2); err == nil {
			t.Error("an order was placed on a key no longer claimed")
		}
		f.wantPet(p.ID, petstore.Available, 5)
	})
}
