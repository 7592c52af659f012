package groupcommit

import (
	"context"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// spanOf is a context whose span is a caller's: trace n, sampled or not.
func spanOf(n byte, sampled bool) context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{n}, SpanID: trace.SpanID{n}, Remote: true,
	})
	if sampled {
		sc = sc.WithTraceFlags(trace.FlagsSampled)
	}
	return trace.ContextWithSpanContext(context.Background(), sc)
}

// TestABatchIsASpanLinkedToEveryRequestItCarried holds the loop with a first batch,
// queues three requests (of an unsampled trace, then of two sampled ones) behind it,
// and reads the second batch's span: a child of the first sampled request, linked to
// all three, holding the batch's size, and in apply's context.
func TestABatchIsASpanLinkedToEveryRequestItCarried(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var inApply []trace.SpanContext
	var mu sync.Mutex
	r := &recorder{gate: make(chan struct{}), entered: make(chan struct{}, 10)}
	apply := func(ctx context.Context, reqs []int, out []Outcome[int]) {
		mu.Lock()
		inApply = append(inApply, trace.SpanContextFromContext(ctx))
		mu.Unlock()
		r.apply(ctx, reqs, out)
	}
	q := New(apply, 5, time.Second, Traced(tp.Tracer("test"), "groupcommit.batch"))
	defer q.Close()
	var wg sync.WaitGroup
	do := func(ctx context.Context) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := q.Do(ctx, 1); err != nil {
				t.Error(err)
			}
		}()
	}
	do(spanOf(1, true))
	<-r.entered // the first batch holds the loop
	for i, sampled := range []bool{false, true, true} {
		do(spanOf(byte(2+i), sampled))
		waitPending(t, q, i+1) // in this order
	}
	close(r.gate)
	wg.Wait()

	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans ended, want one per batch (2)", len(spans))
	}
	s := spans[1]
	if s.Name() != "groupcommit.batch" {
		t.Errorf("the batch span is named %q", s.Name())
	}
	if got := s.Parent(); got.TraceID() != (trace.TraceID{3}) || got.SpanID() != (trace.SpanID{3}) {
		t.Errorf("the batch's parent is %v/%v, want the first sampled request's (trace 3)", got.TraceID(), got.SpanID())
	}
	var linked []trace.TraceID
	for _, l := range s.Links() {
		linked = append(linked, l.SpanContext.TraceID())
	}
	if want := []trace.TraceID{{2}, {3}, {4}}; len(linked) != 3 || linked[0] != want[0] || linked[1] != want[1] || linked[2] != want[2] {
		t.Errorf("the batch links to traces %v, want %v, each request's", linked, want)
	}
	var size int64
	for _, a := range s.Attributes() {
		if a.Key == "petstore.batch.size" {
			size = a.Value.AsInt64()
		}
	}
	if size != 3 {
		t.Errorf("petstore.batch.size is %d, want 3", size)
	}
	mu.Lock()
	defer mu.Unlock()
	if inApply[1].SpanID() != s.SpanContext().SpanID() {
		t.Errorf("apply's context holds span %v, want the batch's %v", inApply[1].SpanID(), s.SpanContext().SpanID())
	}
}

// TestAnUntracedBatcherGivesApplyNoSpan checks that a Batcher made without Traced
// gives apply a context with no span: tracing off costs a batch nothing.
func TestAnUntracedBatcherGivesApplyNoSpan(t *testing.T) {
	var got trace.SpanContext
	q := New(func(ctx context.Context, reqs []int, out []Outcome[int]) { got = trace.SpanContextFromContext(ctx) }, 5, time.Second)
	defer q.Close()
	if _, err := q.Do(spanOf(1, true), 1); err != nil {
		t.Fatal(err)
	}
	if got.IsValid() {
		t.Errorf("apply's context has span %v, want none", got)
	}
}

// TestABatchOfUnsampledRequestsIsNoSpan: no parent-based sampler would record it;
// apply's context holds the first request's span context instead.
func TestABatchOfUnsampledRequestsIsNoSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var got trace.SpanContext
	q := New(func(ctx context.Context, reqs []int, out []Outcome[int]) { got = trace.SpanContextFromContext(ctx) },
		5, time.Second, Traced(tp.Tracer("test"), "groupcommit.batch"))
	defer q.Close()
	if _, err := q.Do(spanOf(7, false), 1); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Started()); n != 0 {
		t.Errorf("%d spans for a batch of an unsampled request, want none", n)
	}
	if got.TraceID() != (trace.TraceID{7}) {
		t.Errorf("apply's context is in trace %v, want the request's", got.TraceID())
	}
}
