// Package eventhub is the live side of the event feed: one reader per process that
// reads the feed's new events once, when woken after a commit of this process and
// each second for the commits of others, and hands each to every subscriber whose
// filter takes it. The HTTP layer's event stream (GET /events/stream) is its only
// user; subscribers cost no database work per event, only a channel send.
package eventhub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Feed is what the hub reads: the feed of GET /events (petstore.Store.Events). Reading
// through the feed's own query is what keeps the live stream from skipping an event
// that commits late: the feed shows an event only once every event before it is
// committed (the PostgreSQL store's snapshot horizon), and the hub's cursor follows it.
type Feed interface {
	Events(ctx context.Context, f petstore.EventFilter, p petstore.Page) ([]petstore.Event, error)
}

// Options configure a Hub. Zero fields take their defaults.
type Options struct {
	Feed Feed
	// Encode renders an event as the API shows it (httpapi.EventEncoder): the data
	// line of its message.
	Encode func(petstore.Event) ([]byte, error)
	// Poll is how often the hub reads the feed unwoken, for other processes'
	// commits (DefaultPoll).
	Poll time.Duration
	// Buffer is how many messages a subscriber may fall behind before it is dropped
	// (DefaultBuffer).
	Buffer int
	Logger *slog.Logger
}

// The defaults of Options.
const (
	DefaultPoll   = time.Second
	DefaultBuffer = 256
)

// pageSize is how many events one read of the feed takes; a read goes on to the next
// page while pages are full.
const pageSize = 100

// Message is one event as the stream sends it: its place in the feed, its type (for
// the subscribers' filters) and its whole Server-Sent Events message, made once for
// every subscriber.
type Message struct {
	Seq   int64
	Type  petstore.EventType
	Frame []byte
}

// Frame is the Server-Sent Events message of an event whose JSON is data.
func Frame(e petstore.Event, data []byte) []byte {
	var b strings.Builder
	b.Grow(len(data) + len(e.ID) + len(e.Type) + 24)
	b.WriteString("id: ")
	b.WriteString(e.ID)
	b.WriteString("\nevent: ")
	b.WriteString(string(e.Type))
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
	return []byte(b.String())
}

// Hub is the process's one reader of new events. It starts on the first
// subscription and runs until Close, reading only while someone subscribes: with no
// subscriber it reads nothing, and the next subscription starts from the feed's end.
type Hub struct {
	o    Options
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	// readMu makes reading the feed, and a subscription's catching up with it and
	// joining, one at a time: the reader never reads between a subscriber's
	// catching up and its joining. Taken before mu.
	readMu sync.Mutex

	mu   sync.Mutex // guards what follows
	subs map[*Subscription]struct{}
	// cursor is the last event handed out; it is not kept up while idle.
	cursor int64
	// idle is set when the reader skipped a read for want of subscribers (and at
	// first, before any): cursor is behind the feed, and a new subscriber finds the
	// feed's end instead of reading (and encoding) the events it missed.
	idle    bool
	closed  bool
	running bool

	// idleWakes counts the wakes and polls on which the reader read nothing for want
	// of subscribers (guarded by readMu; the tests read it).
	idleWakes int
}

// New returns a hub over o.Feed; it reads nothing until the first Subscribe.
func New(o Options) *Hub {
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultBuffer
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Hub{o: o, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		subs: map[*Subscription]struct{}{}, idle: true}
}

// Wake tells the hub that events were committed; it never blocks. The stores call it
// after each commit that wrote events (Options.WakeFeed).
func (h *Hub) Wake() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// ErrClosed is the error of a subscription to a closed hub.
var ErrClosed = errors.New("eventhub: closed")

// Subscription is one subscriber's share of the hub: C delivers the messages its
// filter takes, in feed order, until the subscriber falls Buffer messages behind, the
// hub closes, or Cancel; then C is closed, and Reason says why.
type Subscription struct {
	C <-chan *Message
	// From is the hub's cursor when the subscription began: every later event comes
	// through C; the subscriber reads the feed itself for those up to From that it
	// wants (a resume), and drops from C what it has seen by Seq.
	From int64

	h      *Hub
	ch     chan *Message
	match  func(petstore.EventType) bool
	reason error
}

// ErrSlow is the Reason of a subscription dropped for falling behind.
var ErrSlow = errors.New("eventhub: the subscriber fell behind")

// Reason says why C was closed: ErrSlow, ErrClosed, or nil after Cancel.
func (s *Subscription) Reason() error {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	return s.reason
}

// Cancel ends the subscription; C is closed if it was not.
func (s *Subscription) Cancel() {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if _, ok := s.h.subs[s]; ok {
		delete(s.h.subs, s)
		close(s.ch)
	}
}

// Subscribe adds a subscriber that takes the events match accepts, from the events
// committed after it (as far as the feed shows them). The first subscription starts
// the reader; one that finds the hub idle finds the feed's end (ctx bounds that read).
func (h *Hub) Subscribe(ctx context.Context, match func(petstore.EventType) bool) (*Subscription, error) {
	h.readMu.Lock()
	defer h.readMu.Unlock()
	if err := h.catchUp(ctx); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if !h.running {
		h.running = true
		go h.run()
	}
	ch := make(chan *Message, h.o.Buffer)
	s := &Subscription{C: ch, From: h.cursor, h: h, ch: ch, match: match}
	h.subs[s] = struct{}{}
	return s, nil
}

// catchUp brings the cursor to the feed's end for a new subscriber, so that it gets
// the events committed after it came, not those committed before that the reader had
// not read yet (it reads on a wake, or at its next poll). While others subscribe,
// that is a read like the reader's, handing those events to them; while idle, the
// feed's end is found without reading the events between. The caller holds readMu.
func (h *Hub) catchUp(ctx context.Context) error {
	h.mu.Lock()
	idle := h.idle && len(h.subs) == 0
	h.mu.Unlock()
	if !idle {
		if err := h.read(ctx); err != nil {
			return fmt.Errorf("eventhub: read new events: %w", err)
		}
		return nil
	}
	// A failure leaves the hub idle; the next subscription tries again.
	end, err := lastSeq(ctx, h.o.Feed)
	if err != nil {
		return fmt.Errorf("eventhub: find the feed's end: %w", err)
	}
	h.mu.Lock()
	h.cursor, h.idle = end, false
	h.mu.Unlock()
	return nil
}

// Close stops the reader and ends every subscription (Reason ErrClosed); it waits
// for the reader to stop.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	running := h.running
	for s := range h.subs {
		delete(h.subs, s)
		s.reason = ErrClosed
		close(s.ch)
	}
	close(h.stop)
	h.mu.Unlock()
	if running {
		<-h.done
	}
}

// Subscribers is how many subscriptions are open.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

func (h *Hub) run() {
	defer close(h.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-h.stop
		cancel()
	}()
	t := time.NewTicker(h.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.wake:
		case <-t.C:
		}
		if err := h.readIfSubscribed(ctx); err != nil && ctx.Err() == nil {
			h.o.Logger.Warn("read new events for the event streams; trying again at the next poll", "err", err)
		}
	}
}

// readIfSubscribed is the reader's read, skipped while nobody subscribes: the hub is
// then idle, and the next subscription starts from the feed's end.
func (h *Hub) readIfSubscribed(ctx context.Context) error {
	h.readMu.Lock()
	defer h.readMu.Unlock()
	h.mu.Lock()
	idle := len(h.subs) == 0
	if idle {
		h.idle = true
	}
	h.mu.Unlock()
	if idle {
		h.idleWakes++
		return nil
	}
	return h.read(ctx)
}

// read hands out every event after the cursor, a page at a time. The caller holds
// readMu: one read at a time (the reader's, or a new subscription's).
func (h *Hub) read(ctx context.Context) error {
	for {
		h.mu.Lock()
		after := h.cursor
		h.mu.Unlock()
		events, err := h.o.Feed.Events(ctx, petstore.EventFilter{}, petstore.Page{After: after, Limit: pageSize})
		if err != nil {
			return err
		}
		msgs := make([]*Message, 0, len(events))
		for _, e := range events {
			data, err := h.o.Encode(e)
			if err != nil {
				return err
			}
			msgs = append(msgs, &Message{Seq: e.Seq, Type: e.Type, Frame: Frame(e, data)})
		}
		h.publish(msgs)
		if len(events) < pageSize {
			return nil
		}
	}
}

// publish hands msgs to every subscriber that takes them and moves the cursor past
// them, in one hold of the lock: a subscription made before gets all of them, one
// made after none (its From is past them). A subscriber whose buffer is full is
// dropped: memory stays bounded, and it resumes from the last event it sent.
func (h *Hub) publish(msgs []*Message) {
	if len(msgs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for s := range h.subs {
		for _, m := range msgs {
			if !s.match(m.Type) {
				continue
			}
			select {
			case s.ch <- m:
			default:
				delete(h.subs, s)
				s.reason = ErrSlow
				close(s.ch)
			}
			if s.reason != nil {
				break
			}
		}
	}
	h.cursor = msgs[len(msgs)-1].Seq
}

// lastSeq finds the feed's last position by bisection over the feed itself (a page
// of one after a position tells whether any event follows it): the one reading of
// positions the stores offer, done once per process.
func lastSeq(ctx context.Context, f Feed) (int64, error) {
	has := func(after int64) (bool, error) {
		e, err := f.Events(ctx, petstore.EventFilter{}, petstore.Page{After: after, Limit: 1})
		return len(e) > 0, err
	}
	ok, err := has(0)
	if err != nil || !ok {
		return 0, err
	}
	hi := int64(1)
	for {
		if ok, err = has(hi); err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		hi *= 2
	}
	lo := int64(0) // an event follows lo; none follows hi
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok, err = has(mid); err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// Match is the filter of a subscriber with the feed filter f (petstore.Principal.
// FeedFilter): the events its GET /events would list.
func Match(f petstore.EventFilter) func(petstore.EventType) bool {
	switch {
	case f.Type != "":
		return func(t petstore.EventType) bool { return t == f.Type }
	case f.Types == nil:
		return func(petstore.EventType) bool { return true }
	}
	types := append([]petstore.EventType{}, f.Types...)
	return func(t petstore.EventType) bool {
		for _, u := range types {
			if u == t {
				return true
			}
		}
		return false
	}
}
