package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
)

// The live event stream (GET /events/stream): its format, filters and scopes, the
// limit of streams per account, the heartbeat, resuming without loss or duplicates,
// and its end when the key is revoked or the server shuts down. Run on PostgreSQL
// with PETSTORE_TEST_STORE=postgres, as the whole package.

// sseMessage is one message of a stream; a comment has only Comment.
type sseMessage struct {
	ID, Event, Data, Comment string
}

// sseStream is an open stream, read by a goroutine into msgs.
type sseStream struct {
	res    *http.Response
	msgs   chan sseMessage
	cancel context.CancelFunc
}

// openStream opens GET /v1/events/stream?query with key and the given headers, and
// fails the test unless it answers 200 text/event-stream.
func (a *testAPI) openStream(t testing.TB, key, query string, header map[string]string) *sseStream {
	t.Helper()
	s, res := a.tryStream(t, key, query, header)
	if res != nil {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("stream: %d %s", res.StatusCode, body)
	}
	return s
}

// tryStream opens a stream; a refusal is returned as the response instead.
func (a *testAPI) tryStream(t testing.TB, key, query string, header map[string]string) (*sseStream, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, "GET", a.URL+"/v1/events/stream?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+key)
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		cancel()
		t.Cleanup(func() { res.Body.Close() })
		return nil, res
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("stream Content-Type %q, want text/event-stream", ct)
	}
	s := &sseStream{res: res, msgs: make(chan sseMessage, 1000), cancel: cancel}
	go s.read()
	t.Cleanup(s.close)
	return s, nil
}

func (s *sseStream) read() {
	defer close(s.msgs)
	r := bufio.NewReader(s.res.Body)
	var m sseMessage
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, ":") {
			s.msgs <- sseMessage{Comment: strings.TrimPrefix(line, ": ")}
			continue
		}
		field, value, _ := strings.Cut(line, ": ")
		switch field {
		case "":
			if m != (sseMessage{}) {
				s.msgs <- m
			}
			m = sseMessage{}
		case "id":
			m.ID = value
		case "event":
			m.Event = value
		case "data":
			m.Data = value
		}
	}
}

// close drops the connection, as a client that goes away does.
func (s *sseStream) close() {
	s.cancel()
	s.res.Body.Close()
}

// next returns the next message that is not a comment, failing after wait.
func (s *sseStream) next(t testing.TB, wait time.Duration) sseMessage {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				t.Fatal("the stream ended")
			}
			if m.Comment != "" {
				continue
			}
			return m
		case <-deadline:
			t.Fatalf("no event within %s", wait)
		}
	}
}

// ended waits up to wait for the stream to end, skipping what it still sends.
func (s *sseStream) ended(wait time.Duration) bool {
	deadline := time.After(wait)
	for {
		select {
		case _, ok := <-s.msgs:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// quiet reports whether no event (comments aside) arrives within wait.
func (s *sseStream) quiet(wait time.Duration) (sseMessage, bool) {
	deadline := time.After(wait)
	for {
		select {
		case m, ok := <-s.msgs:
			if ok && m.Comment != "" {
				continue
			}
			return m, false
		case <-deadline:
			return sseMessage{}, true
		}
	}
}

const streamWait = 5 * time.Second

func TestStreamFormat(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Streamed", 10)
	// Only order.placed: on PostgreSQL the feed shows a transaction's events once
	// every older transaction in the cluster has ended, so the keys' and the pet's
	// events, committed just before the stream opened, may still come after it (the
	// contract's "as far as the feed shows them"), as a parallel test's open
	// transaction made them do in CI.
	s := a.openStream(t, a.Admin, "type=order.placed", nil)
	var first sseMessage
	select {
	case first = <-s.msgs:
	case <-time.After(streamWait):
	}
	if first.Comment != "stream open" {
		t.Fatalf("first message %+v, want the comment that opens the stream", first)
	}
	o := a.order(t, a.Customer, p.ID, 1)
	m := s.next(t, streamWait)
	if m.Event != "order.placed" || !eventIDShape.MatchString(m.ID) {
		t.Fatalf("message %+v, want an order.placed with an event id", m)
	}
	got := a.do(t, req{Method: "GET", Path: "/v1/events/" + m.ID, Key: a.Admin}).expect(200, "")
	if strings.TrimSpace(string(got.Body)) != m.Data {
		t.Errorf("data is\n%s\nGET /events/%s answers\n%s", m.Data, m.ID, got.Body)
	}
	var e event
	got.JSON(&e)
	if !strings.Contains(string(e.Data), `"id":`+strconv.FormatInt(o.ID, 10)) {
		t.Errorf("the event holds %s, want order %d", e.Data, o.ID)
	}
}

func TestStreamFiltersAndScopes(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Filtered", 10)
	orders := a.openStream(t, a.Admin, "type=order.placed", nil)
	ordersOnly := a.scopedKey(t, a.Admin, []string{"events:read", "orders:read"}, time.Time{})
	scoped := a.openStream(t, ordersOnly, "", nil)
	a.setStock(t, p.ID, 20) // inventory.updated: pets:read, not the scoped key's
	a.order(t, a.Customer, p.ID, 1)
	for name, s := range map[string]*sseStream{"type=order.placed": orders, "a key with orders:read only": scoped} {
		if m := s.next(t, streamWait); m.Event != "order.placed" {
			t.Errorf("%s: first event %s, want order.placed (the stock change is not its)", name, m.Event)
		}
	}
	// A type the key may not read is refused, as the feed refuses it.
	_, res := a.tryStream(t, ordersOnly, "type=inventory.updated", nil)
	if res == nil || res.StatusCode != 403 {
		t.Fatalf("a type the key may not read: %v, want 403", res)
	}
	// No role but admin, and no key without events:read.
	_, res = a.tryStream(t, a.Customer, "", nil)
	if res == nil || res.StatusCode != 403 {
		t.Fatalf("a customer's stream: %v, want 403", res)
	}
	a.do(t, req{Method: "GET", Path: "/v1/events/stream?type=nope", Key: a.Admin}).expect(400, "validation_failed")
}

func TestStreamLimitPerAccount(t *testing.T) {
	a := newTestAPI(t)
	open := make([]*sseStream, 0, httpapi.DefaultStreamsPerAccount)
	for range httpapi.DefaultStreamsPerAccount {
		open = append(open, a.openStream(t, a.Admin, "", nil))
	}
	// Another key of the same account counts toward the same limit.
	other := a.scopedKey(t, a.Admin, nil, time.Time{})
	a.do(t, req{Method: "GET", Path: "/v1/events/stream", Key: other}).expect(429, "too_many_streams")
	open[0].close()
	deadline := time.Now().Add(streamWait)
	for {
		s, res := a.tryStream(t, other, "", nil)
		if s != nil {
			break
		}
		if res.StatusCode != 429 || time.Now().After(deadline) {
			t.Fatalf("after closing a stream: %d, want a stream", res.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStreamHeartbeat(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.StreamHeartbeat = 50 * time.Millisecond })
	s := a.openStream(t, a.Admin, "", nil)
	beats := 0
	deadline := time.After(streamWait)
	for beats < 3 {
		select {
		case m := <-s.msgs:
			if m.Comment == "heartbeat" {
				beats++
			}
		case <-deadline:
			t.Fatalf("%d heartbeats within %s, want 3", beats, streamWait)
		}
	}
}

// TestStreamResume kills a stream after its first event and resumes it with
// Last-Event-ID (and with lastEventId): every event comes exactly once, in order.
func TestStreamResume(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Resumed", 100)
	s := a.openStream(t, a.Admin, "type=order.placed", nil)
	var want []string
	for range 3 {
		a.order(t, a.Customer, p.ID, 1)
	}
	first := s.next(t, streamWait)
	s.close()
	for range 3 {
		a.order(t, a.Customer, p.ID, 1)
	}
	a.settleFeed(t)
	for _, e := range a.events(t, "order.placed") {
		want = append(want, e.ID)
	}
	if len(want) != 6 || want[0] != first.ID {
		t.Fatalf("the feed holds %v, the stream sent %s first", want, first.ID)
	}
	for name, open := range map[string]func() *sseStream{
		"Last-Event-ID": func() *sseStream {
			return a.openStream(t, a.Admin, "type=order.placed", map[string]string{"Last-Event-ID": first.ID})
		},
		"lastEventId": func() *sseStream {
			return a.openStream(t, a.Admin, "type=order.placed&lastEventId="+first.ID, nil)
		},
	} {
		r := open()
		for i, id := range want[1:] {
			if m := r.next(t, streamWait); m.ID != id {
				t.Fatalf("%s: event %d is %s, want %s", name, i+2, m.ID, id)
			}
		}
		// Then live, with no duplicate of what the catch-up sent.
		o := a.order(t, a.Customer, p.ID, 1)
		m := r.next(t, streamWait)
		if m.Event != "order.placed" || !strings.Contains(m.Data, `"id":`+strconv.FormatInt(o.ID, 10)) {
			t.Fatalf("%s: after the catch-up came %+v, want the new order %d", name, m, o.ID)
		}
		want = append(want, m.ID)
		if m, quiet := r.quiet(200 * time.Millisecond); !quiet {
			t.Fatalf("%s: a message after the last event: %+v", name, m)
		}
		r.close()
	}
	// An id the feed does not hold is not found.
	a.do(t, req{Method: "GET", Path: "/v1/events/stream?lastEventId=evt_aaaaaaaaaaaaaaaaaaaaaaaaaa", Key: a.Admin}).expect(404, "not_found")
}

func TestStreamEndsWhenKeyRevokedOrServerShutsDown(t *testing.T) {
	a := newTestAPI(t)
	var k struct {
		ID  int64
		Key string
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Admin, Body: map[string]any{"name": "revoked"}}).expect(201, "").JSON(&k)
	revoked := a.openStream(t, k.Key, "", nil)
	kept := a.openStream(t, a.Admin, "", nil)
	a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", k.ID), Key: a.Admin}).expect(204, "")
	if !revoked.ended(3 * time.Second) {
		t.Fatal("the stream of a revoked key goes on")
	}
	start := time.Now()
	a.Server.CloseStreams()
	if !kept.ended(2 * time.Second) {
		t.Fatal("the stream goes on after CloseStreams")
	}
	t.Logf("the stream ended %s after CloseStreams", time.Since(start))
	a.do(t, req{Method: "GET", Path: "/v1/events/stream", Key: a.Admin}).expect(503, "unavailable")
}
