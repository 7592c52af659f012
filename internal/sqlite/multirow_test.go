package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/acme-pets/petstore/internal/groupcommit"
	"github.com/acme-pets/petstore/internal/petstore"
)

func TestChunksCoverEveryRowWithFewStatements(t *testing.T) {
	for _, c := range []struct {
		rows       int
		statements int
	}{{1, 1}, {2, 1}, {3, 2}, {63, 6}, {64, 1}, {65, 2}, {127, 7}, {128, 2}, {200, 4}} {
		var n, left int
		for left = c.rows; left > 0; n++ {
			left -= chunk(left)
		}
		if left != 0 || n != c.statements {
			t.Errorf("%d rows: %d statements (%d rows left over), want %d", c.rows, n, left, c.statements)
		}
	}
}

// A batch's orders are inserted a chunk at a time with RETURNING id, whose rows come in
// no promised order: each answer must carry the id of its own row, also across chunks.
func TestEveryOrderOfABatchGetsTheIDOfItsOwnRow(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "petstore.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	acct, err := db.CreateAccount(ctx, "ids@example.com", "", petstore.Customer)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := db.CreateCategory(ctx, petstore.Category{Name: "Ids"})
	if err != nil {
		t.Fatal(err)
	}
	price := int64(100)
	pet, err := db.CreatePet(ctx, petstore.PetFields{Name: "Bo", CategoryID: cat.ID, Status: petstore.Available, Price: &price})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetInventory(ctx, pet.ID, petstore.MaxStock); err != nil {
		t.Fatal(err)
	}
	// 101 orders: chunks of 64, 32, 4 and 1; every quantity differs from its neighbours'.
	reqs := make([]petstore.NewOrder, 101)
	for i := range reqs {
		reqs[i] = petstore.NewOrder{AccountID: acct.ID, PetID: pet.ID, Quantity: 1 + (i*37)%100}
	}
	out := make([]groupcommit.Outcome[petstore.PlacedOrder], len(reqs))
	if err := db.placeBatch(ctx, reqs, out); err != nil {
		t.Fatal(err)
	}
	var last int64
	for i, o := range out {
		if o.Err != nil {
			t.Fatalf("order %d: %v", i, o.Err)
		}
		if o.Value.Order.ID <= last {
			t.Errorf("order %d has id %d, after %d: ids do not follow the arrival order", i, o.Value.Order.ID, last)
		}
		last = o.Value.Order.ID
		got, err := db.Order(ctx, o.Value.Order.ID, 0)
		if err != nil {
			t.Fatalf("order %d: %v", i, err)
		}
		if got.Quantity != reqs[i].Quantity {
			t.Errorf("order %d answered id %d, whose row has quantity %d, want %d", i, got.ID, got.Quantity, reqs[i].Quantity)
		}
	}
}
