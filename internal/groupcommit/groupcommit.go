// Package groupcommit gathers concurrent requests into batches that one function
// applies together, so that many requests share one database transaction and one
// durable commit (group commit).
//
// A loop takes the first request that arrives and at once every other request that is
// already waiting, up to a maximum, and applies them as one batch. Requests that
// arrive while a batch is applied wait for the next one. A lone request is applied at
// once: no timer holds it back, so batching adds no latency at low load, and batches
// grow by themselves as the load grows (about one commit time's worth of requests).
package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Outcome is the answer to one request of a batch.
type Outcome[T any] struct {
	Value T
	Err   error
}

// ApplyFunc applies a batch of requests and writes the answer to reqs[i] in out[i].
// ctx bounds the batch as a whole; it is not any one request's context.
type ApplyFunc[Req, Res any] func(ctx context.Context, reqs []Req, out []Outcome[Res])

// ErrClosed is the answer to a request made after Close.
var ErrClosed = errors.New("groupcommit: closed")

// Batcher batches requests of type Req for an ApplyFunc. It is safe for concurrent use.
type Batcher[Req, Res any] struct {
	apply   ApplyFunc[Req, Res]
	max     int
	timeout time.Duration

	// mu guards queue and isClosed. A request is in queue from the moment Do hands
	// it over until a batch takes it: Pending counts exactly the requests the next
	// batch would take, so that a test waiting on it knows they have all arrived.
	mu       sync.Mutex
	queue    []*call[Req, Res]
	isClosed bool
	// wake tells the loop that the queue has grown (or that the queue is closed).
	wake   chan struct{}
	closed chan struct{}
	done   chan struct{}
	once   sync.Once
	pool   sync.Pool
	// tracer makes a span of each batch (nil: no spans, at no cost); name is its name.
	tracer trace.Tracer
	name   string
}

// Option sets up a Batcher.
type Option func(*options)

type options struct {
	tracer trace.Tracer
	name   string
}

// Traced makes each batch a span named name, made by tracer. Its parent is the span
// of the first request it carries whose trace is sampled, so that the batch shows in
// that request's trace, and it links to the span of every request it carries: a
// request batched with others finds the batch, and the batch all its requests.
// ApplyFunc's ctx holds the span. A batch of unsampled requests only is no span: its
// ctx holds its first request's span context, so that what it writes still names
// that trace.
func Traced(tracer trace.Tracer, name string) Option {
	return func(o *options) { o.tracer, o.name = tracer, name }
}

type call[Req, Res any] struct {
	ctx   context.Context
	req   Req
	res   Outcome[Res]
	ready chan struct{}
}

// New starts a queue that applies batches of at most max requests with apply, each
// batch within timeout.
func New[Req, Res any](apply ApplyFunc[Req, Res], max int, timeout time.Duration, opts ...Option) *Batcher[Req, Res] {
	if max < 1 {
		max = 1
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	q := &Batcher[Req, Res]{
		apply:   apply,
		max:     max,
		timeout: timeout,
		wake:    make(chan struct{}, 1),
		closed:  make(chan struct{}),
		done:    make(chan struct{}),
		tracer:  o.tracer,
		name:    o.name,
	}
	q.pool.New = func() any { return &call[Req, Res]{ready: make(chan struct{}, 1)} }
	go q.loop()
	return q
}

// Do queues req for the next batch and returns its answer. If ctx ends before the
// request is taken into a batch, Do returns ctx's error and the request is not
// applied; once it is in a batch, Do waits for the batch, whose outcome the request
// shares whatever happens to ctx (so that a caller is never told "failed" about a
// request that was applied).
func (q *Batcher[Req, Res]) Do(ctx context.Context, req Req) (Res, error) {
	var zero Res
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	c := q.pool.Get().(*call[Req, Res])
	c.ctx, c.req = ctx, req
	q.mu.Lock()
	if q.isClosed {
		q.mu.Unlock()
		q.put(c)
		return zero, ErrClosed
	}
	q.queue = append(q.queue, c)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default: // the loop has been told already
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		if q.withdraw(c) {
			q.put(c)
			return zero, ctx.Err()
		}
		<-c.ready // a batch took it: its outcome is the answer
	}
	res := c.res
	q.put(c)
	return res.Value, res.Err
}

// withdraw takes c out of the queue if no batch has taken it yet, and says whether it did.
func (q *Batcher[Req, Res]) withdraw(c *call[Req, Res]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.queue, c)
	if i < 0 {
		return false
	}
	q.queue = slices.Delete(q.queue, i, i+1)
	return true
}

func (q *Batcher[Req, Res]) put(c *call[Req, Res]) {
	var zero call[Req, Res]
	c.ctx, c.req, c.res = zero.ctx, zero.req, zero.res
	q.pool.Put(c)
}

// Pending is how many requests wait for a batch to take them: a measure of the
// load, and what tests wait on to know that requests have queued (a request counts
// once it is in the queue the next batch takes from, not before).
func (q *Batcher[Req, Res]) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// Close stops the queue once the batch being applied is done. Requests not yet taken
// get ErrClosed.
func (q *Batcher[Req, Res]) Close() {
	q.once.Do(func() {
		q.mu.Lock()
		q.isClosed = true
		q.mu.Unlock()
		close(q.closed)
	})
	<-q.done
}

// take moves up to max requests from the queue into batch, oldest first. After Close
// it takes none and answers every request left with ErrClosed.
func (q *Batcher[Req, Res]) take(batch []*call[Req, Res]) []*call[Req, Res] {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.isClosed {
		for _, c := range q.queue {
			c.res.Err = ErrClosed
			c.ready <- struct{}{}
		}
		clear(q.queue)
		q.queue = q.queue[:0]
		return batch
	}
	n := min(len(q.queue), q.max)
	batch = append(batch, q.queue[:n]...)
	rest := copy(q.queue, q.queue[n:])
	clear(q.queue[rest:])
	q.queue = q.queue[:rest]
	return batch
}

func (q *Batcher[Req, Res]) loop() {
	defer close(q.done)
	batch := make([]*call[Req, Res], 0, q.max)
	reqs := make([]Req, 0, q.max)
	out := make([]Outcome[Res], q.max)
	for {
		select {
		case <-q.wake:
		case <-q.closed:
			q.take(batch) // answers what is left with ErrClosed
			return
		}
		for {
			batch = q.take(batch)
			if len(batch) == 0 {
				break
			}
			// Requests whose callers gave up while they waited are answered, not applied.
			live := batch[:0]
			for _, c := range batch {
				if err := c.ctx.Err(); err != nil {
					c.res.Err = err
					c.ready <- struct{}{}
					continue
				}
				live = append(live, c)
				reqs = append(reqs, c.req)
			}
			if len(live) > 0 {
				q.run(q.trace(live), reqs, out[:len(live)])
				for i, c := range live {
					c.res = out[i]
					out[i] = Outcome[Res]{}
					c.ready <- struct{}{}
				}
			}
			clear(batch[:cap(batch)])
			clear(reqs)
			batch, reqs = batch[:0], reqs[:0]
		}
	}
}

// trace starts the span of a batch of live calls (see Traced) and returns the
// batch's base context, which holds it; Background when the Batcher is not traced.
func (q *Batcher[Req, Res]) trace(live []*call[Req, Res]) context.Context {
	if q.tracer == nil {
		return context.Background()
	}
	var parent trace.SpanContext
	for _, c := range live {
		sc := trace.SpanContextFromContext(c.ctx)
		if sc.IsValid() && (!parent.IsValid() || (!parent.IsSampled() && sc.IsSampled())) {
			parent = sc
		}
	}
	base := trace.ContextWithSpanContext(context.Background(), parent)
	if !parent.IsSampled() {
		// No request of the batch is sampled: a span would be recorded by no
		// parent-based sampler. The batch goes on in its first request's trace.
		return base
	}
	links := make([]trace.Link, 0, len(live))
	for _, c := range live {
		if sc := trace.SpanContextFromContext(c.ctx); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	ctx, _ := q.tracer.Start(base, q.name,
		trace.WithLinks(links...), trace.WithAttributes(attribute.Int("petstore.batch.size", len(live))))
	return ctx
}

// run applies one batch within base (which holds its span, if any, ended here). A
// panic in apply fails the batch instead of the process, and never leaves a caller
// waiting.
func (q *Batcher[Req, Res]) run(base context.Context, reqs []Req, out []Outcome[Res]) {
	ctx, cancel := context.WithTimeout(base, q.timeout)
	defer cancel()
	defer trace.SpanFromContext(base).End()
	defer func() {
		if v := recover(); v != nil {
			err := fmt.Errorf("groupcommit: batch panicked: %v", v)
			for i := range out {
				out[i] = Outcome[Res]{Err: err}
			}
		}
	}()
	q.apply(ctx, reqs, out)
}

// Settle answers a batch whose apply failed with err. A failure that one request may
// have caused for all (blamed reports such errors: a constraint one row broke) runs
// each request of a larger batch again as a batch of its own, so that it fails only
// itself; any other failure, and a lone request's, is the answer of every request.
func Settle[Req, Res any](ctx context.Context, reqs []Req, out []Outcome[Res], err error, blamed func(error) bool, apply ApplyFunc[Req, Res]) {
	if len(reqs) > 1 && blamed(err) {
		for i := range reqs {
			apply(ctx, reqs[i:i+1], out[i:i+1])
		}
		return
	}
	for i := range out {
		out[i] = Outcome[Res]{Err: err}
	}
}
