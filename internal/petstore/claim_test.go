package petstore

import (
	"fmt"
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
		if rounds > claimRounds {
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

// endpoint is an enabled endpoint at cursor 0 with the default window.
func endpoint(id int64, events ...int64) queueEndpoint {
	return queueEndpoint{ClaimEndpoint: ClaimEndpoint{ID: id, Enabled: true, Window: DefaultDeliveryWindow, Events: MaskAll}, events: events}
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
		{name: "a third round loads all that an endpoint still short may take", o: o(12, 32), head: 50,
			eps:   []queueEndpoint{endpoint(1, 1), endpoint(2, 1, 2, 3, 4), endpoint(3, seqs(1, 50)...)},
			want:  []string{"1:+1", "2:+1", "2:+2", "2:+3", "2:+4", "3:+1", "3:+2", "3:+3", "3:+4", "3:+5", "3:+6", "3:+7"},
			moves: []CursorMove{{1, 50, 32}, {2, 50, 32}, {3, 7, 32}}, rounds: 3},
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
		if got := ClaimWindow(tc.asked); got != tc.want {
			t.Errorf("ClaimWindow(%d) = %d, want %d", tc.asked, got, tc.want)
		}
	}
}
