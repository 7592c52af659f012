package petstore

import (
	"cmp"
	"slices"
	"time"
)

// A claim of deliveries is planned the way a batch of orders is (PlanOrders): the
// store loads, in one transaction, the endpoints that have work and as many of their
// candidates (due retries, events after the cursor) as the claim asks for; the Claim
// decides what is taken, how far each cursor moves and until when the leases run;
// the store writes that and commits. Every decision is made here; the store only loads and
// saves, with the same steps on SQLite and PostgreSQL.
//
// Fairness is max-min: each endpoint with work is given one delivery in turn,
// starting from a different endpoint each claim, until o.Max are taken or none can
// take more (its window is full or it has nothing more). An endpoint with little
// work leaves its share to the others, spread evenly rather than to whichever comes
// first.

// claimWindow is the window a claim applies to every endpoint: what the dispatcher
// asks (ClaimOptions.Window), at least 1 and at most MaxDeliveryWindow.
func claimWindow(asked int) int { return min(max(asked, 1), MaxDeliveryWindow) }

// ClaimEndpoint is an endpoint as a claim loads it.
type ClaimEndpoint struct {
	ID      int64
	Events  EventMask
	Enabled bool
	// Cursor is where the endpoint stands in the feed: the events after it are not
	// yet fanned out to it.
	Cursor int64
	// Window is its window as stored; InFlight counts its deliveries leased now.
	Window   int
	InFlight int
	// Due says that one of its pending deliveries is due and not leased.
	Due bool
}

// QueueItem is a delivery a claim may take: a due retry, or an event after the
// endpoint's cursor (Seq is the event's, which is the delivery's id).
type QueueItem struct {
	Seq       int64
	CreatedAt time.Time
}

// ClaimAsk asks the store for candidates of one endpoint.
type ClaimAsk struct {
	WebhookID int64
	// Retries, when positive, asks for the endpoint's first Retries due retries not
	// leased, the longest due first: all of them again, the answer replacing the last.
	Retries int
	// Unsent, when positive, asks for the first Unsent events after After, up to
	// Head, of the types of Events (the endpoint's subscription), in feed order.
	Unsent      int
	After, Head int64
	Events      EventMask
}

// ClaimLoad is the store's answer to an ask.
type ClaimLoad struct {
	Ask     ClaimAsk
	Retries []QueueItem
	Unsent  []QueueItem
}

// CursorMove is an endpoint's cursor and window after a claim.
type CursorMove struct {
	WebhookID int64
	Cursor    int64
	Window    int
}

// Lease is a delivery a claim takes; New says that it is an event fanned out now,
// which the store gives a row (a retry has one).
type Lease struct {
	WebhookID int64
	Item      QueueItem
	New       bool
}

// ClaimPlan is what a claim writes: the leases, until Until, and the cursors and
// windows that changed.
type ClaimPlan struct {
	Until  time.Time
	Leases []Lease
	Moves  []CursorMove
}

// A claim asks in rounds, each endpoint for its fair share only (and, in the first
// round, for one at least), so that it reads about o.Max candidates, or one per
// endpoint with work when that is more (the claim reads a row per such endpoint
// anyway): most claims need one round, and another whenever some endpoint turned out
// to have less than its share, which the others then share. It asks until no
// endpoint is short of its share, so that a claim is full while that much is due: a
// round that leaves a short endpoint makes at least one endpoint complete (all its
// candidates known), so a claim asks at most one round more than it has endpoints
// (and the recount's). Since the first round asks every endpoint, those with nothing
// to send are known after it, and the rounds after it are few.

// Claim is a claim being planned: PlanClaim starts it, the store answers its Asks
// (Offer) until it has none, and Plan decides.
type Claim struct {
	max   int
	until time.Time
	head  int64
	// rounds counts the rounds asked; maxRounds bounds them (see above), in case a
	// store left an ask unanswered.
	rounds int
	// eps are the endpoints with work, by id, in the order they are served.
	eps []*claimant
	// answered is ClaimOptions.Answered: leased deliveries that take no place in
	// their endpoint's window.
	answered map[int64]int
	// done says that the claim has loaded what it needs.
	done bool
}

// claimant is an endpoint with work and what the claim loaded of it.
type claimant struct {
	ClaimEndpoint
	window int
	// answered are those of its deliveries in flight (InFlight counts the leases)
	// whose attempts have ended, waiting for their record (ClaimOptions.Answered).
	answered int
	// retries and unsent are its candidates loaded so far; allRetries and allUnsent
	// say that there are no more.
	retries, unsent       []QueueItem
	allRetries, allUnsent bool
}

// PlanClaim starts a claim at o.Now of the endpoints eps (every endpoint, or those
// with work), head being the end of the feed that cursors may pass. turn rotates the
// endpoint served first.
func PlanClaim(o ClaimOptions, head int64, eps []ClaimEndpoint, turn int) *Claim {
	c := &Claim{max: max(o.Max, 0), until: o.Now.Add(o.Lease), head: head, answered: o.Answered}
	window := claimWindow(o.Window)
	for _, e := range slices.SortedFunc(slices.Values(eps), func(a, b ClaimEndpoint) int { return cmp.Compare(a.ID, b.ID) }) {
		hasUnsent := e.Enabled && e.Cursor < head
		if !e.Due && !hasUnsent {
			continue
		}
		c.eps = append(c.eps, &claimant{ClaimEndpoint: e, window: min(e.Window, window), answered: o.Answered[e.ID],
			allRetries: !e.Due, allUnsent: !hasUnsent})
	}
	if n := len(c.eps); n > 0 {
		k := ((turn % n) + n) % n
		c.eps = append(c.eps[k:], c.eps[:k]...)
	}
	return c
}

// Recount sets what each endpoint has in flight, counted again once the claim holds
// its endpoints (an endpoint missing from inFlight has none).
func (c *Claim) Recount(inFlight map[int64]int) {
	for _, e := range c.eps {
		e.InFlight = inFlight[e.ID]
	}
}

// room is how many more deliveries e may have in flight: its window less its leases
// whose attempts are still under way.
func (e *claimant) room() int { return max(e.window-max(e.InFlight-e.answered, 0), 0) }

func (e *claimant) loaded() int { return len(e.retries) + len(e.unsent) }

func (e *claimant) complete() bool { return e.allRetries && e.allUnsent }

// usable is how many of e's loaded candidates a plan may give it. Its due retries
// come before its events, so while more retries may be due, only the retries
// loaded are: an event given beside them would pass a retry that waits.
func (e *claimant) usable() int {
	if !e.allRetries {
		return len(e.retries)
	}
	return e.loaded()
}

// short says whether what was loaded of e may not fill a share of n.
func (e *claimant) short(n int) bool { return !e.complete() && e.usable() < n }

// supply is how many e may be given: its room, bounded by its candidates once all
// are known (or, with known, by those loaded and usable).
func (e *claimant) supply(known bool) int {
	if known || e.complete() {
		return min(e.room(), e.usable())
	}
	return e.room()
}

// shares deals c.max deliveries one at a time to each endpoint in turn, while any
// may take one more (supply), and returns how many each gets.
func (c *Claim) shares(known bool) []int {
	supply := make([]int, len(c.eps))
	for i, e := range c.eps {
		supply[i] = e.supply(known)
	}
	return takeTurns(supply, c.max)
}

// takeTurns deals total units one at a time to each of supply in turn, from the
// first, while any has more, and returns how many each gets: the max-min fair share.
// It deals whole turns at once, so that its cost does not grow with total: level is
// the most turns that every supply takes part in within total, and what is left
// goes one each, in order, to those that have more.
func takeTurns(supply []int, total int) []int {
	dealt := func(level int) int {
		n := 0
		for _, s := range supply {
			n += min(s, level)
		}
		return n
	}
	level, hi := 0, max(total, 0)
	for level < hi { // the largest level that deals at most total
		if mid := (level + hi + 1) / 2; dealt(mid) <= total {
			level = mid
		} else {
			hi = mid - 1
		}
	}
	got := make([]int, len(supply))
	left := total - dealt(level)
	for i, s := range supply {
		got[i] = min(s, level)
		if left > 0 && s > level {
			got[i]++
			left--
		}
	}
	return got
}

// Asks lists what the claim needs loaded next: for each endpoint whose fair share
// may exceed what was loaded of it, more candidates. None once the claim has what it
// needs.
func (c *Claim) Asks() []ClaimAsk {
	if c.done || c.rounds >= c.maxRounds() {
		return nil
	}
	c.rounds++
	var asks []ClaimAsk
	for i, need := range c.shares(false) {
		e := c.eps[i]
		if c.rounds == 1 && c.max > 0 && e.room() > 0 {
			// Every endpoint is asked for one at least in the first round, so that
			// the endpoints with nothing to send are known at once (and their
			// cursors move to the head) instead of one round each.
			need = max(need, 1)
		}
		if !e.short(need) {
			continue
		}
		a := ClaimAsk{WebhookID: e.ID, Events: e.Events, Head: c.head, After: e.Cursor}
		if !e.allRetries && len(e.retries) < need {
			a.Retries = need
		}
		if !e.allUnsent && len(e.unsent) < need {
			a.Unsent = need - len(e.unsent)
			if n := len(e.unsent); n > 0 {
				a.After = e.unsent[n-1].Seq
			}
		}
		asks = append(asks, a)
	}
	c.done = len(asks) == 0
	return asks
}

// maxRounds is the most rounds a claim may need: one per endpoint, which it makes
// complete, one more once none is short, and one for the recount.
func (c *Claim) maxRounds() int { return len(c.eps) + 2 }

// Offer gives the claim the store's answers to its asks.
func (c *Claim) Offer(loads []ClaimLoad) {
	for _, l := range loads {
		i := slices.IndexFunc(c.eps, func(e *claimant) bool { return e.ID == l.Ask.WebhookID })
		if i < 0 {
			continue
		}
		e := c.eps[i]
		if l.Ask.Retries > 0 {
			e.retries, e.allRetries = l.Retries, len(l.Retries) < l.Ask.Retries
		}
		if l.Ask.Unsent > 0 {
			e.unsent, e.allUnsent = append(e.unsent, l.Unsent...), len(l.Unsent) < l.Ask.Unsent
		}
	}
}

// Plan decides the claim: each endpoint's fair share of what was loaded, its due
// retries first, then its events in feed order, and its cursor past the events it
// was given, or to the head when it was given every one up to there.
func (c *Claim) Plan() ClaimPlan {
	p := ClaimPlan{Until: c.until}
	for i, n := range c.shares(true) {
		e := c.eps[i]
		k := min(n, len(e.retries))
		for _, it := range e.retries[:k] {
			p.Leases = append(p.Leases, Lease{WebhookID: e.ID, Item: it})
		}
		fanned := e.unsent[:n-k]
		for _, it := range fanned {
			p.Leases = append(p.Leases, Lease{WebhookID: e.ID, Item: it, New: true})
		}
		cursor := e.Cursor
		switch {
		case e.allUnsent && e.Enabled && len(fanned) == len(e.unsent) && e.Cursor < c.head:
			cursor = c.head // every event up to the head was looked at
		case len(fanned) > 0:
			cursor = fanned[len(fanned)-1].Seq
		}
		if cursor != e.Cursor || e.window != e.Window {
			p.Moves = append(p.Moves, CursorMove{WebhookID: e.ID, Cursor: cursor, Window: e.window})
		}
	}
	return p
}
