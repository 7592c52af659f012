package petstore

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEventDataRoundTrips(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 123000000, time.UTC)
	ship := at.Add(48 * time.Hour)
	price := int64(1999)
	tests := []struct {
		name string
		e    Event
	}{
		{"order", Event{Type: OrderPlaced, Order: &Order{ID: 7, PetID: 3, AccountID: 2, Quantity: 4, ShipDate: &ship, Status: Placed, CreatedAt: at,
			UnitPrice: &price, PetName: "Rex", CategoryID: 5, Currency: "EUR"}}},
		{"order without ship date", Event{Type: OrderCancelled, Order: &Order{ID: 8, PetID: 3, AccountID: 2, Quantity: 1, Status: Cancelled, CreatedAt: at, CancelledAt: &at}}},
		{"completed order", Event{Type: OrderCompleted, Order: &Order{ID: 9, PetID: 3, AccountID: 2, Quantity: 1, Complete: true, Status: Completed, CreatedAt: at, CompletedAt: &ship}}},
		{"pet", Event{Type: PetStatusChanged, Pet: &Pet{ID: 3, Name: "Rex", CategoryID: 1, Status: Sold}}},
		{"pet with a description and tags", Event{Type: PetStatusChanged, Pet: &Pet{ID: 3, Name: "Rex", CategoryID: 1, Status: Sold, Description: "Calm.", Tags: []string{"calm", "Small"}}}},
		{"inventory", Event{Type: PetSoldOut, Inventory: &InventoryItem{PetID: 3, Quantity: 0, Status: Pending}}},
		{"webhook", Event{Type: WebhookTest, Webhook: &Webhook{ID: 1, URL: "https://example.com/hook", Events: MaskAll, Enabled: true, CreatedAt: at, UpdatedAt: at}}},
		{"key made by a key", Event{Type: APIKeyCreated, Key: &KeyChange{Key: APIKey{ID: 3, AccountID: 2, Name: "shop", Prefix: "psk_ab",
			CreatedAt: at, Scopes: []string{"orders:read", "pets:read"}, ExpiresAt: &ship}, AccountEmail: "ada@example.com", By: Actor{AccountID: 2, KeyID: 1}}}},
		{"key revoked by the operator", Event{Type: APIKeyRevoked, Key: &KeyChange{Key: APIKey{ID: 3, AccountID: 2, Name: "shop", Prefix: "psk_ab",
			CreatedAt: at, LastUsedAt: &at}, AccountEmail: "ada@example.com"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := MarshalEventData(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			got := Event{Type: tt.e.Type}
			if err := UnmarshalEventData(&got, data); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.e) {
				t.Errorf("read back %+v, want %+v", got, tt.e)
			}
		})
	}
}

func TestEventDataKeepsNoSecret(t *testing.T) {
	w := &Webhook{ID: 1, URL: "https://example.com/hook", Secret: "whsec_current", PreviousSecret: "whsec_old"}
	data, err := MarshalEventData(Event{Type: WebhookTest, Webhook: w})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); strings.Contains(s, "whsec_") {
		t.Errorf("stored test event %s holds a secret", s)
	}
}

func TestKeyEventDataKeepsTheKeyNotItsSecret(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	e := KeyEvent(APIKeyCreated, APIKey{ID: 3, AccountID: 2, Name: "shop", Prefix: "psk_ab", CreatedAt: at}, "ada@example.com", Actor{AccountID: 2}, at)
	data, err := MarshalEventData(e)
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]map[string]any
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	var fields []string
	for f := range stored["apiKey"] {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	// Only what GET /api-keys shows of a key, and who: a field added to the stored
	// form must be one the event may show.
	if want := []string{"accountEmail", "accountId", "byAccountId", "createdAt", "id", "name", "prefix"}; !slices.Equal(fields, want) {
		t.Errorf("the stored key has the fields %v, want %v", fields, want)
	}
}

func TestEventDataNeedsAResource(t *testing.T) {
	if _, err := MarshalEventData(Event{ID: "evt_x", Type: OrderPlaced}); err == nil {
		t.Error("an event without a resource was encoded")
	}
	if err := UnmarshalEventData(&Event{}, []byte(`{}`)); err == nil {
		t.Error("stored data without a resource was read")
	}
}

func TestMasks(t *testing.T) {
	tests := []struct {
		types   []EventType
		want    []EventType
		invalid bool
	}{
		{types: []EventType{OrderPlaced}, want: []EventType{OrderPlaced}},
		{types: []EventType{InventoryUpdated, OrderPlaced, OrderPlaced}, want: []EventType{OrderPlaced, InventoryUpdated}},
		{types: []EventType{AllEvents}, want: []EventType{AllEvents}},
		{types: []EventType{OrderPlaced, AllEvents}, invalid: true},
		{types: nil, invalid: true},
		{types: []EventType{WebhookTest}, invalid: true},
		{types: []EventType{"order.shipped"}, invalid: true},
	}
	for _, tt := range tests {
		m, err := MaskOf("events", tt.types)
		if tt.invalid {
			if ErrorCode(err) != EValidationFailed {
				t.Errorf("MaskOf(%v) = %v, %v; want a validation error", tt.types, m, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(m.Types(), tt.want) {
			t.Errorf("MaskOf(%v).Types() = %v, %v; want %v", tt.types, m.Types(), err, tt.want)
		}
	}
	if OrderPlaced.Bit()&MaskAll == 0 || WebhookTest.Bit() != 0 {
		t.Error("bits and MaskAll disagree")
	}
}

// Stores keep subscriptions as masks: a type's bit never moves, and "*" holds the
// types added after an endpoint subscribed.
func TestMaskBitsNeverMove(t *testing.T) {
	want := map[EventType]EventMask{OrderPlaced: 1, OrderCompleted: 2, OrderCancelled: 4, PetSoldOut: 8, PetRestocked: 16,
		PetStatusChanged: 32, InventoryUpdated: 64, APIKeyCreated: 128, APIKeyRevoked: 256}
	for typ, bit := range want {
		if typ.Bit() != bit || MaskAll&bit == 0 {
			t.Errorf("%s has bit %d, want %d within MaskAll", typ, typ.Bit(), bit)
		}
	}
	if len(EventTypes) != len(want) {
		t.Errorf("%d event types, want %d: a new one needs its bit here", len(EventTypes), len(want))
	}
	m, err := MaskOf("events", []EventType{APIKeyRevoked, OrderPlaced})
	if err != nil || m != 257 || !slices.Equal(m.Types(), []EventType{OrderPlaced, APIKeyRevoked}) {
		t.Errorf("MaskOf(api_key.revoked, order.placed) = %d %v (%v)", m, m.Types(), err)
	}
}

func TestStockEvents(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	pet := Pet{ID: 5, Name: "Rex", CategoryID: 2}
	tests := []struct {
		name          string
		before, after PetState
		want          []EventType
	}{
		{"nothing changed", PetState{Status: Available, Stock: 3}, PetState{Status: Available, Stock: 3}, nil},
		{"stock down", PetState{Status: Available, Stock: 3}, PetState{Status: Available, Stock: 1}, []EventType{InventoryUpdated}},
		{"last units taken", PetState{Status: Available, Stock: 2}, PetState{Status: Pending, Stock: 0}, []EventType{InventoryUpdated, PetSoldOut, PetStatusChanged}},
		{"restocked", PetState{Status: Sold, Stock: 0}, PetState{Status: Available, Stock: 5}, []EventType{InventoryUpdated, PetRestocked, PetStatusChanged}},
		{"status only", PetState{Status: Pending, Stock: 0}, PetState{Status: Sold, Stock: 0}, []EventType{PetStatusChanged}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := StockEvents(pet, tt.before, tt.after, now)
			var got []EventType
			ids := map[string]bool{}
			for _, e := range events {
				got = append(got, e.Type)
				ids[e.ID] = true
				if !e.CreatedAt.Equal(now) {
					t.Errorf("%s dated %v", e.Type, e.CreatedAt)
				}
				switch {
				case e.Type == PetStatusChanged && (e.Pet == nil || e.Pet.Status != tt.after.Status || e.Pet.Name != "Rex"):
					t.Errorf("%s holds %+v", e.Type, e.Pet)
				case e.Type != PetStatusChanged && (e.Inventory == nil || e.Inventory.Quantity != tt.after.Stock):
					t.Errorf("%s holds %+v", e.Type, e.Inventory)
				}
			}
			if !reflect.DeepEqual(got, tt.want) || len(ids) != len(events) {
				t.Errorf("events %v (%d distinct ids), want %v", got, len(ids), tt.want)
			}
		})
	}
}

func TestEventIDsSortByTime(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	prev := newEventID(at)
	for _, d := range []time.Duration{time.Millisecond, time.Second, 24 * time.Hour, 50 * 365 * 24 * time.Hour} {
		next := newEventID(at.Add(d))
		if next[:14] <= prev[:14] {
			t.Errorf("id at +%v %s does not sort after %s", d, next, prev)
		}
		prev = next
	}
}

func TestEventIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewEventID()
		if len(id) != 30 || id[:4] != "evt_" || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		for _, c := range id[4:] {
			if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
				t.Fatalf("id %q has %q", id, c)
			}
		}
		seen[id] = true
	}
}

func TestSetEnabled(t *testing.T) {
	since := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	disabled := Webhook{Enabled: false, DisabledReason: "failing for 5 days", FailingSince: &since}
	failing := Webhook{Enabled: true, FailingSince: &since}
	tests := []struct {
		name string
		w    Webhook
		on   bool
		want Webhook
	}{
		{"enabled again, it forgets why it was disabled and its failures", disabled, true, Webhook{Enabled: true}},
		{"disabled by hand, a failing one keeps its run", failing, false, Webhook{Enabled: false, FailingSince: &since}},
		{"enabled while enabled, nothing changes", failing, true, failing},
		{"disabled while disabled, the reason stays", disabled, false, disabled},
	}
	for _, tt := range tests {
		if got := tt.w.SetEnabled(tt.on); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestEventsStoredBeforeOrderHistoryReadWithTheirStatus: an order event written
// before orders had a status reads back with the status its type implies, and the
// time of the change it tells of.
func TestEventsStoredBeforeOrderHistoryReadWithTheirStatus(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	old := `{"order":{"id":8,"petId":3,"accountId":2,"quantity":1,"complete":%s,"createdAt":"2026-11-20T10:00:00Z"}}`
	tests := []struct {
		t         EventType
		complete  string
		status    OrderStatus
		completed bool
		cancelled bool
	}{
		{OrderPlaced, "false", Placed, false, false},
		{OrderCompleted, "true", Completed, true, false},
		{OrderCancelled, "false", Cancelled, false, true},
	}
	for _, tt := range tests {
		e := Event{ID: "evt_x", Type: tt.t, CreatedAt: at}
		if err := UnmarshalEventData(&e, []byte(strings.Replace(old, "%s", tt.complete, 1))); err != nil {
			t.Fatal(err)
		}
		o := e.Order
		if o.Status != tt.status || (o.CompletedAt != nil) != tt.completed || (o.CancelledAt != nil) != tt.cancelled {
			t.Errorf("%s: read %+v", tt.t, *o)
		}
		if at := o.CompletedAt; at != nil && !at.Equal(e.CreatedAt) {
			t.Errorf("%s: completedAt %v, want the event's time", tt.t, at)
		}
	}
}
