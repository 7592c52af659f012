package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"golang.org/x/text/unicode/norm"
)

// What the stores' upgrade tests share: the rows an older release left in a database
// and the checks that a store opened on it reads them as that release meant.

// OldKeysAt is the time the upgrade tests' old keys were answered.
var OldKeysAt = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// CheckUpgradedKeys checks a store opened on a database that a release before
// batched placement left with these Idempotency-Keys of account 1, all with the
// request hash "h": "placed" (201, order 7: pet 3, quantity 2, ship date
// 2031-01-02T03:04:05Z, created at OldKeysAt), "refused" (409 insufficient_stock,
// "Only 1 in stock; 2 were ordered."), "invalid" (400 validation_failed with a detail on
// quantity) and "running" (claimed, never answered). Its clock must read shortly after
// OldKeysAt. An upgraded server replays the answered keys as the old one would have,
// and places a new order for the one never answered.
func CheckUpgradedKeys(t *testing.T, st petstore.Store) {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), s: st}
	p := f.availablePet(5)
	place := func(key string) (petstore.PlacedOrder, error) {
		return st.PlaceOrder(f.ctx, petstore.NewOrder{AccountID: 1, PetID: p.ID, Quantity: 1,
			Idempotency: &petstore.IdempotencyKey{AccountID: 1, Key: key, RequestHash: []byte("h")}})
	}
	o, err := place("placed")
	ship := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	want := petstore.Order{ID: 7, PetID: 3, AccountID: 1, Quantity: 2, ShipDate: &ship, Status: petstore.Placed, CreatedAt: OldKeysAt,
		Currency: petstore.DefaultCurrency}
	if err != nil || !o.Replayed || !sameOrder(o.Order, want) {
		t.Errorf("the placed key replays %+v, %v; want %+v", o, err, want)
	}
	var pe *petstore.Error
	o, err = place("refused")
	if !o.Replayed || !errors.As(err, &pe) || pe.Code != petstore.EInsufficientStock || pe.Message != "Only 1 in stock; 2 were ordered." {
		t.Errorf("the refused key replays %+v, %v", o, err)
	}
	o, err = place("invalid")
	if !o.Replayed || !errors.As(err, &pe) || len(pe.Details) != 1 || pe.Details[0].Field != "quantity" {
		t.Errorf("the invalid key replays %+v, %v", o, err)
	}
	o, err = place("running")
	if err != nil || o.Replayed {
		t.Errorf("the key never answered: %+v, %v; want a new order", o, err)
	}
	f.wantPet(p.ID, petstore.Available, 4)
}

// UnstableEmail is an address whose key took EmailKey more than one round of lower
// case and NFKC (found by FuzzCleanEmail); stores made before that kept it under
// UnstableEmailOldKey.
const UnstableEmail = "T\u0308\u0344@example.com"

// UnstableEmailOldKey is the key the one-round EmailKey gave UnstableEmail.
func UnstableEmailOldKey() string { return strings.ToLower(norm.NFKC.String(UnstableEmail)) }

// CheckRekeyed checks a store upgraded from one that kept account 1 under
// UnstableEmailOldKey: the account is found by its email, in any spelling with its key.
func CheckRekeyed(t *testing.T, st petstore.Store) {
	t.Helper()
	if UnstableEmailOldKey() == petstore.EmailKey(UnstableEmail) {
		t.Fatal("the example is stable; pick another")
	}
	for _, email := range []string{UnstableEmail, petstore.EmailKey(UnstableEmail)} {
		a, _, err := st.AccountByEmail(t.Context(), email)
		if err != nil || a.ID != 1 {
			t.Errorf("AccountByEmail(%q) = %+v, %v; want account 1", email, a, err)
		}
	}
}

// OldPetNames are the names of pets 1 and 2 of a store made before pets kept
// name_lower, for CheckLoweredPetNames.
var OldPetNames = [2]string{"Éclair", "STRASSE"}

// CheckLoweredPetNames checks a store upgraded from one that held pets 1 and 2 named
// OldPetNames, without name_lower: the name filter finds them in any letter case.
func CheckLoweredPetNames(t *testing.T, st petstore.Store) {
	t.Helper()
	for _, c := range []struct {
		name string
		want []int64
	}{
		{"éc", []int64{1}},
		{"ÉCLAIR", []int64{1}},
		{"strasse", []int64{2}},
		{"A", []int64{1, 2}},
	} {
		got, err := st.Pets(t.Context(), petstore.PetFilter{Name: c.name}, petstore.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !sameIDs(ids(got, petID), c.want) {
			t.Errorf("pets named like %q: %v, want %v", c.name, ids(got, petID), c.want)
		}
	}
}

// OldHeldRows are the statements that fill a store made before pets kept held (the
// units of their open orders), in SQL both stores read: pet 1 at the largest stock
// with two open orders (30 and 70 units) and a completed one, pet 2 at a stock past
// the largest, as a cancellation left it then. Account 1 and category 1 are theirs.
var OldHeldRows = []string{
	`INSERT INTO categories (id, name, name_lower) VALUES (1, 'Dogs', 'dogs')`,
	`INSERT INTO pets (id, name, category_id, status, stock, open_orders) VALUES (1, 'Rex', 1, 'available', 1000000, 2), (2, 'Bella', 1, 'available', 1000100, 0)`,
	`INSERT INTO orders (id, pet_id, account_id, quantity, complete, created_at) VALUES
	 (1, 1, 1, 30, false, '2026-11-20T10:00:00.000000000Z'), (2, 1, 1, 70, false, '2026-11-20T10:00:00.000000000Z'), (3, 1, 1, 5, true, '2026-11-20T10:00:00.000000000Z')`,
}

// CheckUpgradedHeld checks a store upgraded from one holding OldHeldRows: pet 1's
// open orders count towards its largest stock, a cancellation brings it no further
// than the largest, and pet 2 is back at the largest.
func CheckUpgradedHeld(t *testing.T, st petstore.Store) {
	t.Helper()
	f := &fixture{t: t, ctx: t.Context(), s: st}
	f.wantPet(2, petstore.Available, petstore.MaxStock)
	_, err := st.SetInventory(f.ctx, 1, petstore.MaxStock-99)
	wantCode(t, err, petstore.EConflict)
	must(t, st.CancelOrder(f.ctx, 1, 0))
	f.wantPet(1, petstore.Available, petstore.MaxStock)
	_, err = st.SetInventory(f.ctx, 1, petstore.MaxStock-70)
	must(t, err)
	_, err = st.SetInventory(f.ctx, 1, petstore.MaxStock-69)
	wantCode(t, err, petstore.EConflict)
}

// OldCategoryName is the name of category 1 of a store made before invisible
// characters were refused in names, for CheckKeptCategoryName.
const OldCategoryName = "Dogs\u200b"

// CheckKeptCategoryName checks a store holding category 1 named OldCategoryName: a
// replacement that keeps the name changes the description, one that gives another
// name with an invisible character is refused and changes nothing.
func CheckKeptCategoryName(t *testing.T, st petstore.Store) {
	t.Helper()
	ctx := t.Context()
	got, err := st.ReplaceCategory(ctx, petstore.Category{ID: 1, Name: OldCategoryName, Description: "Loyal."})
	if err != nil || got.Name != OldCategoryName || got.Description != "Loyal." {
		t.Fatalf("replacing the description of a category with an old name: %+v, %v", got, err)
	}
	_, err = st.ReplaceCategory(ctx, petstore.Category{ID: 1, Name: "Cats\u200b", Description: "Aloof."})
	wantField(t, err, "name")
	_, err = st.ReplaceCategory(ctx, petstore.Category{ID: 2, Name: OldCategoryName})
	wantCode(t, err, petstore.ENotFound)
	if c, err := st.Category(ctx, 1); err != nil || c.Name != OldCategoryName || c.Description != "Loyal." {
		t.Errorf("the category after a refused renaming: %+v, %v", c, err)
	}
}

// OldOrderRows fill a store made before orders kept their history (prices, status,
// the pet's name), in SQL both stores read: pet 1 (Rex, category 1) with an open
// order (1, 2 units, 20 November) and a completed one (2, 19 November, whose
// order.completed event the feed still holds), and a completed order (3, 18
// November) of a pet deleted since. Account 1 is theirs.
var OldOrderRows = []string{
	`INSERT INTO categories (id, name, name_lower) VALUES (1, 'Dogs', 'dogs')`,
	`INSERT INTO pets (id, name, name_lower, category_id, status, stock, open_orders, held) VALUES (1, 'Rex', 'rex', 1, 'available', 5, 1, 2)`,
	`INSERT INTO orders (id, pet_id, account_id, quantity, complete, created_at) VALUES
	 (1, 1, 1, 2, false, '2026-11-20T10:00:00.000000000Z'), (2, 1, 1, 1, true, '2026-11-19T10:00:00.000000000Z'),
	 (3, 3, 1, 4, true, '2026-11-18T09:00:00.000000000Z')`,
	`INSERT INTO events (seq, id, type, created_at, data) VALUES (1, 'evt_old', 'order.completed', '2026-11-21T08:00:00.000000000Z',
	 '{"order":{"id":2,"petId":1,"accountId":1,"quantity":1,"complete":true,"createdAt":"2026-11-19T10:00:00Z"}}')`,
}

// CheckUpgradedOrders checks a store upgraded from one holding OldOrderRows: every
// order reads with its status, its time of placing and what could be known of the
// rest; the sales report counts them; the open one cancels into the report's
// cancelled figures; and pet 1, which had orders, is archived when deleted.
func CheckUpgradedOrders(t *testing.T, st petstore.Store) {
	t.Helper()
	f := &fixture{t: t, ctx: t.Context(), s: st}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		must(t, err)
		return v
	}
	completed := at("2026-11-21T08:00:00Z")
	wants := []petstore.Order{
		{ID: 1, PetID: 1, AccountID: 1, Quantity: 2, Status: petstore.Placed, CreatedAt: at("2026-11-20T10:00:00Z"), PetName: "Rex", CategoryID: 1},
		{ID: 2, PetID: 1, AccountID: 1, Quantity: 1, Complete: true, Status: petstore.Completed, CreatedAt: at("2026-11-19T10:00:00Z"),
			CompletedAt: &completed, PetName: "Rex", CategoryID: 1},
		{ID: 3, PetID: 3, AccountID: 1, Quantity: 4, Complete: true, Status: petstore.Completed, CreatedAt: at("2026-11-18T09:00:00Z")},
	}
	for _, want := range wants {
		want.Currency = st.Currency()
		got, err := st.Order(f.ctx, want.ID, 1)
		must(t, err)
		if !sameOrder(got, want) {
			t.Errorf("order %d reads\n%+v, want\n%+v", want.ID, got, want)
		}
	}
	list, err := st.Orders(f.ctx, petstore.OrderFilter{AccountID: 1}, petstore.Page{Limit: 10})
	must(t, err)
	if !sameIDs(ids(list, orderID), []int64{1, 2, 3}) {
		t.Errorf("the account's orders, newest first: %v", ids(list, orderID))
	}
	q := petstore.SalesQuery{From: at("2026-11-18T00:00:00Z"), To: at("2026-11-20T00:00:00Z"), GroupBy: petstore.ByDay}
	r, err := st.SalesReport(f.ctx, q)
	must(t, err)
	if r.Totals != (petstore.SalesFigures{Orders: 3, Units: 7}) || len(r.Groups) != 3 {
		t.Errorf("the report of the old orders: %+v, %d days", r.Totals, len(r.Groups))
	}
	must(t, st.CancelOrder(f.ctx, 1, 1))
	f.wantPet(1, petstore.Available, 7)
	r, err = st.SalesReport(f.ctx, q)
	must(t, err)
	if r.Totals != (petstore.SalesFigures{Orders: 2, Units: 5, CancelledOrders: 1, CancelledUnits: 2}) {
		t.Errorf("the report after cancelling an old order: %+v", r.Totals)
	}
	must(t, st.DeletePet(f.ctx, 1))
	r, err = st.SalesReport(f.ctx, petstore.SalesQuery{From: q.From, To: q.To, GroupBy: petstore.ByPet, Limit: 10})
	must(t, err)
	names := map[int64]string{}
	for _, g := range r.Groups {
		names[g.PetID] = g.PetName
	}
	if len(names) != 2 || names[1] != "Rex" || names[3] != "" {
		t.Errorf("the report by pet after the deletion names %v; want Rex (archived) and pet 3 without a name", names)
	}
	// The old orders have no price: they bind the shop to no currency.
	must(t, st.SetCurrency(f.ctx, "USD"))
	must(t, st.SetCurrency(f.ctx, "JPY"))
}
