package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/acme-pets/petstore/internal/eventhub"
	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// The live event stream (GET /events/stream). The generated server authenticates,
// authorizes and decodes the request like every other's, through the same middleware
// (rate limit, log line, metrics); StreamEvents answers with an eventStream, which
// the generated encoder copies to the response: responseWriter.ReadFrom hands it the
// writer (eventStream.WriteTo), and it writes and flushes each message as it comes,
// until the client goes, the key stops, or the server shuts down. New events come
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
	return &oas.StreamEventsOK{Data: s}, nil
}

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
	closeOnce sync.Once
}

// Read is never used: the body writes itself (WriteTo, by responseWriter.ReadFrom).
func (s *eventStream) Read([]byte) (int, error) { return 0, io.EOF }

// Close ends the subscription and frees the account's place; the generated encoder
// calls it when the answer is done.
func (s *eventStream) Close() error {
	s.closeOnce.Do(func() {
		s.sub.Cancel()
		s.h.streams.release(s.principal.AccountID)
	})
	return nil
}

// WriteTo writes the stream to w until it ends. It reports no error: a write that
// fails means the client went, which ends the stream as it should.
func (s *eventStream) WriteTo(w io.Writer) (int64, error) {
	s.h.leaveInFlight(s.ri)
	rw, ok := w.(http.ResponseWriter)
	if !ok {
		return 0, errors.New("event stream: not written to an http.ResponseWriter")
	}
	rc := http.NewResponseController(rw)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	var n int64
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteWait))
		m, err := w.Write(b)
		n += int64(m)
		return err == nil && rc.Flush() == nil
	}
	if !write(streamOpen) {
		return n, nil
	}
	if s.catchUp && !s.catchUpFromFeed(write) {
		return n, nil
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
				return n, nil // fell behind, or the server shuts down: the client resumes
			}
			// What is waiting goes in one write.
			buf = s.append(buf[:0], m)
			for more := true; more; {
				select {
				case m, ok := <-s.sub.C:
					if !ok {
						more = false
						break
					}
					buf = s.append(buf, m)
				default:
					more = false
				}
			}
			if len(buf) == 0 {
				continue
			}
			if !write(buf) {
				return n, nil
			}
		case <-beat.C:
			if !write(streamHeartbeat) {
				return n, nil
			}
		case <-check.C:
			if !s.keyHolds() {
				return n, nil
			}
			continue
		case <-s.ctx.Done():
			return n, nil
		}
		beat.Reset(s.h.heartbeat)
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
