package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// testParallelCaps writes past each cap from many goroutines at once: a store that
// counts before it holds the lock that makes the count exact lets a waiter count what
// was there before the others wrote (on PostgreSQL under READ COMMITTED, a count in
// the statement that takes the lock is such a count).
func testParallelCaps(t *testing.T, open Opener) {
	t.Run("parallel creates leave exactly MaxKeysPerAccount live keys", func(t *testing.T) {
		f := setup(t, open)
		a := f.account(petstore.Customer)
		made, codes := allAtOnce(60, func(i int) error {
			_, err := f.s.CreateAPIKey(f.ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "k", Prefix: "psk_", Hash: []byte(fmt.Sprint("parallel-", i))})
			return err
		})
		if made != petstore.MaxKeysPerAccount || len(codes) != 1 || codes[petstore.EConflict] != 60-petstore.MaxKeysPerAccount {
			t.Errorf("60 parallel creates: %d made, refusals %v; want %d made and the rest conflict", made, codes, petstore.MaxKeysPerAccount)
		}
		if live := f.liveKeys(a.ID); live != petstore.MaxKeysPerAccount {
			t.Errorf("the account holds %d live keys, want %d", live, petstore.MaxKeysPerAccount)
		}
	})

	t.Run("parallel creates leave exactly MaxWebhooks endpoints", func(t *testing.T) {
		f := setup(t, open)
		ws := f.webhookStore()
		made, codes := allAtOnce(petstore.MaxWebhooks+30, func(i int) error {
			_, err := ws.CreateWebhook(f.ctx, petstore.Webhook{URL: fmt.Sprintf("https://example.com/cap/%d", i), Events: petstore.MaskAll, Secret: "whsec_cap"})
			return err
		})
		if made != petstore.MaxWebhooks || len(codes) != 1 || codes[petstore.EConflict] != 30 {
			t.Errorf("%d parallel creates: %d made, refusals %v; want %d made and the rest conflict", petstore.MaxWebhooks+30, made, codes, petstore.MaxWebhooks)
		}
	})

	t.Run("parallel test events leave exactly MaxPendingTests pending", func(t *testing.T) {
		f := setup(t, open)
		ws := f.webhookStore()
		w := f.hook(petstore.MaskAll)
		now := time.Now()
		made, codes := allAtOnce(petstore.MaxPendingTests+30, func(int) error {
			_, err := ws.SendTestEvent(f.ctx, w.ID, now)
			return err
		})
		if made != petstore.MaxPendingTests || len(codes) != 1 || codes[petstore.EConflict] != 30 {
			t.Errorf("%d parallel test events: %d made, refusals %v; want %d made and the rest conflict", petstore.MaxPendingTests+30, made, codes, petstore.MaxPendingTests)
		}
		if got := len(f.deliveries(w.ID)); got != petstore.MaxPendingTests {
			t.Errorf("the endpoint has %d deliveries, want %d", got, petstore.MaxPendingTests)
		}
	})
}

// testWindowCaps holds claims to an endpoint's window (petstore.ClaimOptions.Window,
// the AIMD window that keeps a failing receiver to one attempt): due retries and new
// events together, and claims in parallel.
func testWindowCaps(t *testing.T, open Opener) {
	t.Run("a due retry and a new event together stay within a window of one", func(t *testing.T) {
		f, c := clocked(t, open)
		w := f.hook(petstore.InventoryUpdated.Bit())
		p := f.availablePet(1)
		fd := f.feed()
		ev := fd.next(invUpd, restocked)
		now := epoch().Add(time.Hour)
		if got := claimed(f.claimWith(petstore.ClaimOptions{Now: now, Max: 10, Window: 1})); len(got) != 1 {
			t.Fatalf("first claim: %v, want one delivery", got)
		}
		f.finish(retryAt(w.ID, ev[0].Seq, now, now.Add(time.Minute)))
		c.Set(now.Add(2 * time.Minute))
		f.restock(p.ID)
		fd.next(invUpd)
		later := petstore.ClaimOptions{Now: now.Add(2 * time.Minute), Max: 10, Window: 1}
		if got := claimed(f.claimWith(later)); !slices.Equal(got, keys(w.ID, ev[0].Seq)) {
			t.Errorf("claimed %v with a window of 1, want only the due retry %v", got, keys(w.ID, ev[0].Seq))
		}
	})

	t.Run("parallel claims never pass an endpoint's window", func(t *testing.T) {
		f, _ := clocked(t, open)
		ws := f.webhookStore()
		const endpoints, claimers, window = 10, 8, 2
		for range endpoints {
			f.hook(petstore.InventoryUpdated.Bit())
		}
		p := f.availablePet(1)
		fd := f.feed()
		fd.next(invUpd, restocked)
		for range 6 {
			f.restock(p.ID)
			fd.next(invUpd)
		}
		now := epoch().Add(time.Hour)
		var (
			mu        sync.Mutex
			inFlight  = map[int64]int{}
			wg        sync.WaitGroup
			claimWith = petstore.ClaimOptions{Now: now, Lease: time.Hour, Max: 100, Window: window}
		)
		for range claimers {
			wg.Go(func() {
				for range 20 {
					jobs, err := ws.ClaimDeliveries(f.ctx, claimWith)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, j := range jobs {
						inFlight[j.Webhook.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(inFlight) != endpoints {
			t.Errorf("%d endpoints got deliveries, want %d", len(inFlight), endpoints)
		}
		for id, n := range inFlight {
			if n != window {
				t.Errorf("endpoint %d has %d deliveries in flight, want its window, %d", id, n, window)
			}
		}
	})
}

// allAtOnce runs write n times at once and counts its successes and its refusals by code.
func allAtOnce(n int, write func(i int) error) (made int, codes map[string]int) {
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		gate = make(chan struct{})
	)
	codes = map[string]int{}
	for i := range n {
		wg.Go(func() {
			<-gate // start together
			err := write(i)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				made++
			} else {
				codes[petstore.ErrorCode(err)]++
			}
		})
	}
	close(gate)
	wg.Wait()
	return made, codes
}

// liveKeys counts an account's live keys, page by page.
func (f *fixture) liveKeys(account int64) int {
	f.t.Helper()
	n := 0
	for p := (petstore.Page{Limit: petstore.MaxLimit}); ; {
		keys, err := f.s.APIKeys(f.ctx, account, p)
		must(f.t, err)
		n += len(keys)
		if len(keys) < p.Size() {
			return n
		}
		p.After = keys[len(keys)-1].ID
	}
}
