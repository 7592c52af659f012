package petstore

import (
	"errors"
	"slices"
	"time"
)

// NewOrder is a request to place an order.
type NewOrder struct {
	AccountID int64
	PetID     int64
	Quantity  int
	ShipDate  *time.Time
	// Idempotency, when set, is the request's Idempotency-Key; the result of the
	// request is recorded on it in the same transaction as the order.
	Idempotency *IdempotencyKey
}

// PlacedOrder is the answer to a request to place an order: the order, and whether an
// earlier request with the same Idempotency-Key placed it.
type PlacedOrder struct {
	Order    Order
	Replayed bool
}

// Orders are placed in batches: the store gathers concurrent requests, loads in one
// transaction the state of every pet they name and the record of every
// Idempotency-Key they carry, lets PlanOrders decide each request in arrival order,
// writes what the plan says (each changed pet once, the placed orders, the keys) and
// commits once. Every decision is made here, in plain Go; the store only loads and
// saves.

// OrderOutcome is what becomes of one request of a batch.
type OrderOutcome int

// The outcomes of PlanOrders.
const (
	// Place: the order is accepted; the store inserts Plan.Order and gives it its id.
	Place OrderOutcome = iota
	// Refuse: the order is refused with Plan.Refusal.
	Refuse
	// Replay: the request gets the result stored on its key, Plan.Replay.
	Replay
	// ReplayInBatch: the request gets the result of the earlier request Plan.SameAs
	// of the same batch, which carried the same key and body.
	ReplayInBatch
)

// OrderPlan is the decision on one request of a batch.
type OrderPlan struct {
	Outcome OrderOutcome
	// Order is the order to place (Place); the store sets its ID once inserted.
	Order   Order
	Refusal *Error
	Replay  *IdempotencyRecord
	SameAs  int
	// Record says that the request's key is stored with its result (a fresh key).
	Record bool
}

// OrderBatch is the plan of a batch of orders.
type OrderBatch struct {
	Requests []NewOrder
	Plans    []OrderPlan
	// Now is when the batch was decided: the creation time of its orders and keys.
	Now time.Time
	// Pets holds the state of every pet the batch named, after the batch.
	Pets map[int64]PetState
	// Changed lists, by id, the pets whose state the batch changed: the store writes
	// each once.
	Changed []int64
}

// PlanOrders decides a batch of order requests in arrival order, exactly as if each
// had been placed alone in that order. pets holds the state of every known pet the
// batch names (a pet missing from it is unknown) and is updated in place, and catalog
// the same pets as the catalogue shows them (a pet without a price is not for sale); keys holds
// the stored record of every Idempotency-Key the batch carries that has one. Orders
// placed are dated now, priced in currency at the pet's price, and keep the pet's
// name and category: nothing that happens to the pet later changes them.
func PlanOrders(reqs []NewOrder, pets map[int64]PetState, catalog map[int64]Pet, keys map[KeyRef]IdempotencyRecord, now time.Time, currency string) OrderBatch {
	b := OrderBatch{Requests: reqs, Plans: make([]OrderPlan, len(reqs)), Now: now, Pets: pets}
	// recordedBy is the request of this batch whose result each key records.
	var recordedBy map[KeyRef]int
	for i, r := range reqs {
		p := &b.Plans[i]
		p.SameAs = -1
		if k := r.Idempotency; k != nil {
			ref := k.Ref()
			if j, ok := recordedBy[ref]; ok {
				if slices.Equal(reqs[j].Idempotency.RequestHash, k.RequestHash) {
					p.Outcome, p.SameAs = ReplayInBatch, j
				} else {
					p.Outcome, p.Refusal = Refuse, errKeyReused
				}
				continue
			}
			if rec, ok := keys[ref]; ok {
				replay, err := JudgeKey(rec, k.RequestHash, now, IdempotencyTTL)
				if err != nil {
					p.Outcome, p.Refusal = Refuse, asError(err)
					continue
				}
				if replay {
					p.Outcome, p.Replay = Replay, &rec
					continue
				}
			}
			// A fresh key: it records this request's result, which later requests
			// of the batch with the key are judged against.
			p.Record = true
			if recordedBy == nil {
				recordedBy = make(map[KeyRef]int)
			}
			recordedBy[ref] = i
		}
		if err := CheckShipDate(r.ShipDate); err != nil {
			p.Outcome, p.Refusal = Refuse, asError(err)
			continue
		}
		cur, ok := pets[r.PetID]
		if !ok {
			p.Outcome, p.Refusal = Refuse, PetNotFound(r.PetID)
			continue
		}
		pet := catalog[r.PetID]
		if pet.Price == nil {
			p.Outcome, p.Refusal = Refuse, NotForSale(r.PetID)
			continue
		}
		next, err := cur.Take(r.Quantity)
		if err != nil {
			p.Outcome, p.Refusal = Refuse, asError(err)
			continue
		}
		pets[r.PetID] = next
		if !slices.Contains(b.Changed, r.PetID) {
			b.Changed = append(b.Changed, r.PetID)
		}
		p.Outcome = Place
		price := *pet.Price
		p.Order = Order{PetID: r.PetID, AccountID: r.AccountID, Quantity: r.Quantity, ShipDate: r.ShipDate,
			Status: Placed, CreatedAt: now, UnitPrice: &price, PetName: pet.Name, CategoryID: pet.CategoryID, Currency: currency}
	}
	slices.Sort(b.Changed)
	return b
}

// Record returns the record to store on the key of request i (when its plan says
// Record), once the store has given the placed order its id.
func (b *OrderBatch) Record(i int) IdempotencyRecord {
	p := &b.Plans[i]
	rec := IdempotencyRecord{RequestHash: b.Requests[i].Idempotency.RequestHash, CreatedAt: b.Now}
	if p.Outcome == Place {
		o := p.Order
		rec.Order = &o
	} else {
		rec.Refusal = p.Refusal
	}
	return rec
}

// Answer returns the answer to request i, once the store has given every placed order
// its id: the order, or the refusal as the error.
func (b *OrderBatch) Answer(i int) (PlacedOrder, error) {
	p := &b.Plans[i]
	switch p.Outcome {
	case Place:
		return PlacedOrder{Order: p.Order}, nil
	case Replay:
		if p.Replay.Refusal != nil {
			return PlacedOrder{Replayed: true}, p.Replay.Refusal
		}
		return PlacedOrder{Order: *p.Replay.Order, Replayed: true}, nil
	case ReplayInBatch:
		o, err := b.Answer(p.SameAs)
		o.Replayed = true
		return o, err
	}
	return PlacedOrder{}, p.Refusal
}

// asError returns the *Error in err; the rule functions return nothing else.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: EInternal, Message: "An internal error occurred."}
}
