package petstore

import (
	"slices"
	"testing"
	"time"
)

// TestChangesDecideTheirEvents: each change's events, in their order, from the
// states before and after; the stores write exactly these.
func TestChangesDecideTheirEvents(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	pet := Pet{ID: 7, Name: "Rex", CategoryID: 2}
	open := Order{ID: 3, PetID: 7, Quantity: 2}
	types := func(es []Event) []EventType {
		out := make([]EventType, len(es))
		for i, e := range es {
			out[i] = e.Type
		}
		return out
	}
	tests := []struct {
		name   string
		change func() (PetState, []Event, error)
		state  PetState
		want   []EventType
	}{
		{"cancelling returns stock to a sold-out pet", func() (PetState, []Event, error) {
			_, s, es, err := CancelOrder(open, pet, PetState{Status: Pending, Stock: 0, OpenOrders: 1}, now)
			return s, es, err
		}, PetState{Status: Available, Stock: 2}, []EventType{OrderCancelled, InventoryUpdated, PetRestocked, PetStatusChanged}},
		{"cancelling a complete order is refused and says nothing", func() (PetState, []Event, error) {
			done := open
			done.Complete, done.Status = true, Completed
			_, s, es, err := CancelOrder(done, pet, PetState{Status: Available, Stock: 1}, now)
			return s, es, err
		}, PetState{Status: Available, Stock: 1}, nil},
		{"completing the last open order of a sold-out pet sells it", func() (PetState, []Event, error) {
			_, s, es := CompleteOrder(open, pet, PetState{Status: Pending, Stock: 0, OpenOrders: 1}, now)
			return s, es, nil
		}, PetState{Status: Sold}, []EventType{OrderCompleted, PetStatusChanged}},
		{"completing with other orders open changes no status", func() (PetState, []Event, error) {
			_, s, es := CompleteOrder(open, pet, PetState{Status: Available, Stock: 4, OpenOrders: 2}, now)
			return s, es, nil
		}, PetState{Status: Available, Stock: 4, OpenOrders: 1}, []EventType{OrderCompleted}},
		{"a restock from 0", func() (PetState, []Event, error) {
			return SetStock(pet, PetState{Status: Sold}, 5, now)
		}, PetState{Status: Available, Stock: 5}, []EventType{InventoryUpdated, PetRestocked, PetStatusChanged}},
		{"a stock set to what it is says nothing", func() (PetState, []Event, error) {
			return SetStock(pet, PetState{Status: Available, Stock: 5}, 5, now)
		}, PetState{Status: Available, Stock: 5}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, es, err := tt.change()
			if tt.want == nil && err == nil && len(es) > 0 {
				t.Fatalf("events %v, want none", types(es))
			}
			if s.Status != tt.state.Status || s.Stock != tt.state.Stock {
				t.Errorf("state %+v, want %+v", s, tt.state)
			}
			if !slices.Equal(types(es), tt.want) {
				t.Errorf("events %v, want %v", types(es), tt.want)
			}
			for _, e := range es {
				if !e.CreatedAt.Equal(now) || len(e.ID) != 30 {
					t.Errorf("event %s of %s, id %q, want dated %v", e.Type, e.CreatedAt, e.ID, now)
				}
				if e.Type == PetStatusChanged && (e.Pet == nil || e.Pet.Name != "Rex" || e.Pet.Status != s.Status || e.Pet.Stock != s.Stock) {
					t.Errorf("pet.status_changed holds %+v, want the pet as it became", e.Pet)
				}
			}
		})
	}
	if got := types(RevisedEvents(Pet{ID: 7, Status: Available, Stock: 3}, Pet{ID: 7, Name: "Max", Status: Sold, Stock: 3}, now)); !slices.Equal(got, []EventType{PetStatusChanged}) {
		t.Errorf("a status changed by hand makes %v", got)
	}
	if got := RevisedEvents(Pet{ID: 7, Name: "Rex", Status: Available}, Pet{ID: 7, Name: "Max", Status: Available}, now); len(got) != 0 {
		t.Errorf("a rename makes %v", types(got))
	}

	// A batch: order.placed per placed order in arrival order, then each changed pet's.
	reqs := []NewOrder{{AccountID: 1, PetID: 7, Quantity: 1}, {AccountID: 1, PetID: 8, Quantity: 9}, {AccountID: 1, PetID: 7, Quantity: 1}}
	states := map[int64]PetState{7: {Status: Available, Stock: 2}, 8: {Status: Available, Stock: 1}}
	before := map[int64]PetState{7: states[7], 8: states[8]}
	b := PlanOrders(reqs, states, forSale, nil, now, "EUR")
	got := types(b.Events(before, map[int64]Pet{7: pet, 8: {ID: 8, Name: "Tom"}}))
	if want := []EventType{OrderPlaced, OrderPlaced, InventoryUpdated, PetSoldOut, PetStatusChanged}; !slices.Equal(got, want) {
		t.Errorf("a batch of two placed (pet 7 sold out) and one refused makes %v, want %v", got, want)
	}
}
