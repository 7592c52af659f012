package petstore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// StreamEventsOptions are the options of StreamEvents.
type StreamEventsOptions struct {
	// Type keeps only the events of this type (one the key may read).
	Type EventType
	// LastEventID is the id of the last event handled: the stream starts after it,
	// with every event since. Empty: the events committed from now on.
	LastEventID string
	// Idle is how long the stream may send nothing, not even its heartbeat (every 15
	// seconds), before the connection is taken for dead and opened again (default
	// 45 seconds).
	Idle time.Duration
}

// streamBackoff bounds the wait before reconnecting a stream that could not be
// opened; each failure in a row doubles it from a second.
const streamBackoff = 30 * time.Second

// StreamEvents returns the events as they are committed (admins), live, from
// GET /events/stream: the events of ListEvents, with the same ids and data. A dropped
// connection is opened again with the id of the last event yielded (Last-Event-ID),
// so that the loop sees every event once, in order, with no gap. It reconnects after
// network errors and answers of 429, 502, 503 and 504, waiting longer after each
// failure in a row (up to 30 seconds); any other answer (401 for a revoked key, 403,
// 404 for a LastEventID past the feed's 30 days) is yielded as an *Error and ends the
// loop.
// The loop also ends when ctx does, without an error; breaking out of it closes the
// stream. opts may be nil.
//
//	for e, err := range client.StreamEvents(ctx, &petstore.StreamEventsOptions{LastEventID: saved}) {
//		if err != nil {
//			return err
//		}
//		handle(e)
//		saved = e.ID
//	}
func (c *Client) StreamEvents(ctx context.Context, opts *StreamEventsOptions, callOpts ...CallOption) iter.Seq2[*Event, error] {
	var o StreamEventsOptions
	if opts != nil {
		o = *opts
	}
	if o.Idle <= 0 {
		o.Idle = 45 * time.Second
	}
	// A stream has no end: the client's time limit per call would cut it; Idle
	// watches it instead.
	sc := *c
	hc := *c.http
	hc.Timeout = 0
	sc.http = &hc
	sc.bind()
	return func(yield func(*Event, error) bool) {
		last := o.LastEventID
		wait := time.Second
		for ctx.Err() == nil {
			got, stop, err := sc.streamOnce(ctx, o, last, callOpts, func(e *Event) bool {
				last = e.ID
				return yield(e, nil)
			})
			if stop || ctx.Err() != nil {
				return
			}
			if err != nil && !reconnectable(err) {
				yield(nil, err)
				return
			}
			if got {
				wait = time.Second // it worked for a while: start the back-off again
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			wait = min(2*wait, streamBackoff)
		}
	}
}

// reconnectable reports whether a stream that failed with err may be opened again:
// after a network error, 429, or a service or gateway that is unavailable (502, 503,
// 504); not after an answer no retry changes (500 included).
func reconnectable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		switch e.Status {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return true
}

// streamOnce opens the stream once, after last, and passes each event to handle until
// the connection ends. It reports whether any event came, whether handle asked to
// stop, and why the connection ended (nil when the service closed it).
func (c *Client) streamOnce(ctx context.Context, o StreamEventsOptions, last string, callOpts []CallOption, handle func(*Event) bool) (got, stop bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	params := api.StreamEventsParams{Type: optional(api.FeedEventType(o.Type))}
	if last != "" {
		params.LastEventIDHeader = &last
	}
	res, err := c.api.StreamEvents(withCall(ctx, "streamEvents", callOpts), &params)
	if err != nil {
		return false, false, err
	}
	if res.StatusCode != http.StatusOK {
		defer closeBody(res)
		return false, false, errorFrom(res)
	}
	// A stream has no end to drain to (closeBody): it is cut.
	defer res.Body.Close()
	// The watchdog: no byte for Idle, and the connection is dropped.
	idle := time.AfterFunc(o.Idle, cancel)
	defer idle.Stop()
	r := bufio.NewReader(&watchedBody{r: res.Body, reset: func() { idle.Reset(o.Idle) }})
	var data strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil // the service ended the stream (shutdown, a slow reader): resume
			}
			return got, false, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data.Len() == 0 {
				continue
			}
			var w wireEvent
			if err := json.Unmarshal([]byte(data.String()), &w); err != nil {
				return got, false, fmt.Errorf("petstore: reading an event of the stream: %w", err)
			}
			data.Reset()
			got = true
			if !handle(eventFrom(w)) {
				return got, true, nil
			}
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
		// id:, event:, retry: and comments need nothing: the data holds the id and type.
	}
}

// watchedBody calls reset on every read that brings bytes.
type watchedBody struct {
	r     io.Reader
	reset func()
}

func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.reset()
	}
	return n, err
}
