package petstore

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// queueEndpoint is an endpoint of a simulated store: its row, its due retries (by
// how long due) and the seqs of the feed's events it subscribes to.
type queueEndpoint struct {
	ClaimEndpoint
	retries []int64
	events  []int64
}

// simulate runs a claim against the endpoints as a store would (ask, load, offer),
// and returns its plan, how many rounds it asked and how many rows it loaded.
func simulate(t *testing.T, o ClaimOptions, head int64, eps []queueEndpoint, turn int) (ClaimPlan, int, int) {
	t.Helper()
	rows := make([]ClaimEndpoint, len(eps))
	byID := map[int64]queueEndpoint{}
	for i, e := range eps {
		e.Due = len(e.retries) > 0
		rows[i], byID[e.ID] = e.ClaimEndpoint, e
	}
	c := PlanClaim(o, head, rows, turn)
	rounds, loaded := 0, 0
	for asks := c.Asks(); len(asks) > 0; asks = c.Asks() {
		rounds++
		if rounds > len(eps)+1 {
			t.Fatalf("round %d asked %v", rounds, asks)
		}
		var loads []ClaimLoad
		for _, a := range asks {
			e := byID[a.WebhookID]
			l := ClaimLoad{Ask: a}
			for _, s := range e.retries[:min(a.Retries, len(e.retries))] {
				l.Retries = append(l.Retries, QueueItem{Seq: s})
			}
			for _, s := range e.events {
				if a.Unsent > len(l.Unsent) && s > a.After && s <= a.Head {
					l.Unsent = append(l.Unsent, QueueItem{Seq: s})
				}
			}
			loaded += len(l.Retries) + len(l.Unsent)
			loads = append(loads, l)
		}
		c.Offer(loads)
	}
	return c.Plan(), rounds, loaded
}

// endpoint is an enabled endpoint at cursor 0 with a stored window of 32, which the
// cases' claims (mostly of window 32) leave as it is.
func endpoint(id int64, events ...int64) queueEndpoint {
	return queueEndpoint{ClaimEndpoint: ClaimEndpoint{ID: id, Enabled: true, Window: 32, Events: MaskAll}, events: events}
}

func seqs(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// taken counts the leases of each endpoint, and lists them as "id:seq" (+ for a
// fan-out, r for a retry).
func taken(p ClaimPlan) (map[int64]int, []string) {
	per := map[int64]int{}
	var out []string
	for _, l := range p.Leases {
		per[l.WebhookID]++
		kind := "r"
		if l.New {
			kind = "+"
		}
		out = append(out, fmt.Sprintf("%d:%s%d", l.WebhookID, kind, l.Item.Seq))
	}
	return per, out
}

func TestPlanClaim(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	o := func(max, window int) ClaimOptions {
		return ClaimOptions{Now: now, Lease: time.Minute, Max: max, Window: window}
	}
	answered := func(o ClaimOptions, webhookID int64, n int) ClaimOptions {
		o.Answered = map[int64]int{webhookID: n}
		return o
	}
	withRetries := func(e queueEndpoint, rs ...int64) queueEndpoint { e.retries = rs; return e }
	disabled := func(e queueEndpoint) queueEndpoint { e.Enabled = false; return e }
	inFlight := func(e queueEndpoint, n int) queueEndpoint { e.InFlight = n; return e }
	at := func(e queueEndpoint, cursor int64) queueEndpoint { e.Cursor = cursor; return e }
	cases := []struct {
		name   string
		o      ClaimOptions
		head   int64
		eps    []queueEndpoint
		turn   int
		want   []string
		moves  []CursorMove
		rounds int
	}{
		{name: "max shared one each among endpoints in turn", o: o(3, 32), head: 3,
			eps:  []queueEndpoint{endpoint(1, 1, 2, 3), endpoint(2, 1, 2, 3), endpoint(3, 1, 2, 3)},
			want: []string{"1:+1", "2:+1", "3:+1"}, rounds: 1,
			moves: []CursorMove{{1, 1, 32}, {2, 1, 32}, {3, 1, 32}}},
		{name: "the turn picks who is served first", o: o(1, 32), head: 3, turn: 4,
			eps:  []queueEndpoint{endpoint(1, 1), endpoint(2, 2), endpoint(3, 3)},
			want: []string{"2:+2"}, rounds: 1, moves: []CursorMove{{2, 2, 32}}},
		{name: "an endpoint with little work leaves its share to the others, evenly", o: o(12, 256), head: 100,
			eps:   []queueEndpoint{endpoint(1, 1), endpoint(2, seqs(1, 100)...), endpoint(3, seqs(1, 100)...)},
			want:  []string{"1:+1", "2:+1", "2:+2", "2:+3", "2:+4", "2:+5", "2:+6", "3:+1", "3:+2", "3:+3", "3:+4", "3:+5"},
			moves: []CursorMove{{1, 100, 32}, {2, 6, 32}, {3, 5, 32}}, rounds: 2},
		{name: "an endpoint is given its window less what it has in flight", o: o(10, 3), head: 9,
			eps:  []queueEndpoint{inFlight(endpoint(1, seqs(1, 9)...), 1)},
			want: []string{"1:+1", "1:+2"}, moves: []CursorMove{{1, 2, 3}}, rounds: 1},
		{name: "answered attempts waiting for their record leave their places in the window", o: answered(o(10, 3), 1, 2), head: 9,
			eps:  []queueEndpoint{inFlight(endpoint(1, seqs(1, 9)...), 3)},
			want: []string{"1:+1", "1:+2"}, moves: []CursorMove{{1, 2, 3}}, rounds: 1},
		{name: "another endpoint's answered attempts leave this one's window full", o: answered(o(10, 3), 2, 3), head: 9,
			eps:  []queueEndpoint{inFlight(endpoint(1, seqs(1, 9)...), 3)},
			want: nil, moves: []CursorMove{{1, 0, 3}}, rounds: 0},
		{name: "a full window takes nothing and moves nothing", o: o(10, 32), head: 9,
			eps:  []queueEndpoint{inFlight(endpoint(1, seqs(1, 9)...), 32)},
			want: nil, moves: nil, rounds: 0},
		{name: "due retries come before the events after the cursor", o: o(10, 4), head: 20,
			eps:  []queueEndpoint{withRetries(at(endpoint(1, 11, 12, 13), 10), 3, 5)},
			want: []string{"1:+11", "1:+12", "1:r3", "1:r5"}, moves: []CursorMove{{1, 12, 4}}, rounds: 1},
		{name: "a disabled endpoint is sent its due retries (tests) and keeps its cursor", o: o(10, 32), head: 20,
			eps:  []queueEndpoint{withRetries(at(disabled(endpoint(1, 11)), 10), 7)},
			want: []string{"1:r7"}, rounds: 1},
		{name: "a disabled endpoint without retries is not served", o: o(10, 32), head: 20,
			eps: []queueEndpoint{disabled(endpoint(1, 11))}},
		{name: "the cursor moves to the head past events it does not subscribe to", o: o(10, 32), head: 20,
			eps:  []queueEndpoint{at(endpoint(1), 10), at(endpoint(2, 15), 10)},
			want: []string{"2:+15"}, moves: []CursorMove{{1, 20, 32}, {2, 20, 32}}, rounds: 1},
		{name: "a cursor at the head is left", o: o(10, 32), head: 20,
			eps: []queueEndpoint{at(endpoint(1), 20)}},
		{name: "the window the claim applies is stored when it is narrower", o: o(10, 1), head: 5,
			eps:  []queueEndpoint{endpoint(1, 1, 2)},
			want: []string{"1:+1"}, moves: []CursorMove{{1, 1, 1}}, rounds: 1},
		{name: "nothing is asked of a claim of none", o: o(0, 32), head: 5,
			eps: []queueEndpoint{endpoint(1, 1, 2)}},
		{name: "a second round shares what a short first left", o: o(9, 32), head: 50,
			eps:   []queueEndpoint{endpoint(1, 1), endpoint(2, 1, 2, 3, 4), endpoint(3, seqs(1, 50)...)},
			want:  []string{"1:+1", "2:+1", "2:+2", "2:+3", "2:+4", "3:+1", "3:+2", "3:+3", "3:+4"},
			moves: []CursorMove{{1, 50, 32}, {2, 4, 32}, {3, 4, 32}}, rounds: 2},
		{name: "a third round shares what a short second left", o: o(12, 32), head: 50,
			eps:   []queueEndpoint{endpoint(1, 1), endpoint(2, 1, 2, 3, 4), endpoint(3, seqs(1, 50)...)},
			want:  []string{"1:+1", "2:+1", "2:+2", "2:+3", "2:+4", "3:+1", "3:+2", "3:+3", "3:+4", "3:+5", "3:+6", "3:+7"},
			moves: []CursorMove{{1, 50, 32}, {2, 50, 32}, {3, 7, 32}}, rounds: 3},
		// Endpoint 2 has nothing to send, so endpoint 1's share grows from one to two
		// after the first round, which loaded one retry and one event of it: the
		// second retry is still due, and comes before the event.
		{name: "due retries come first when a later round widens the share", o: o(2, 32), head: 20,
			eps:  []queueEndpoint{withRetries(at(endpoint(1, 11), 10), 3, 5), at(endpoint(2), 10)},
			want: []string{"1:r3", "1:r5"}, moves: []CursorMove{{2, 20, 32}}, rounds: 2},
		// The first three endpoints served have nothing to send: a claim of one still
		// finds the fourth's event, a round each, rather than none while it is due.
		{name: "a claim is full while that much is due, however many endpoints have nothing", o: o(1, 32), head: 20,
			eps:   []queueEndpoint{at(endpoint(1), 10), at(endpoint(2), 10), at(endpoint(3), 10), at(endpoint(4, 15), 10)},
			want:  []string{"4:+15"},
			moves: []CursorMove{{1, 20, 32}, {2, 20, 32}, {3, 20, 32}, {4, 15, 32}}, rounds: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, rounds, _ := simulate(t, tc.o, tc.head, tc.eps, tc.turn)
			_, got := taken(p)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("leased %v, want %v", got, tc.want)
			}
			if !slices.Equal(p.Moves, tc.moves) {
				t.Errorf("moved %v, want %v", p.Moves, tc.moves)
			}
			if rounds != tc.rounds {
				t.Errorf("asked %d rounds, want %d", rounds, tc.rounds)
			}
			if want := now.Add(time.Minute); !p.Until.Equal(want) {
				t.Errorf("leases until %v, want %v", p.Until, want)
			}
		})
	}
}

// TestPlanClaimReadsAboutMax checks that a claim reads about o.Max candidates however
// many endpoints have work, and takes a full batch while that much is due.
func TestPlanClaimReadsAboutMax(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var eps []queueEndpoint
	for id := range int64(100) {
		e := endpoint(id+1, seqs(1, 1500)...)
		e.Window = MaxDeliveryWindow
		if id%3 == 0 {
			e.events = seqs(1, 2) // a third have little work
		}
		eps = append(eps, e)
	}
	p, rounds, loaded := simulate(t, ClaimOptions{Now: now, Max: 512, Window: MaxDeliveryWindow}, 1500, eps, 7)
	if len(p.Leases) != 512 {
		t.Errorf("took %d, want 512", len(p.Leases))
	}
	if loaded > 2*512 || rounds > 2 {
		t.Errorf("loaded %d candidates in %d rounds, want at most 1,024 in 2", loaded, rounds)
	}
	per, _ := taken(p)
	lo, hi := 1<<30, 0
	for id, n := range per {
		if id%3 == 1 {
			continue // the short ones
		}
		lo, hi = min(lo, n), max(hi, n)
	}
	if hi-lo > 1 {
		t.Errorf("the endpoints with work were given from %d to %d each, want shares within one", lo, hi)
	}
}

// TestPlanClaimAmongIdleEndpoints checks that a small claim is full when most
// endpoints have nothing to send (events after their cursors that they do not
// subscribe to), reading about its size.
func TestPlanClaimAmongIdleEndpoints(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var eps []queueEndpoint
	for id := range int64(100) {
		e := endpoint(id + 1)
		if id%20 == 19 {
			e.events = seqs(1, 1500)
		}
		eps = append(eps, e)
	}
	p, rounds, loaded := simulate(t, ClaimOptions{Now: now, Max: 4, Window: 32}, 1500, eps, 0)
	if len(p.Leases) != 4 || loaded > 8 {
		t.Errorf("took %d, loading %d in %d rounds; want 4, loading at most 8", len(p.Leases), loaded, rounds)
	}
}

func TestPlanClaimRecount(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := PlanClaim(ClaimOptions{Now: now, Max: 10, Window: 4}, 9, []ClaimEndpoint{{ID: 1, Enabled: true, Window: 4}}, 0)
	asks := c.Asks()
	if len(asks) != 1 || asks[0].Unsent != 4 {
		t.Fatalf("asked %v, want 4 events of endpoint 1", asks)
	}
	c.Recount(map[int64]int{1: 3})
	c.Offer([]ClaimLoad{{Ask: asks[0], Unsent: []QueueItem{{Seq: 1}, {Seq: 2}, {Seq: 3}, {Seq: 4}}}})
	if more := c.Asks(); len(more) != 0 {
		t.Errorf("asked %v more", more)
	}
	p := c.Plan()
	if _, got := taken(p); !slices.Equal(got, []string{"1:+1"}) || !slices.Equal(p.Moves, []CursorMove{{1, 1, 4}}) {
		t.Errorf("leased %v, moved %v; want one, the room left once 3 in flight were counted again", got, p.Moves)
	}
}

func TestClaimWindow(t *testing.T) {
	for _, tc := range []struct{ asked, want int }{{-1, 1}, {0, 1}, {1, 1}, {32, 32}, {MaxDeliveryWindow + 1, MaxDeliveryWindow}} {
		if got := claimWindow(tc.asked); got != tc.want {
			t.Errorf("claimWindow(%d) = %d, want %d", tc.asked, got, tc.want)
		}
	}
}

// TestPlanClaimProperties plans claims of random queues and checks what every plan
// must hold, whatever the endpoints turn out to have once asked: an endpoint gets at
// most its room; its due retries before any event; its cursor moves past exactly the
// events it was given, so that none is skipped or given twice; the claim is full
// while that much is due; shares are max-min fair (one short of what it could take
// is never more than one behind another); and it reads about o.Max candidates.
func TestPlanClaimProperties(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewSource(1))
	for range 10000 {
		o := ClaimOptions{Now: now, Max: 1 + r.Intn(20), Window: 1 + r.Intn(12)}
		head, eps := randomQueue(r)
		p, _, loaded := simulate(t, o, head, eps, r.Intn(10))
		// Each candidate is read about once: an event may be read beside the retries
		// that fill a share, and retries again as the share grows; and the first
		// round reads one of each endpoint at least (a retry and an event).
		if loaded > 3*o.Max+2*len(eps) {
			t.Fatalf("loaded %d for a claim of %d\nwindow %d, head %d, endpoints %+v", loaded, o.Max, o.Window, head, eps)
		}
		if err := checkClaim(o, eps, p); err != nil {
			t.Fatalf("%v\nmax %d, window %d, head %d, endpoints %+v", err, o.Max, o.Window, head, eps)
		}
	}
}

// randomQueue is a feed's head and up to six endpoints, some disabled, some with due
// retries, each subscribed to some of the events after its cursor.
func randomQueue(r *rand.Rand) (int64, []queueEndpoint) {
	head := int64(1 + r.Intn(40))
	var eps []queueEndpoint
	for i := range 1 + r.Intn(6) {
		e := endpoint(int64(i + 1))
		e.Window, e.InFlight = 1+r.Intn(12), r.Intn(4)
		e.Cursor, e.Enabled = int64(r.Intn(int(head)+1)), r.Intn(5) != 0
		for s := e.Cursor + 1; s <= head && e.Enabled; s++ {
			if r.Intn(3) != 0 {
				e.events = append(e.events, s)
			}
		}
		for k := range r.Intn(8) {
			e.retries = append(e.retries, int64(1000+k))
		}
		eps = append(eps, e)
	}
	return head, eps
}

// checkClaim checks plan p of a claim o of the endpoints eps (see
// TestPlanClaimProperties).
func checkClaim(o ClaimOptions, eps []queueEndpoint, p ClaimPlan) error {
	per, _ := taken(p)
	caps := map[int64]int{}
	total, due := 0, 0
	for _, e := range eps {
		room := max(min(e.Window, claimWindow(o.Window))-e.InFlight, 0)
		caps[e.ID] = min(room, len(e.retries)+len(e.events))
		total, due = total+per[e.ID], due+caps[e.ID]
		if per[e.ID] > room {
			return fmt.Errorf("endpoint %d given %d, room %d", e.ID, per[e.ID], room)
		}
		if err := checkEndpointClaim(e, p); err != nil {
			return err
		}
	}
	if total != min(o.Max, due) {
		return fmt.Errorf("took %d, want %d", total, min(o.Max, due))
	}
	for _, a := range eps {
		for _, b := range eps {
			if per[a.ID] < caps[a.ID] && per[b.ID] > per[a.ID]+1 {
				return fmt.Errorf("endpoint %d given %d of %d while %d was given %d", a.ID, per[a.ID], caps[a.ID], b.ID, per[b.ID])
			}
		}
	}
	return nil
}

// checkEndpointClaim checks e's leases and cursor in plan p: its retries first, and
// its cursor past exactly the events it was given.
func checkEndpointClaim(e queueEndpoint, p ClaimPlan) error {
	var retries, events []int64
	for _, l := range p.Leases {
		switch {
		case l.WebhookID != e.ID:
		case l.New:
			events = append(events, l.Item.Seq)
		default:
			retries = append(retries, l.Item.Seq)
		}
	}
	if len(events) > 0 && len(retries) < len(e.retries) {
		return fmt.Errorf("endpoint %d given events %v with %d of its %d due retries", e.ID, events, len(retries), len(e.retries))
	}
	cursor := e.Cursor
	for _, m := range p.Moves {
		if m.WebhookID == e.ID {
			cursor = m.Cursor
		}
	}
	var passed []int64
	for _, s := range e.events {
		if s <= cursor {
			passed = append(passed, s)
		}
	}
	if !slices.Equal(events, passed) {
		return fmt.Errorf("endpoint %d given events %v, its cursor moved from %d to %d past %v", e.ID, events, e.Cursor, cursor, passed)
	}
	return nil
}

// TestTakeTurns checks the dealing by whole turns against dealing one at a time.
func TestTakeTurns(t *testing.T) {
	oneAtATime := func(supply []int, total int) []int {
		got := make([]int, len(supply))
		for dealt, more := 0, true; dealt < total && more; {
			more = false
			for i := range supply {
				if dealt < total && got[i] < supply[i] {
					got[i]++
					dealt, more = dealt+1, true
				}
			}
		}
		return got
	}
	r := rand.New(rand.NewSource(1))
	for range 20000 {
		supply := make([]int, r.Intn(8))
		for i := range supply {
			supply[i] = r.Intn(12)
		}
		total := r.Intn(40) - 2
		if got, want := takeTurns(supply, total), oneAtATime(supply, total); !slices.Equal(got, want) {
			t.Fatalf("takeTurns(%v, %d) = %v, want %v", supply, total, got, want)
		}
	}
}
