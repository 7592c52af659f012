package petstore

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// forSale is the catalogue of the pets the tests order: each has a price.
var forSale = map[int64]Pet{4: {ID: 4, Name: "Unpriced"}, 1: {ID: 1, Name: "Rex", CategoryID: 1, Price: ptr[int64](250)}, 2: {ID: 2, Name: "Tom", CategoryID: 2, Price: ptr[int64](0)},
	3: {ID: 3, Name: "Kit", CategoryID: 1, Price: ptr[int64](99)}, 7: {ID: 7, Name: "Max", Price: ptr[int64](1)}, 8: {ID: 8, Name: "Zed", Price: ptr[int64](1)}}

func ptr[T any](v T) *T { return &v }

func TestPlanOrders(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	key := func(k, hash string) *IdempotencyKey {
		return &IdempotencyKey{AccountID: 7, Key: k, RequestHash: []byte(hash)}
	}
	order := func(pet int64, qty int, k *IdempotencyKey) NewOrder {
		return NewOrder{AccountID: 7, PetID: pet, Quantity: qty, Idempotency: k}
	}
	stored := map[KeyRef]IdempotencyRecord{
		{7, "placed"}:  {RequestHash: []byte("h"), CreatedAt: now.Add(-time.Hour), Order: &Order{ID: 41, PetID: 1, Quantity: 1}},
		{7, "refused"}: {RequestHash: []byte("h"), CreatedAt: now.Add(-time.Hour), Refusal: Errorf(EInsufficientStock, "no")},
		{7, "expired"}: {RequestHash: []byte("h"), CreatedAt: now.Add(-IdempotencyTTL), Order: &Order{ID: 40}},
	}
	// want is one request's answer: "place", "replay", or the refusal's code.
	tests := []struct {
		name    string
		pets    map[int64]PetState
		reqs    []NewOrder
		want    []string
		record  []bool
		after   map[int64]PetState
		changed []int64
	}{
		{
			name:    "orders of one pet take turns in arrival order until the stock is gone",
			pets:    map[int64]PetState{1: {Available, 5, 0, 0, 0}},
			reqs:    []NewOrder{order(1, 2, nil), order(1, 2, nil), order(1, 2, nil), order(1, 1, nil), order(1, 1, nil)},
			want:    []string{"place", "place", EInsufficientStock, "place", EInsufficientStock},
			after:   map[int64]PetState{1: {Pending, 0, 3, 5, 3}},
			changed: []int64{1},
		},
		{
			name:    "a pet without a price is not for sale, whatever its stock",
			pets:    map[int64]PetState{1: {Available, 5, 0, 0, 0}, 4: {Available, 5, 0, 0, 0}},
			reqs:    []NewOrder{order(4, 1, nil), order(1, 1, nil)},
			want:    []string{ENotForSale, "place"},
			after:   map[int64]PetState{1: {Available, 4, 1, 1, 1}, 4: {Available, 5, 0, 0, 0}},
			changed: []int64{1},
		},
		{
			name:    "a refused order refuses only itself",
			pets:    map[int64]PetState{1: {Available, 5, 0, 0, 0}, 2: {Sold, 3, 0, 0, 0}},
			reqs:    []NewOrder{order(1, 1, nil), order(9, 1, nil), order(2, 1, nil), order(1, 0, nil), order(1, 1, nil)},
			want:    []string{"place", ENotFound, EInvalidTransition, EValidationFailed, "place"},
			after:   map[int64]PetState{1: {Available, 3, 2, 2, 2}, 2: {Sold, 3, 0, 0, 0}},
			changed: []int64{1},
		},
		{
			name:    "each changed pet is listed once, by id",
			pets:    map[int64]PetState{1: {Available, 5, 0, 0, 0}, 2: {Available, 5, 0, 0, 0}, 3: {Available, 5, 0, 0, 0}},
			reqs:    []NewOrder{order(3, 1, nil), order(1, 1, nil), order(3, 1, nil)},
			want:    []string{"place", "place", "place"},
			after:   map[int64]PetState{1: {Available, 4, 1, 1, 1}, 2: {Available, 5, 0, 0, 0}, 3: {Available, 3, 2, 2, 2}},
			changed: []int64{1, 3},
		},
		{
			name:   "a stored key replays its order or its refusal and takes nothing",
			pets:   map[int64]PetState{1: {Available, 5, 0, 0, 0}},
			reqs:   []NewOrder{order(1, 1, key("placed", "h")), order(1, 1, key("refused", "h"))},
			want:   []string{"replay", "replay"},
			record: []bool{false, false},
			after:  map[int64]PetState{1: {Available, 5, 0, 0, 0}},
		},
		{
			name:   "a stored key with another body is idempotency_key_reused",
			pets:   map[int64]PetState{1: {Available, 5, 0, 0, 0}},
			reqs:   []NewOrder{order(1, 1, key("placed", "other"))},
			want:   []string{EIdempotencyKeyReused},
			record: []bool{false},
			after:  map[int64]PetState{1: {Available, 5, 0, 0, 0}},
		},
		{
			name:    "an expired key is used afresh and recorded again",
			pets:    map[int64]PetState{1: {Available, 5, 0, 0, 0}},
			reqs:    []NewOrder{order(1, 1, key("expired", "other"))},
			want:    []string{"place"},
			record:  []bool{true},
			after:   map[int64]PetState{1: {Available, 4, 1, 1, 1}},
			changed: []int64{1},
		},
		{
			name:    "the same key twice in a batch: the second replays the first, another body is refused",
			pets:    map[int64]PetState{1: {Available, 5, 0, 0, 0}},
			reqs:    []NewOrder{order(1, 2, key("new", "h")), order(1, 2, key("new", "h")), order(1, 3, key("new", "h3")), order(1, 1, nil)},
			want:    []string{"place", "replay", EIdempotencyKeyReused, "place"},
			record:  []bool{true, false, false, false},
			after:   map[int64]PetState{1: {Available, 2, 2, 3, 2}},
			changed: []int64{1},
		},
		{
			name:   "a request refused for reusing a stored key does not stand for the key in the batch",
			pets:   map[int64]PetState{1: {Available, 5, 0, 0, 0}},
			reqs:   []NewOrder{order(1, 1, key("placed", "other")), order(1, 1, key("placed", "h"))},
			want:   []string{EIdempotencyKeyReused, "replay"},
			record: []bool{false, false},
			after:  map[int64]PetState{1: {Available, 5, 0, 0, 0}},
		},
		{
			name:   "a fresh key records a refusal too, and its twin in the batch replays it",
			pets:   map[int64]PetState{1: {Available, 1, 0, 0, 0}},
			reqs:   []NewOrder{order(1, 2, key("new", "h")), order(1, 2, key("new", "h"))},
			want:   []string{EInsufficientStock, "replay"},
			record: []bool{true, false},
			after:  map[int64]PetState{1: {Available, 1, 0, 0, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := PlanOrders(tt.reqs, tt.pets, forSale, stored, now, "EUR")
			for i := range b.Plans {
				if b.Plans[i].Outcome == Place {
					b.Plans[i].Order.ID = int64(100 + i) // as the store would
				}
			}
			for i, want := range tt.want {
				o, err := b.Answer(i)
				got := "place"
				switch {
				case o.Replayed:
					got = "replay"
				case err != nil:
					got = codeOf(err)
				}
				if got != want {
					t.Errorf("request %d: got %s (%+v, %v), want %s", i, got, o, err, want)
				}
				if err == nil && !o.Replayed && (o.Order.ID != int64(100+i) || !o.Order.CreatedAt.Equal(now) || o.Order.Quantity != tt.reqs[i].Quantity) {
					t.Errorf("request %d: placed %+v", i, o.Order)
				}
				if tt.record != nil && b.Plans[i].Record != tt.record[i] {
					t.Errorf("request %d: record = %v, want %v", i, b.Plans[i].Record, tt.record[i])
				}
			}
			if fmt.Sprint(b.Pets) != fmt.Sprint(tt.after) {
				t.Errorf("pets after = %v, want %v", b.Pets, tt.after)
			}
			if !slices.Equal(b.Changed, tt.changed) {
				t.Errorf("changed = %v, want %v", b.Changed, tt.changed)
			}
		})
	}
}

func TestAReplayInTheBatchIsTheFirstAnswer(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	k := &IdempotencyKey{AccountID: 7, Key: "k", RequestHash: []byte("h")}
	b := PlanOrders([]NewOrder{{AccountID: 7, PetID: 1, Quantity: 2, Idempotency: k}, {AccountID: 7, PetID: 1, Quantity: 2, Idempotency: k}},
		map[int64]PetState{1: {Available, 5, 0, 0, 0}}, forSale, nil, now, "EUR")
	b.Plans[0].Order.ID = 55
	first, err1 := b.Answer(0)
	second, err2 := b.Answer(1)
	if err1 != nil || err2 != nil || first.Replayed || !second.Replayed || second.Order != first.Order {
		t.Fatalf("answers %+v %v, %+v %v", first, err1, second, err2)
	}
	rec := b.Record(0)
	if rec.Order == nil || rec.Order.ID != 55 || !rec.CreatedAt.Equal(now) || string(rec.RequestHash) != "h" || rec.Refusal != nil {
		t.Fatalf("record = %+v", rec)
	}
}

// answerText is an answer as text, for comparing answers.
func answerText(o PlacedOrder, err error) string {
	if err != nil {
		return fmt.Sprintf("err:%s:%v:%v", ErrorCode(err), err, o.Replayed)
	}
	return fmt.Sprintf("ok:%d:%d:%d:%v", o.Order.ID, o.Order.PetID, o.Order.Quantity, o.Replayed)
}

// TestABatchDecidesAsEachRequestAloneInArrivalOrder compares PlanOrders on random
// batches (pets of every status, stored, expired and fresh keys, matching and other
// bodies, unknown pets, quantities out of range) with the same requests planned one at
// a time in arrival order, keys recorded between them: every answer and every pet's
// state must be the same.
func TestABatchDecidesAsEachRequestAloneInArrivalOrder(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 20000; iter++ {
		pets := map[int64]PetState{}
		for id := int64(1); id <= 3; id++ {
			st := []PetStatus{Available, Available, Pending, Sold}[rng.Intn(4)]
			pets[id] = PetState{Status: st, Stock: rng.Intn(5), OpenOrders: rng.Intn(2)}
		}
		keys := map[KeyRef]IdempotencyRecord{}
		for _, k := range []string{"a", "b"} {
			if rng.Intn(2) == 0 {
				age := []time.Duration{time.Hour, IdempotencyTTL}[rng.Intn(2)]
				rec := IdempotencyRecord{RequestHash: []byte(fmt.Sprint(rng.Intn(2))), CreatedAt: now.Add(-age)}
				if rng.Intn(2) == 0 {
					rec.Order = &Order{ID: 1000, PetID: 1, Quantity: 1}
				} else {
					rec.Refusal = Errorf(EInsufficientStock, "no")
				}
				keys[KeyRef{7, k}] = rec
			}
		}
		n := 1 + rng.Intn(6)
		var reqs []NewOrder
		for i := 0; i < n; i++ {
			r := NewOrder{AccountID: 7, PetID: int64(1 + rng.Intn(4)), Quantity: rng.Intn(4)}
			if rng.Intn(3) > 0 {
				r.Idempotency = &IdempotencyKey{AccountID: 7, Key: []string{"a", "b"}[rng.Intn(2)], RequestHash: []byte(fmt.Sprint(rng.Intn(2)))}
			}
			reqs = append(reqs, r)
		}
		// As one batch:
		bp := maps.Clone(pets)
		b := PlanOrders(reqs, bp, forSale, maps.Clone(keys), now, "EUR")
		next := int64(1)
		for i := range b.Plans {
			if b.Plans[i].Outcome == Place {
				b.Plans[i].Order.ID = next
				next++
			}
		}
		var got []string
		for i := range reqs {
			got = append(got, answerText(b.Answer(i)))
		}
		// One at a time:
		sp := maps.Clone(pets)
		sk := maps.Clone(keys)
		next = 1
		var want []string
		for _, r := range reqs {
			one := PlanOrders([]NewOrder{r}, sp, forSale, sk, now, "EUR")
			if one.Plans[0].Outcome == Place {
				one.Plans[0].Order.ID = next
				next++
			}
			if one.Plans[0].Record {
				sk[r.Idempotency.Ref()] = one.Record(0)
			}
			want = append(want, answerText(one.Answer(0)))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("iter %d req %d: batch %s, sequential %s\nreqs %+v", iter, i, got[i], want[i], reqs)
			}
		}
		if !maps.Equal(bp, sp) {
			t.Fatalf("pets differ: %v vs %v", bp, sp)
		}
	}
}

// TestAnOrderKeepsWhatItWasPlacedWith: a placed order is priced at the pet's price,
// in the shop's currency, with the pet's name and category, and placed; the sales
// lines of a batch sum its orders per day, pet and category.
func TestAnOrderKeepsWhatItWasPlacedWith(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC)
	pets := map[int64]PetState{1: {Available, 10, 0, 0, 0}, 2: {Available, 10, 0, 0, 0}}
	b := PlanOrders([]NewOrder{{AccountID: 7, PetID: 1, Quantity: 3}, {AccountID: 8, PetID: 2, Quantity: 1}, {AccountID: 7, PetID: 1, Quantity: 2}},
		pets, forSale, nil, now, "JPY")
	o, err := b.Answer(0)
	if err != nil {
		t.Fatal(err)
	}
	got := o.Order
	if got.Status != Placed || *got.UnitPrice != 250 || *got.Total() != 750 || got.PetName != "Rex" || got.CategoryID != 1 || got.Currency != "JPY" || !got.CreatedAt.Equal(now) {
		t.Errorf("placed %+v", got)
	}
	// The price is the order's own: a later change of the pet's does not reach it.
	*forSale[1].Price = 999
	defer func() { *forSale[1].Price = 250 }()
	if *got.UnitPrice != 250 {
		t.Errorf("the order's price followed the pet's: %d", *got.UnitPrice)
	}
	want := []SalesLine{
		{Day: "2026-11-21", PetID: 1, CategoryID: 1, SalesFigures: SalesFigures{Orders: 2, Units: 5, Revenue: 1250}},
		{Day: "2026-11-21", PetID: 2, CategoryID: 2, SalesFigures: SalesFigures{Orders: 1, Units: 1, Revenue: 0}},
	}
	if sales := b.Sales(); !slices.Equal(sales, want) {
		t.Errorf("sales %+v, want %+v", sales, want)
	}
	c := CancelledSales(got)
	if c.Day != "2026-11-21" || c.Orders != -1 || c.Units != -3 || c.Revenue != -750 || c.CancelledOrders != 1 || c.CancelledUnits != 3 || c.CancelledRevenue != 750 {
		t.Errorf("cancelling makes %+v", c)
	}
}

func TestRollupMergesLinesPerDayAndPerCategory(t *testing.T) {
	lines := []SalesLine{
		{Day: "2026-11-20", PetID: 1, CategoryID: 1, SalesFigures: SalesFigures{Orders: 2, Units: 3, Revenue: 30}},
		{Day: "2026-11-20", PetID: 2, CategoryID: 1, SalesFigures: SalesFigures{Orders: 1, Units: 1, Revenue: 5}},
		{Day: "2026-11-20", PetID: 3, CategoryID: 2, SalesFigures: SalesFigures{Orders: -1, Units: -2, Revenue: -8, CancelledOrders: 1, CancelledUnits: 2, CancelledRevenue: 8}},
		{Day: "2026-11-21", PetID: 1, CategoryID: 1, SalesFigures: SalesFigures{Orders: 1, Units: 1, Revenue: 10}},
	}
	r := Rollup(lines)
	wantDays := []SalesLine{
		{Day: "2026-11-20", SalesFigures: SalesFigures{Orders: 2, Units: 2, Revenue: 27, CancelledOrders: 1, CancelledUnits: 2, CancelledRevenue: 8}},
		{Day: "2026-11-21", SalesFigures: SalesFigures{Orders: 1, Units: 1, Revenue: 10}},
	}
	wantCats := []SalesLine{
		{Day: "2026-11-20", CategoryID: 1, SalesFigures: SalesFigures{Orders: 3, Units: 4, Revenue: 35}},
		{Day: "2026-11-20", CategoryID: 2, SalesFigures: SalesFigures{Orders: -1, Units: -2, Revenue: -8, CancelledOrders: 1, CancelledUnits: 2, CancelledRevenue: 8}},
		{Day: "2026-11-21", CategoryID: 1, SalesFigures: SalesFigures{Orders: 1, Units: 1, Revenue: 10}},
	}
	if !slices.Equal(r.Days, wantDays) || !slices.Equal(r.Categories, wantCats) {
		t.Errorf("rollup\n%+v\n%+v\nwant\n%+v\n%+v", r.Days, r.Categories, wantDays, wantCats)
	}
}

func TestCurrencyChange(t *testing.T) {
	tests := []struct {
		stored, code string
		priced       bool
		ok           bool
	}{
		{"", "USD", false, true},
		{"", "EUR", true, true},
		{"", "USD", true, false}, // priced before a currency was stored: in the default
		{"USD", "USD", true, true},
		{"USD", "EUR", true, false},
		{"USD", "EUR", false, true},
	}
	for _, tt := range tests {
		if err := CurrencyChange(tt.stored, tt.code, tt.priced); (err == nil) != tt.ok {
			t.Errorf("CurrencyChange(%q, %q, %v) = %v, want ok %v", tt.stored, tt.code, tt.priced, err, tt.ok)
		}
	}
}
