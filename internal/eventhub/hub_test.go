package eventhub

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

// countingFeed counts the reads of a memFeed.
type countingFeed struct {
	*memFeed
	reads atomic.Int64
}

func (f *countingFeed) Events(ctx context.Context, filter petstore.EventFilter, p petstore.Page) ([]petstore.Event, error) {
	f.reads.Add(1)
	return f.memFeed.Events(ctx, filter, p)
}

// With no subscriber the reader reads nothing, however often it is woken or polls;
// the next subscription starts at the feed's end, without reading (or encoding) the
// events committed meanwhile, and gets the ones after it.
func TestAnIdleHubReadsNothingAndStartsAgainFromTheEnd(t *testing.T) {
	f := &countingFeed{memFeed: &memFeed{}}
	var encoded atomic.Int64
	h := New(Options{Feed: f, Poll: time.Millisecond, Buffer: 16,
		Encode: func(petstore.Event) ([]byte, error) { encoded.Add(1); return []byte(`{}`), nil }})
	t.Cleanup(h.Close)
	ctx := context.Background()

	first, err := h.Subscribe(ctx, Match(petstore.EventFilter{}))
	if err != nil {
		t.Fatal(err)
	}
	first.Cancel()
	idleWakes := func() int {
		h.readMu.Lock()
		defer h.readMu.Unlock()
		return h.idleWakes
	}
	// Wait for one idle wake: from then on the reader knows it has no subscriber.
	for deadline := time.Now().Add(5 * time.Second); idleWakes() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reader never woke")
		}
	}
	reads := f.reads.Load()
	for range 5 {
		f.add(petstore.OrderPlaced)
	}
	wakes := idleWakes()
	for deadline := time.Now().Add(5 * time.Second); idleWakes() < wakes+20; time.Sleep(time.Millisecond) {
		h.Wake()
		if time.Now().After(deadline) {
			t.Fatal("the reader did not wake 20 times")
		}
	}
	if got := f.reads.Load(); got != reads {
		t.Fatalf("with no subscriber the hub read the feed %d times over %d wakes", got-reads, idleWakes()-wakes)
	}
	if encoded.Load() != 0 {
		t.Fatalf("with no subscriber the hub encoded %d events", encoded.Load())
	}

	again, err := h.Subscribe(ctx, Match(petstore.EventFilter{}))
	if err != nil {
		t.Fatal(err)
	}
	if again.From != 15 {
		t.Fatalf("From = %d, want the feed's end, 15", again.From)
	}
	if encoded.Load() != 0 {
		t.Fatalf("starting again encoded %d events it had missed", encoded.Load())
	}
	f.add(petstore.InventoryUpdated)
	h.Wake()
	if m := receive(t, again); m.Seq != 18 {
		t.Fatalf("the new subscriber got %d first, want the event after it came, 18", m.Seq)
	}
}
