package httpapi

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/acme-pets/petstore/internal/eventhub"
	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// The live event stream (GET /events/stream). The generated server authenticates,
// authorizes and decodes the request like every other's, through the same middleware
// (rate limit, log line, metrics); StreamEvents then writes the answer itself to the
// writer under the generated server's (requestInfo.w), flushing each message as it
// comes, until the client goes, the key stops, or the server shuts down. New events come
// from the process's one reader (eventhub.Hub); a stream does no database work per
// event, only its resume's catch-up and its key's recheck.

// The defaults of the stream's settings (Config).
const (
	DefaultStreamHeartbeat   = 15 * time.Second
	DefaultStreamsPerAccount = 5
)

// streamWriteWait bounds each write of a stream: the server's WriteTimeout, made for
// answers that end, must not cut one that does not (http.ResponseController).
const streamWriteWait = 10 * time.Second

// streamRecheck is how often a stream checks its key again: a revoked or expired key,
// or a disabled account, ends its streams within it (and the key cache's bound).
const streamRecheck = time.Second

// streamOpen is the stream's first message: a comment that sends the headers at once,
// and the reconnection delay asked of EventSource.
var streamOpen = []byte("retry: 2000\n: stream open\n\n")

var streamHeartbeat = []byte(": heartbeat\n\n")

// streams counts the open streams of each account (in this process).
type streams struct {
	mu    sync.Mutex
	open  map[int64]int
	limit int
}

func (s *streams) acquire(account int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[account] >= s.limit {
		return false
	}
	s.open[account]++
	return true
}

func (s *streams) release(account int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[account]--; s.open[account] <= 0 {
		delete(s.open, account)
	}
}

func (h *Handler) StreamEvents(ctx context.Context, params oas.StreamEventsParams) (oas.StreamEventsRes, error) {
	ri := info(ctx)
	p := ri.principal
	f, err := p.FeedFilter(petstore.EventType(params.Type.Or("")))
	if err != nil {
		return nil, err
	}
	// The header wins: a browser's EventSource sends it on reconnecting, to the URL
	// it was first given.
	last := params.LastEventID.Or(params.LastEventId.Or(""))
	resume := last != ""
	var after int64
	if resume {
		e, err := h.store.Event(ctx, last)
		if err != nil {
			return nil, err
		}
		if !p.MayReadEvents(e.Type) { // not in the key's feed
			return nil, petstore.EventNotFound(last)
		}
		after = e.Seq
	}
	if !h.streams.acquire(p.AccountID) {
		return nil, petstore.Errorf(petstore.ETooManyStreams,
			"This account has %d event streams open, as many as it may; close one first.", h.streams.limit)
	}
	sub, err := h.hub.Subscribe(ctx, eventhub.Match(f))
	if err != nil {
		h.streams.release(p.AccountID)
		if errors.Is(err, eventhub.ErrClosed) {
			return nil, petstore.Errorf(petstore.EUnavailable, "The server is shutting down; reconnect.")
		}
		return nil, err
	}
	s := &eventStream{h: h, ri: ri, ctx: ri.conn, sub: sub, filter: f, principal: p, last: sub.From}
	if resume {
		s.last, s.catchUp = after, after < sub.From
	}
	defer s.close()
	// The answer is written here, to the writer under the generated server's (it
	// cannot flush each message); the generated encoder then has nothing to add.
	w := ri.w
	w.Header()["Content-Type"] = eventStreamType
	w.Header()["X-Accel-Buffering"] = noBuffering // nginx: pass each message on
	w.WriteHeader(http.StatusOK)
	s.serve(w)
	return &oas.StreamEventsOKHeaders{XAccelBuffering: oas.NewOptStreamEventsOKXAccelBuffering(oas.StreamEventsOKXAccelBufferingNo), Response: oas.StreamEventsOK{Data: http.NoBody}}, nil
}

var (
	eventStreamType = []string{"text/event-stream"}
	noBuffering     = []string{"no"}
)

// eventStream is one open stream: its subscription to the hub, and the last event it
// sent, by which it drops what it has already sent.
type eventStream struct {
	h         *Handler
	ri        *requestInfo
	ctx       context.Context // the connection's, without the request's budget
	sub       *eventhub.Subscription
	filter    petstore.EventFilter
	principal petstore.Principal
	last      int64
	catchUp   bool // a resume: the feed after last is read first, up to sub.From
}

// close ends the subscription and frees the account's place.
func (s *eventStream) close() {
	s.sub.Cancel()
	s.h.streams.release(s.principal.AccountID)
}

// serve writes the stream to w until it ends: the client goes (a write fails), the
// key stops, the subscriber falls behind, or the server shuts down.
func (s *eventStream) serve(w http.ResponseWriter) {
	s.h.leaveInFlight(s.ri)
	rc := http.NewResponseController(w)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteWait))
		_, err := w.Write(b)
		return err == nil && rc.Flush() == nil
	}
	if !write(streamOpen) {
		return
	}
	if s.catchUp && !s.catchUpFromFeed(write) {
		return
	}
	beat := time.NewTimer(s.h.heartbeat)
	defer beat.Stop()
	check := time.NewTicker(streamRecheck)
	defer check.Stop()
	var buf []byte
	for {
		select {
		case m, ok := <-s.sub.C:
			if !ok {
				return // fell behind, or the server shuts down: the client resumes
			}
			buf = s.drain(s.append(buf[:0], m)) // what is waiting goes in one write
			if len(buf) == 0 {
				continue
			}
			if !write(buf) {
				return
			}
		case <-beat.C:
			if !write(streamHeartbeat) {
				return
			}
		case <-check.C:
			if !s.keyHolds() {
				return
			}
			continue
		case <-s.ctx.Done():
			return
		}
		beat.Reset(s.h.heartbeat)
	}
}

// drain appends the messages waiting in the subscription to buf.
func (s *eventStream) drain(buf []byte) []byte {
	for {
		select {
		case m, ok := <-s.sub.C:
			if !ok {
				return buf // the next receive sees the end
			}
			buf = s.append(buf, m)
		default:
			return buf
		}
	}
}

// append adds m's message to buf unless it was sent already (a resume's catch-up
// read it from the feed).
func (s *eventStream) append(buf []byte, m *eventhub.Message) []byte {
	if m.Seq <= s.last {
		return buf
	}
	s.last = m.Seq
	return append(buf, m.Frame...)
}

// catchUpFromFeed sends the events of the key's feed after last, up to where the
// hub took over (sub.From), read from the store as GET /events reads them. It
// reports whether the stream goes on.
func (s *eventStream) catchUpFromFeed(write func([]byte) bool) bool {
	encode := EventEncoder(s.h.currency)
	for s.last < s.sub.From {
		events, err := s.h.store.Events(s.ctx, s.filter, petstore.Page{After: s.last, Limit: petstore.MaxLimit})
		if err != nil {
			if s.ctx.Err() == nil {
				s.h.log.WarnContext(s.ctx, "event stream: catch up from the feed", "err", err, "request_id", s.ri.id)
			}
			return false
		}
		if len(events) == 0 {
			return true
		}
		var buf []byte
		for _, e := range events {
			data, err := encode(e)
			if err != nil {
				s.h.log.ErrorContext(s.ctx, "event stream: encode an event", "err", err, "request_id", s.ri.id)
				return false
			}
			buf = append(buf, eventhub.Frame(e, data)...)
			s.last = e.Seq
		}
		if !write(buf) {
			return false
		}
	}
	return true
}

// keyHolds checks the stream's key again, as a new request would: still valid, still
// the same account in the same role.
func (s *eventStream) keyHolds() bool {
	p, err := s.h.auth.Authenticate(s.ctx, s.ri.key.token)
	return err == nil && p.AccountID == s.principal.AccountID && p.Role == s.principal.Role
}

// leaveInFlight stops counting a stream's request as in flight: background work
// paces itself while requests are (Server.Busy), and a stream is open for hours.
func (h *Handler) leaveInFlight(ri *requestInfo) {
	if ri.inFlight != nil && !ri.leftInFlight {
		ri.leftInFlight = true
		ri.inFlight.Add(-1)
		h.metrics.inFlight.Dec()
	}
}

// WakeStreams tells the event streams' reader that events were committed (the
// stores' Options.WakeFeed); it never blocks.
func (s *Server) WakeStreams() { s.h.hub.Wake() }

// CloseStreams ends every event stream and refuses new ones (503): http.Server.
// Shutdown waits for the requests it serves, which a stream never ends on its own
// (register it with http.Server.RegisterOnShutdown).
func (s *Server) CloseStreams() { s.h.hub.Close() }
