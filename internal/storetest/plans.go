package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// PlanData names rows of a store that BuildPlanData filled, for the arguments of the
// queries whose plans a store's plan test reads.
type PlanData struct {
	Account  int64   // a customer with orders and keys (one account in 100 is an admin)
	Category int64   // one of the categories, with a share of the pets
	Webhook  int64   // an endpoint with deliveries
	PetIDs   []int64 // a page of pet ids, for the batch lookups
	// RareName and RareShort are found in a few pets only: a search for them is
	// served by the name index or by nothing.
	RareName, RareShort string
	// CommonTag is on every other pet; RareTag on a few (those named "Zephyr …").
	CommonTag, RareTag string
}

// Sizes of the store BuildPlanData fills: enough rows in every listed table that a
// planner which reads statistics prefers an index to reading the table, as it would
// at a shop's real size.
const (
	planPets       = 3000
	planCategories = 40
	planAccounts   = 400
	planOrders     = 3000
	planWebhooks   = 5
)

// BuildPlanData fills an empty store through its own API with pets (a few named
// "Zephyr …" and "Zq …"), categories, accounts with keys, endpoints subscribed to every
// event, and orders, some completed, whose events and deliveries the store writes.
func BuildPlanData(t *testing.T, st petstore.Store) PlanData {
	t.Helper()
	ctx := context.Background()
	var d PlanData
	cats := make([]int64, planCategories)
	for i := range cats {
		c, err := st.CreateCategory(ctx, petstore.Category{Name: fmt.Sprint("Category ", i)})
		must(t, err)
		cats[i] = c.ID
	}
	d.Category = cats[0]
	for i := range planWebhooks {
		w, err := st.CreateWebhook(ctx, petstore.Webhook{URL: fmt.Sprintf("https://example.com/hooks/%d", i),
			Events: petstore.MaskAll, Secret: fmt.Sprint("whsec_", i)})
		must(t, err)
		d.Webhook = w.ID
	}
	accounts := fillPlanAccounts(t, ctx, st)
	d.Account = accounts[0]
	d.RareName, d.RareShort = "zephyr", "zq"
	d.CommonTag, d.RareTag = "Friendly", "Rare"

	pets := fillPlanPets(t, ctx, st, cats)
	d.PetIDs = pets[100:120]
	stocked := pets[:300]
	parallel(t, len(stocked), func(i int) error {
		_, err := st.SetInventory(ctx, stocked[i], petstore.MaxStock)
		return err
	})
	parallel(t, planOrders, func(i int) error {
		o, err := st.PlaceOrder(ctx, petstore.NewOrder{AccountID: accounts[i%len(accounts)], PetID: stocked[i%len(stocked)], Quantity: 1})
		if err != nil || i%10 != 0 {
			return err
		}
		_, err = st.UpdateOrder(ctx, o.Order.ID, petstore.OrderUpdate{Complete: ptr(true)})
		return err
	})
	failPlanDeliveries(t, ctx, st)
	return d
}

// fillPlanAccounts creates the accounts of BuildPlanData with 5 keys each, and returns
// their ids: customers, and one admin in 100 (staff are few), the first a customer.
func fillPlanAccounts(t *testing.T, ctx context.Context, st petstore.Store) []int64 {
	t.Helper()
	accounts := make([]int64, planAccounts)
	parallel(t, planAccounts, func(i int) error {
		role := petstore.Customer
		if i%100 == 99 {
			role = petstore.Admin
		}
		a, err := st.CreateAccount(ctx, fmt.Sprintf("plan%d@example.com", i), "", role)
		if err != nil {
			return err
		}
		accounts[i] = a.ID
		for k := range 5 {
			_, err := st.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: a.ID, Name: "key",
				Prefix: "psk_plan", Hash: fmt.Appendf(nil, "plan-%d-%d", i, k)})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return accounts
}

// fillPlanPets creates the pets of BuildPlanData in the categories, and returns their
// ids.
func fillPlanPets(t *testing.T, ctx context.Context, st petstore.Store, cats []int64) []int64 {
	t.Helper()
	pets := make([]int64, planPets)
	parallel(t, planPets, func(i int) error {
		name := fmt.Sprint("Pet ", i)
		switch i % 1000 {
		case 500:
			name = fmt.Sprint("Zephyr ", i)
		case 501:
			name = fmt.Sprint("Zq ", i)
		}
		// One pet in a hundred is sold: a filter by status is selective. (At one in
		// ten, PostgreSQL may rightly walk the primary key and skip nine rows in ten,
		// which says nothing of a rarer status at a shop's size.)
		status := petstore.Available
		if i%100 == 99 {
			status = petstore.Sold
		}
		var tags []string
		if i%2 == 0 {
			tags = append(tags, "friendly")
		}
		if i%1000 == 500 {
			tags = append(tags, "rare")
		}
		p, err := st.CreatePet(ctx, petstore.PetFields{Name: name, CategoryID: cats[i%len(cats)], Status: status, Price: Price(100 + int64(i%50)),
			Tags: tags})
		pets[i] = p.ID
		return err
	})
	return pets
}

// failPlanDeliveries claims every delivery due and fails it.
func failPlanDeliveries(t *testing.T, ctx context.Context, st petstore.Store) {
	t.Helper()
	// Deliveries have rows while they are retried: fan them all out and fail them,
	// due again in a year.
	later := time.Now().Add(time.Hour)
	for range 200 {
		jobs, err := st.ClaimDeliveries(ctx, petstore.ClaimOptions{Now: later, Lease: time.Minute, Max: 512, Window: petstore.MaxDeliveryWindow})
		must(t, err)
		if len(jobs) == 0 {
			break
		}
		rs := make([]petstore.AttemptResult, len(jobs))
		for i, j := range jobs {
			rs[i] = petstore.AttemptResult{WebhookID: j.Webhook.ID, DeliveryID: j.Delivery.ID, At: later,
				Status: petstore.DeliveryPending, NextAttemptAt: later.Add(365 * 24 * time.Hour), ResponseStatus: 503, Error: "down"}
		}
		must(t, st.FinishAttempts(ctx, rs))
	}
}

// parallel runs do for 0 ≤ i < n on 16 goroutines and fails t on the first error.
func parallel(t *testing.T, n int, do func(i int) error) {
	t.Helper()
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		fail atomic.Value
	)
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || fail.Load() != nil {
					return
				}
				if err := do(i); err != nil {
					fail.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := fail.Load(); err != nil {
		t.Fatal(err)
	}
}
