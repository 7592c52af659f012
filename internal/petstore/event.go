package petstore

import (
	"crypto/rand"
	"slices"
	"time"
)

// EventType names what happened. The list is open: a consumer must ignore a type it
// does not know.
type EventType string

// The event types. Each is written in the same transaction as the change it tells of.
const (
	// OrderPlaced: an order was placed; the event holds the order.
	OrderPlaced EventType = "order.placed"
	// OrderCompleted: an admin completed an order; the event holds the order.
	OrderCompleted EventType = "order.completed"
	// OrderCancelled: an order was cancelled; the event holds the order as it was.
	OrderCancelled EventType = "order.cancelled"
	// PetSoldOut: a pet's stock went from above 0 to 0 (an order took the last
	// units, or an admin set it to 0); the event holds the pet's inventory item.
	PetSoldOut EventType = "pet.sold_out"
	// PetRestocked: a pet's stock went from 0 to above 0 (a restock or a cancelled
	// order); the event holds the pet's inventory item.
	PetRestocked EventType = "pet.restocked"
	// PetStatusChanged: a pet's status changed, by an admin or by the store rules;
	// the event holds the pet.
	PetStatusChanged EventType = "pet.status_changed"
	// InventoryUpdated: a pet's stock changed, for whatever reason; the event holds
	// the pet's inventory item. One transaction that changes a pet's stock several
	// times (a batch of orders) makes one event with the stock after it.
	InventoryUpdated EventType = "inventory.updated"
	// WebhookTest: an admin asked for a test delivery to one endpoint; only that
	// endpoint gets it and the feed does not show it. Both stores tell test events
	// from the feed's by this type, and by nothing else.
	WebhookTest EventType = "webhook.test"
	// APIKeyCreated: an API key was made (by a request of its account, or by the
	// operator); the event holds the key without its secret, its account's email and
	// who made it.
	APIKeyCreated EventType = "api_key.created"
	// APIKeyRevoked: a live API key was revoked (by a request of its account, or by
	// the operator taking the account over: one event per key); the event holds the
	// key as it was, its account's email and who revoked it.
	APIKeyRevoked EventType = "api_key.revoked"
)

// EventTypes lists the types an endpoint may subscribe to, in the order of their bits
// in a subscription mask. New types are appended, never inserted.
// An endpoint's stored mask keeps its meaning: bit i is EventTypes[i] forever, and
// "*" (MaskAll) has every bit, so it takes the types appended later.
var EventTypes = []EventType{OrderPlaced, OrderCompleted, OrderCancelled, PetSoldOut, PetRestocked, PetStatusChanged, InventoryUpdated,
	APIKeyCreated, APIKeyRevoked}

// AllEvents is the subscription to every type, those added later included.
const AllEvents EventType = "*"

// eventScopes is the scope an API key needs to read events of each type: the x-scopes
// of the operations that answer the event's data directly, so that the feed and the
// webhooks show a key nothing those operations would refuse it. A new type gets its
// entry here (TestEveryEventTypeNamesTheScopeThatReadsIt), and the document's
// EventType schema lists the same table (x-read-scopes).
var eventScopes = map[EventType]string{
	// The order, of any account: an admin's orders:read reads them all (GET /store/orders).
	OrderPlaced:    "orders:read",
	OrderCompleted: "orders:read",
	OrderCancelled: "orders:read",
	// A pet's inventory item or the pet (GET /store/inventory, GET /pets).
	PetSoldOut:       "pets:read",
	PetRestocked:     "pets:read",
	PetStatusChanged: "pets:read",
	InventoryUpdated: "pets:read",
	// The endpoint a test went to (GET /webhooks/{webhookId}).
	WebhookTest: "webhooks:manage",
	// Another account's key and email: accounts:read is the scope of other accounts
	// (GET /accounts shows their emails), and no other call shows their keys.
	APIKeyCreated: "accounts:read",
	APIKeyRevoked: "accounts:read",
}

// Scope is the scope an API key needs to read events of type t, wherever they go: the
// feed, an endpoint it subscribes, a delivery it sends again. "" for an unknown type.
func (t EventType) Scope() string { return eventScopes[t] }

// ReadableEvents is the mask of the types whose events p may read: MaskAll for a key
// with every scope of its role, which reads the types added later too, as it holds
// the scopes added later.
func (p Principal) ReadableEvents() EventMask {
	if p.Scopes == nil {
		return MaskAll
	}
	var m EventMask
	for _, t := range EventTypes {
		if p.HasScope(t.Scope()) {
			m |= t.Bit()
		}
	}
	return m
}

// MayReadEvents reports whether p may read events of type t. A limited key may not
// read a type this version does not know (written by a later one during an upgrade):
// it cannot be shown to hold the type's scope.
func (p Principal) MayReadEvents(t EventType) bool {
	return p.Scopes == nil || t.Scope() != "" && p.HasScope(t.Scope())
}

// MissingEventScope names the first type of m, in the order of EventTypes, whose
// events p may not read, and the scope it lacks for them; "" when p may read every
// type of m. MaskAll ("*") needs the scope of every type.
func (p Principal) MissingEventScope(m EventMask) (EventType, string) {
	for i, t := range EventTypes {
		if m&(1<<i) != 0 && !p.HasScope(t.Scope()) {
			return t, t.Scope()
		}
	}
	return "", ""
}

// FeedFilter is the filter of p's feed: only the type asked for (typ; "" for all),
// and only the types p may read. Asking for a type p may not read is
// EInsufficientScope (LacksEventScope): the list of types is public, so naming the
// scope tells nothing, where an empty feed would look like a quiet shop forever. A
// limited key's feed names its types even when they are all this version knows: a
// later version's types, written during an upgrade, are not its.
func (p Principal) FeedFilter(typ EventType) (EventFilter, error) {
	if typ != "" {
		if !p.MayReadEvents(typ) {
			return EventFilter{}, LacksEventScope(typ.Scope(), typ)
		}
		return EventFilter{Type: typ}, nil
	}
	m := p.ReadableEvents()
	if m == MaskAll {
		return EventFilter{}, nil
	}
	return EventFilter{Types: append([]EventType{}, m.Types()...)}, nil // not nil: a key may read none
}

// EventMask is a set of event types, one bit per entry of EventTypes. Stores keep
// an endpoint's subscription as its mask, so that choosing the endpoints of an event
// is one integer test in SQL on every database.
type EventMask int64

// MaskAll subscribes to every type, those added later included.
const MaskAll EventMask = 1<<62 - 1

// Bit is the mask of type t alone; 0 for a type no one subscribes to (WebhookTest).
func (t EventType) Bit() EventMask {
	for i, u := range EventTypes {
		if u == t {
			return 1 << i
		}
	}
	return 0
}

// MaskOf makes the mask of a subscription; "*" is every type. An unknown type, or
// "*" beside a type, is EValidationFailed on field: a subscription reads back as it
// was sent, so a client comparing the two never sees a difference it did not make.
func MaskOf(field string, types []EventType) (EventMask, error) {
	if len(types) == 0 {
		return 0, Invalid(field, "must name at least one event type")
	}
	if len(types) > 1 && slices.Contains(types, AllEvents) {
		return 0, Invalid(field, `must be ["*"] alone (every type) or a list of event types, not both`)
	}
	var m EventMask
	for _, t := range types {
		if t == AllEvents {
			m = MaskAll
			continue
		}
		b := t.Bit()
		if b == 0 {
			return 0, Invalid(field, "must hold event types, such as order.placed, or *")
		}
		m |= b
	}
	return m, nil
}

// Types lists the types of mask m, or just "*" for MaskAll.
func (m EventMask) Types() []EventType {
	if m == MaskAll {
		return []EventType{AllEvents}
	}
	var out []EventType
	for i, t := range EventTypes {
		if m&(1<<i) != 0 {
			out = append(out, t)
		}
	}
	return out
}

// Event is something that happened, with the resource it tells of as it was then:
// exactly one of Order, Pet, Inventory and Key is set (Webhook for WebhookTest).
type Event struct {
	// ID is the event's stable identity ("evt_" and 26 characters): receivers dedupe
	// by it.
	ID        string
	Type      EventType
	CreatedAt time.Time
	// Seq orders the feed; the store gives it. Seqs rise along the feed but are not
	// consecutive (on PostgreSQL they are far apart).
	Seq int64

	Order     *Order
	Pet       *Pet
	Inventory *InventoryItem
	// Webhook is the endpoint a test event was sent to.
	Webhook *Webhook
	// Key is the API key of an api_key.* event, with who changed it.
	Key *KeyChange
	// TraceParent is the W3C traceparent of the span that wrote the event (the
	// request's store call, or the batch of orders it was placed in), "" when it was
	// not traced: the event's webhook deliveries go on in that trace. The stores keep
	// it with the event's data (StampTrace); the API never shows it.
	TraceParent string
}

// StampTrace gives traceparent to every event that has none.
func StampTrace(events []Event, traceparent string) {
	if traceparent == "" {
		return
	}
	for i := range events {
		if events[i].TraceParent == "" {
			events[i].TraceParent = traceparent
		}
	}
}

// KeyChange is what an api_key.* event tells of: the key (never its secret or its
// hash), the email of the account that holds it, and who made the change, so that a
// shop can audit who made and revoked which key.
type KeyChange struct {
	Key          APIKey
	AccountEmail string
	By           Actor
}

// NewEventID makes a fresh event id: the time in milliseconds, then 80 random bits,
// so that ids never repeat, not even across databases a receiver has seen, and a store
// indexes them in the order they are made (appending to its index, not writing all
// over it). The alphabet is in ASCII order, so ids sort by time as text.
func NewEventID() string {
	return newEventID(time.Now())
}

const idAlphabet = "234567abcdefghijklmnopqrstuvwxyz"

func newEventID(now time.Time) string { return newID("evt_", now) }

// newID is an id of NewEventID's kind after prefix: 26 characters, the first ten the
// time in milliseconds.
func newID(prefix string, now time.Time) string {
	b := make([]byte, len(prefix)+26)
	copy(b, prefix)
	p := len(prefix)
	ms := uint64(now.UnixMilli())
	for i := p + 9; i >= p; i-- { // 10 characters: 50 bits of milliseconds
		b[i] = idAlphabet[ms&31]
		ms >>= 5
	}
	var r [10]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	bits, n, j := uint64(0), 0, p+10
	for _, c := range r {
		bits, n = bits<<8|uint64(c), n+8
		for n >= 5 {
			n -= 5
			b[j] = idAlphabet[bits>>n&31]
			j++
		}
	}
	return string(b)
}

// StockEvents lists the events of a pet's stock and status going from before to
// after, dated now: inventory.updated when the stock changed, pet.sold_out or
// pet.restocked when it crossed 0, pet.status_changed when the status changed. p is
// the pet (its name and category complete the status event's pet).
func StockEvents(p Pet, before, after PetState, now time.Time) []Event {
	var out []Event
	item := InventoryItem{PetID: p.ID, Quantity: after.Stock, Status: after.Status}
	add := func(t EventType) {
		e := Event{ID: NewEventID(), Type: t, CreatedAt: now}
		switch t {
		case PetStatusChanged:
			pet := p
			pet.Status, pet.Stock = after.Status, after.Stock
			e.Pet = &pet
		default:
			it := item
			e.Inventory = &it
		}
		out = append(out, e)
	}
	if before.Stock != after.Stock {
		add(InventoryUpdated)
		switch {
		case before.Stock > 0 && after.Stock == 0:
			add(PetSoldOut)
		case before.Stock == 0 && after.Stock > 0:
			add(PetRestocked)
		}
	}
	if before.Status != after.Status {
		add(PetStatusChanged)
	}
	return out
}

// EventFilter selects events in the feed; a zero field does not filter.
type EventFilter struct {
	Type EventType
	// Types, when not nil, keeps only events of these types (none when empty): a
	// key's readable types (Principal.FeedFilter). Stores serve each type from an
	// index of its own, so a page reads no event of another type, however many.
	Types []EventType
}
