package storetest

import (
	"math/rand/v2"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

// petModel is what the rules say of one pet: the stock it was last set to, its open
// orders, the units completed since, and its status.
type petModel struct {
	restock   int
	open      map[int64]int // order id → quantity
	completed int
	status    petstore.PetStatus
}

// testStockModel runs a random sequence of orders, cancellations, completions and
// restocks, and checks after each step that, per pet, stock plus the units of open
// orders plus the units of orders completed since the last restock equal that
// restock, and that the status is the one the rules give. (It was the HTTP suite's
// TestStockInvariant; the rules and what the store keeps of them are this suite's.)
func testStockModel(t *testing.T, open Opener) {
	t.Run("a random sequence of orders, cancellations, completions and restocks keeps the stock and status the rules give", func(t *testing.T) {
		f := setup(t, open)
		rng := rand.New(rand.NewPCG(7, 11))
		customer := f.account(petstore.Customer).ID
		pets := map[int64]*petModel{}
		var ids []int64
		for range 3 {
			p := f.availablePet(6)
			pets[p.ID] = &petModel{restock: 6, open: map[int64]int{}, status: petstore.Available}
			ids = append(ids, p.ID)
		}
		for step := range 150 {
			id := ids[rng.IntN(len(ids))]
			f.stockStep(rng, id, pets[id], customer)
			for pid, m := range pets {
				got := f.pet(pid)
				openUnits := 0
				for _, q := range m.open {
					openUnits += q
				}
				if got.Stock+openUnits+m.completed != m.restock {
					t.Fatalf("step %d, pet %d: stock %d + open %d + completed %d != restock %d", step, pid, got.Stock, openUnits, m.completed, m.restock)
				}
				if got.Status != m.status {
					t.Fatalf("step %d, pet %d: status %s, the rules give %s", step, pid, got.Status, m.status)
				}
			}
		}
	})
}

// stockStep makes one random change to pet id and to its model m.
func (f *fixture) stockStep(rng *rand.Rand, id int64, m *petModel, customer int64) {
	f.t.Helper()
	stock := f.pet(id).Stock
	switch op := rng.IntN(10); {
	case op < 5: // order
		qty := 1 + rng.IntN(3)
		placed, err := f.s.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: customer, PetID: id, Quantity: qty})
		switch {
		case err == nil:
			m.open[placed.Order.ID] = qty
			if stock-qty == 0 {
				m.status = petstore.Pending
			}
		case stock < qty: // sold out is one refusal, whatever the status
			wantCode(f.t, err, petstore.EInsufficientStock)
		default:
			wantCode(f.t, err, petstore.EInvalidTransition)
		}
	case op < 7: // cancel
		for oid := range m.open {
			if err := f.s.CancelOrder(f.ctx, oid, customer); err != nil {
				f.t.Fatalf("cancel order %d: %v", oid, err)
			}
			delete(m.open, oid)
			if m.status == petstore.Pending {
				m.status = petstore.Available
			}
			break
		}
	case op < 9: // complete
		for oid, qty := range m.open {
			f.complete(oid)
			delete(m.open, oid)
			m.completed += qty
			switch {
			case len(m.open) > 0:
			case stock == 0:
				m.status = petstore.Sold
			case m.status == petstore.Pending:
				m.status = petstore.Available
			}
			break
		}
	default: // restock
		n := rng.IntN(5)
		if _, err := f.s.SetInventory(f.ctx, id, n); err != nil {
			f.t.Fatalf("set inventory of pet %d to %d: %v", id, n, err)
		}
		m.restock, m.completed = n, 0
		for _, q := range m.open {
			m.restock += q // open orders keep their units
		}
		switch {
		case n > 0 && len(m.open) == 0 && m.status != petstore.Available:
			m.status = petstore.Available
		case n == 0 && m.status == petstore.Available && len(m.open) > 0:
			m.status = petstore.Pending
		case n == 0 && m.status == petstore.Available:
			m.status = petstore.Sold
		}
	}
}
