package eventhub

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// memFeed is a feed held in memory: the hub's logic (the feed's end, fan-out, filters,
// dropping a slow subscriber) apart from any store; the stores' feeds are tested in
// storetest, and the stream over both stores in httpapi's stream_test.go.
type memFeed struct {
	mu     sync.Mutex
	events []petstore.Event
}

func (f *memFeed) add(t petstore.EventType) {
	f.mu.Lock()
	defer f.mu.Unlock()
	seq := int64(len(f.events)+1) * 3 // gaps, as PostgreSQL's seqs have
	f.events = append(f.events, petstore.Event{Seq: seq, ID: "evt_" + string(rune('a'+len(f.events))), Type: t})
}

func (f *memFeed) Events(_ context.Context, _ petstore.EventFilter, p petstore.Page) ([]petstore.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []petstore.Event
	for _, e := range f.events {
		if e.Seq > p.After && len(out) < p.Size() {
			out = append(out, e)
		}
	}
	return out, nil
}

func newHub(t *testing.T, f *memFeed, buffer int) *Hub {
	h := New(Options{Feed: f, Encode: func(e petstore.Event) ([]byte, error) { return []byte(`{}`), nil }, Poll: time.Hour, Buffer: buffer})
	t.Cleanup(h.Close)
	return h
}

func receive(t *testing.T, s *Subscription) *Message {
	t.Helper()
	select {
	case m, ok := <-s.C:
		if !ok {
			t.Fatalf("the subscription ended: %v", s.Reason())
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
	}
	return nil
}

func TestHubStartsAtTheEndAndFiltersEachSubscriber(t *testing.T) {
	f := &memFeed{}
	for range 5 {
		f.add(petstore.OrderPlaced)
	}
	h := newHub(t, f, 16)
	orders, err := h.Subscribe(context.Background(), Match(petstore.EventFilter{Type: petstore.OrderPlaced}))
	if err != nil {
		t.Fatal(err)
	}
	if orders.From != 15 {
		t.Fatalf("From = %d, want the feed's end, 15", orders.From)
	}
	stock, _ := h.Subscribe(context.Background(), Match(petstore.EventFilter{Types: []petstore.EventType{petstore.InventoryUpdated}}))
	f.add(petstore.InventoryUpdated)
	f.add(petstore.OrderPlaced)
	h.Wake()
	if m := receive(t, orders); m.Seq != 21 || string(m.Frame) != "id: evt_g\nevent: order.placed\ndata: {}\n\n" {
		t.Fatalf("orders got %d %q", m.Seq, m.Frame)
	}
	if m := receive(t, stock); m.Seq != 18 {
		t.Fatalf("stock got %d", m.Seq)
	}
	// One made now starts past them.
	late, _ := h.Subscribe(context.Background(), Match(petstore.EventFilter{}))
	if late.From != 21 {
		t.Fatalf("a later subscription's From = %d, want 21", late.From)
	}
}

func TestHubDropsASlowSubscriber(t *testing.T) {
	f := &memFeed{}
	h := newHub(t, f, 2)
	slow, _ := h.Subscribe(context.Background(), Match(petstore.EventFilter{}))
	for range 3 {
		f.add(petstore.OrderPlaced)
	}
	h.Wake()
	// Not read meanwhile: the third message finds the buffer of 2 full.
	for deadline := time.Now().Add(5 * time.Second); h.Subscribers() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow subscriber was not dropped")
		}
	}
	n := 0
	for range slow.C {
		n++
	}
	if !errors.Is(slow.Reason(), ErrSlow) || n != 2 {
		t.Fatalf("ended after %d messages with %v, want the 2 it had room for and ErrSlow", n, slow.Reason())
	}
}

func TestHubCloseEndsSubscriptions(t *testing.T) {
	h := newHub(t, &memFeed{}, 4)
	s, _ := h.Subscribe(context.Background(), Match(petstore.EventFilter{}))
	h.Close()
	if _, ok := <-s.C; ok || !errors.Is(s.Reason(), ErrClosed) {
		t.Fatalf("after Close: %v", s.Reason())
	}
	if _, err := h.Subscribe(context.Background(), Match(petstore.EventFilter{})); !errors.Is(err, ErrClosed) {
		t.Fatalf("Subscribe after Close: %v", err)
	}
}
