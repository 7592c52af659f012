package petstore

import "time"

// The changes that make events, each decided here once for every store: a store loads
// the pet (and the order) inside its transaction, calls one of these, and saves the
// new state, the order and the events the function returns, in that transaction. A
// change's events come in this order: the order's event (placed, completed,
// cancelled), then the pet's StockEvents.

// CancelOrder applies rule 4 to placed order o of pet p, whose state is s: the order
// cancelled at now, the pet's new state, and the events order.cancelled and the
// pet's. The caller has asked o.CheckCancel, and calls this only for an order to
// cancel now.
func CancelOrder(o Order, p Pet, s PetState, now time.Time) (Order, PetState, []Event, error) {
	next, err := s.Return(o)
	if err != nil {
		return o, s, nil, err
	}
	o.Status, o.CancelledAt = Cancelled, &now
	return o, next, append([]Event{orderEvent(OrderCancelled, o, now)}, StockEvents(p, s, next, now)...), nil
}

// CompleteOrder applies rule 5 to order o of pet p, whose state is s: the order
// complete at now, the pet's new state, and the events order.completed and the pet's.
// The caller has checked the change with CheckOrderUpdate.
func CompleteOrder(o Order, p Pet, s PetState, now time.Time) (Order, PetState, []Event) {
	next := s.Fulfil(o.Quantity)
	o.Complete, o.Status, o.CompletedAt = true, Completed, &now
	return o, next, append([]Event{orderEvent(OrderCompleted, o, now)}, StockEvents(p, s, next, now)...)
}

// SetStock applies rule 6 to pet p, whose state is s, given a stock of quantity:
// the pet's new state and its events.
func SetStock(p Pet, s PetState, quantity int, now time.Time) (PetState, []Event, error) {
	next, err := s.Restock(quantity)
	if err != nil {
		return s, nil, err
	}
	return next, StockEvents(p, s, next, now), nil
}

// RevisedEvents are the events of pet before becoming after by an admin's change of
// its fields (Pet.Revise): pet.status_changed when the status changed, else none.
func RevisedEvents(before, after Pet, now time.Time) []Event {
	return StockEvents(after, PetState{Status: before.Status, Stock: before.Stock}, PetState{Status: after.Status, Stock: after.Stock}, now)
}

// Events are the events of a batch of orders, whose pets were in the states before
// (and are pets, for their names) before the batch: an order.placed per placed order,
// in arrival order, then the StockEvents of each pet the batch changed, by id, from
// its state before the batch to its state after it.
func (b OrderBatch) Events(before map[int64]PetState, pets map[int64]Pet) []Event {
	var out []Event
	for i := range b.Plans {
		if p := &b.Plans[i]; p.Outcome == Place {
			out = append(out, orderEvent(OrderPlaced, p.Order, b.Now))
		}
	}
	for _, id := range b.Changed {
		out = append(out, StockEvents(pets[id], before[id], b.Pets[id], b.Now)...)
	}
	return out
}

func orderEvent(t EventType, o Order, now time.Time) Event {
	return Event{ID: NewEventID(), Type: t, CreatedAt: now, Order: &o}
}

// KeyEvent is the event t (APIKeyCreated or APIKeyRevoked) of key k, held by the
// account with email, changed by by at now. A store makes one per key its change
// creates or revokes, and none for a key it did not change (one already revoked).
func KeyEvent(t EventType, k APIKey, email string, by Actor, now time.Time) Event {
	return Event{ID: NewEventID(), Type: t, CreatedAt: now, Key: &KeyChange{Key: k, AccountEmail: email, By: by}}
}
