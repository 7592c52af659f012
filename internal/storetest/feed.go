package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The feed a test follows to check the events each step wrote, and the events it
// expects.

// webhookStore returns the store under test as a petstore.WebhookStore.
func (f *fixture) webhookStore() petstore.WebhookStore {
	f.t.Helper()
	return f.s
}

// feedWait bounds how long a test waits for events to show in the feed. PostgreSQL
// shows an event only once every transaction begun before it has ended, and other
// tests on the same server, running in parallel, hold transactions open for moments.
const feedWait = 10 * time.Second

// feed follows a store's event feed by Seq, as a consumer would.
type feed struct {
	f    *fixture
	ws   petstore.WebhookStore
	last int64
	ids  map[string]bool
	// marker is a pet whose stock changes make one known event (see nothing).
	marker      int64
	markerStock int
}

func (f *fixture) feed() *feed {
	f.t.Helper()
	return &feed{f: f, ws: f.webhookStore(), ids: map[string]bool{}}
}

// read returns every event of the feed after Seq after that matches filter, reading
// page by page.
func (fd *feed) read(after int64, filter petstore.EventFilter, limit int) []petstore.Event {
	fd.f.t.Helper()
	out := []petstore.Event{}
	for {
		page, err := fd.ws.Events(fd.f.ctx, filter, petstore.Page{Limit: limit, After: after})
		must(fd.f.t, err)
		out = append(out, page...)
		if len(page) < limit {
			return out
		}
		after = page[len(page)-1].Seq
	}
}

// next waits for the events written since the last call and checks that they are of
// the types want, in that order, and well formed: a fresh evt_ id each, Seq rising.
func (fd *feed) next(want ...petstore.EventType) []petstore.Event {
	fd.f.t.Helper()
	return fd.take(false, want)
}

// nextAnyOrder is next for events whose order is not fixed (those of one batch).
func (fd *feed) nextAnyOrder(want ...petstore.EventType) []petstore.Event {
	fd.f.t.Helper()
	return fd.take(true, want)
}

func (fd *feed) take(anyOrder bool, want []petstore.EventType) []petstore.Event {
	t := fd.f.t
	t.Helper()
	if len(want) == 0 {
		t.Fatal("a feed cannot wait for no event; use nothing")
	}
	var got []petstore.Event
	for deadline := time.Now().Add(feedWait); ; time.Sleep(5 * time.Millisecond) {
		got = fd.read(fd.last, petstore.EventFilter{}, petstore.MaxLimit)
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	types := make([]petstore.EventType, len(got))
	for i, e := range got {
		types[i] = e.Type
	}
	w := slices.Clone(want)
	if anyOrder {
		slices.Sort(types)
		slices.Sort(w)
	}
	if !slices.Equal(types, w) {
		t.Fatalf("the feed has the new events %v, want %v", types, w)
	}
	for _, e := range got {
		if e.Seq <= fd.last {
			t.Errorf("event %s has Seq %d after %d: the feed is not in Seq order", e.ID, e.Seq, fd.last)
		}
		fd.last = e.Seq
		if !strings.HasPrefix(e.ID, "evt_") || len(e.ID) != 30 {
			t.Errorf("event id %q is not evt_ and 26 characters", e.ID)
		}
		if fd.ids[e.ID] {
			t.Errorf("event id %s is used twice", e.ID)
		}
		fd.ids[e.ID] = true
	}
	return got
}

// nothing checks that what the test did since the last call wrote no event: it
// changes the marker pet's stock, which writes one event it knows, and checks that
// this event is the only new one.
func (fd *feed) nothing() {
	fd.f.t.Helper()
	if fd.marker == 0 {
		// Created without stock: creating a pet writes no event.
		c := fd.f.category()
		p, err := fd.f.s.CreatePet(fd.f.ctx, petstore.PetFields{Name: name("Marker"), CategoryID: c.ID, Status: petstore.Available, Price: Price(1)})
		must(fd.f.t, err)
		fd.marker = p.ID
	}
	fd.markerStock++
	_, err := fd.f.s.SetInventory(fd.f.ctx, fd.marker, fd.markerStock)
	must(fd.f.t, err)
	want := []petstore.EventType{petstore.InventoryUpdated}
	if fd.markerStock == 1 {
		want = append(want, petstore.PetRestocked)
	}
	got := fd.next(want...)
	if it := got[0].Inventory; it == nil || it.PetID != fd.marker {
		fd.f.t.Fatalf("the marker's event is %s", describeEvent(got[0]))
	}
}

// describeEvent shows an event's type, date and resource (times in UTC), for
// comparing what a store wrote with what a test expects; the id and Seq are left out.
func describeEvent(e petstore.Event) string {
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	s := fmt.Sprintf("%s at %s", e.Type, at(e.CreatedAt))
	if o := e.Order; o != nil {
		ship := "none"
		if o.ShipDate != nil {
			ship = at(*o.ShipDate)
		}
		s += fmt.Sprintf(" order{id %d, pet %d, account %d, quantity %d, ship %s, complete %v, created %s}",
			o.ID, o.PetID, o.AccountID, o.Quantity, ship, o.Complete, at(o.CreatedAt))
	}
	if p := e.Pet; p != nil {
		s += fmt.Sprintf(" pet{id %d, name %q, category %d, %s, stock %d}", p.ID, p.Name, p.CategoryID, p.Status, p.Stock)
	}
	if it := e.Inventory; it != nil {
		s += fmt.Sprintf(" inventory{pet %d, quantity %d, %s}", it.PetID, it.Quantity, it.Status)
	}
	if w := e.Webhook; w != nil {
		s += fmt.Sprintf(" webhook{id %d, url %s}", w.ID, w.URL)
	}
	if c := e.Key; c != nil {
		k := c.Key
		when := func(t *time.Time) string {
			if t == nil {
				return "never"
			}
			return at(*t)
		}
		s += fmt.Sprintf(" key{id %d, account %d %s, name %q, prefix %q, created %s, scopes %q, expires %s, last used %s, by account %d key %d}",
			k.ID, k.AccountID, c.AccountEmail, k.Name, k.Prefix, at(k.CreatedAt), k.Scopes, when(k.ExpiresAt), when(k.LastUsedAt),
			c.By.AccountID, c.By.KeyID)
	}
	return s
}

// wantEvents checks the events a test got against what it expects, by describeEvent.
func wantEvents(t *testing.T, got []petstore.Event, want ...petstore.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range got {
		if g, w := describeEvent(got[i]), describeEvent(want[i]); g != w {
			t.Errorf("event %d is\n\t%s\nwant\n\t%s", i, g, w)
		}
	}
}

// The events a test expects, dated at.
func orderEvent(typ petstore.EventType, o petstore.Order, at time.Time) petstore.Event {
	return petstore.Event{Type: typ, CreatedAt: at, Order: &o}
}

func stockEvent(typ petstore.EventType, pet int64, quantity int, status petstore.PetStatus, at time.Time) petstore.Event {
	return petstore.Event{Type: typ, CreatedAt: at, Inventory: &petstore.InventoryItem{PetID: pet, Quantity: quantity, Status: status}}
}

func statusEvent(p petstore.Pet, status petstore.PetStatus, stock int, at time.Time) petstore.Event {
	p.Status, p.Stock = status, stock
	return petstore.Event{Type: petstore.PetStatusChanged, CreatedAt: at, Pet: &p}
}

// clocked opens a store whose clock reads epoch() until the test moves it.
func clocked(t *testing.T, open Opener) (*fixture, *clock) {
	t.Helper()
	c := &clock{now: epoch()}
	return setupWith(t, open, Hooks{Now: c.Now}), c
}

const (
	placed    = petstore.OrderPlaced
	completed = petstore.OrderCompleted
	cancelled = petstore.OrderCancelled
	soldOut   = petstore.PetSoldOut
	restocked = petstore.PetRestocked
	statusChg = petstore.PetStatusChanged
	invUpd    = petstore.InventoryUpdated
)

func sortedByType(list []petstore.Event) []petstore.Event {
	out := slices.Clone(list)
	slices.SortFunc(out, func(a, b petstore.Event) int { return strings.Compare(string(a.Type), string(b.Type)) })
	return out
}

func sameEvents(a, b []petstore.Event) bool {
	return slices.EqualFunc(a, b, func(x, y petstore.Event) bool {
		return x.ID == y.ID && x.Seq == y.Seq && describeEvent(x) == describeEvent(y)
	})
}

func seqs(list []petstore.Event) []int64 {
	return ids(list, func(e petstore.Event) int64 { return e.Seq })
}
