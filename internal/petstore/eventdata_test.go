package petstore

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEventDataRoundTrips(t *testing.T) {
	ship := time.Date(2031, 1, 2, 3, 4, 5, 6000, time.FixedZone("", 3600))
	created := time.Date(2030, 5, 6, 7, 8, 9, 123456000, time.UTC)
	expires := created.Add(time.Hour)
	tests := []struct {
		name string
		in   Event
		want Event
	}{
		{"an order, its ship date read back in UTC",
			Event{Order: &Order{ID: 7, PetID: 3, AccountID: 1, Quantity: 2, ShipDate: &ship, Complete: true, CreatedAt: created}},
			Event{Order: &Order{ID: 7, PetID: 3, AccountID: 1, Quantity: 2, ShipDate: ptrTo(ship.UTC()), Complete: true, CreatedAt: created}}},
		{"an order without a ship date",
			Event{Order: &Order{ID: 8, PetID: 3, AccountID: 1, Quantity: 1, CreatedAt: created}},
			Event{Order: &Order{ID: 8, PetID: 3, AccountID: 1, Quantity: 1, CreatedAt: created}}},
		{"a pet",
			Event{Pet: &Pet{ID: 3, Name: "Rex", CategoryID: 2, Status: Sold, Stock: 0}},
			Event{Pet: &Pet{ID: 3, Name: "Rex", CategoryID: 2, Status: Sold, Stock: 0}}},
		{"an inventory item",
			Event{Inventory: &InventoryItem{PetID: 3, Quantity: 9, Status: Available}},
			Event{Inventory: &InventoryItem{PetID: 3, Quantity: 9, Status: Available}}},
		{"an endpoint keeps its address and types, not its secrets",
			Event{Webhook: &Webhook{ID: 4, URL: "https://example.com/h", Description: "d", Events: OrderPlaced.Bit() | PetSoldOut.Bit(),
				Enabled: true, Secret: "whsec_a", PreviousSecret: "whsec_b", PreviousSecretExpiresAt: &expires, CreatedAt: created}},
			Event{Webhook: &Webhook{ID: 4, URL: "https://example.com/h", Description: "d", Events: OrderPlaced.Bit() | PetSoldOut.Bit()}}},
		{"an endpoint of every type",
			Event{Webhook: &Webhook{ID: 5, URL: "https://example.com/h", Events: MaskAll}},
			Event{Webhook: &Webhook{ID: 5, URL: "https://example.com/h", Events: MaskAll}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := MarshalEventData(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "whsec_") {
				t.Errorf("the data holds a secret: %s", data)
			}
			// The other fields of the event are the store's columns, left as they are.
			got := Event{ID: "evt_x", Type: OrderPlaced, Seq: 9, Pet: &Pet{ID: 99}}
			if err := UnmarshalEventData(data, &got); err != nil {
				t.Fatal(err)
			}
			tt.want.ID, tt.want.Type, tt.want.Seq = "evt_x", OrderPlaced, 9
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %s", describe(got))
				t.Errorf("want %s", describe(tt.want))
			}
		})
	}
}

func TestEventDataNeedsExactlyOneResource(t *testing.T) {
	for _, e := range []Event{
		{},
		{Order: &Order{ID: 1}, Pet: &Pet{ID: 1}},
	} {
		if _, err := MarshalEventData(e); err == nil {
			t.Errorf("MarshalEventData(%+v) succeeded", e)
		}
	}
	for _, data := range []string{`{}`, `not json`, `{"order":null}`} {
		if err := UnmarshalEventData([]byte(data), &Event{}); err == nil {
			t.Errorf("UnmarshalEventData(%s) succeeded", data)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// describe shows an event with its resource, which %+v shows only as a pointer.
func describe(e Event) string {
	s := fmt.Sprintf("%s %s seq %d", e.ID, e.Type, e.Seq)
	if e.Order != nil {
		s += fmt.Sprintf(" order %+v", *e.Order)
	}
	if e.Pet != nil {
		s += fmt.Sprintf(" pet %+v", *e.Pet)
	}
	if e.Inventory != nil {
		s += fmt.Sprintf(" inventory %+v", *e.Inventory)
	}
	if e.Webhook != nil {
		s += fmt.Sprintf(" webhook %+v", *e.Webhook)
	}
	return s
}
