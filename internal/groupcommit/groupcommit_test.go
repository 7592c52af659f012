package groupcommit

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder applies batches by doubling each request, remembering the batches, and
// holding each batch until the test lets it go when gate is set.
type recorder struct {
	mu      sync.Mutex
	batches [][]int
	gate    chan struct{}
	entered chan struct{}
}

func (r *recorder) apply(_ context.Context, reqs []int, out []Outcome[int]) {
	r.mu.Lock()
	r.batches = append(r.batches, append([]int(nil), reqs...))
	r.mu.Unlock()
	if r.entered != nil {
		r.entered <- struct{}{}
	}
	if r.gate != nil {
		<-r.gate
	}
	for i, v := range reqs {
		if v < 0 {
			out[i].Err = errors.New("negative")
			continue
		}
		out[i].Value = 2 * v
	}
}

func (r *recorder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s []int
	for _, b := range r.batches {
		s = append(s, len(b))
	}
	return s
}

func TestALoneRequestIsAppliedAtOnce(t *testing.T) {
	r := &recorder{}
	q := New(r.apply, 64, time.Second)
	defer q.Close()
	start := time.Now()
	v, err := q.Do(context.Background(), 21)
	if err != nil || v != 42 {
		t.Fatalf("Do = %d, %v", v, err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("a lone request took %v", d)
	}
	if got := r.sizes(); len(got) != 1 || got[0] != 1 {
		t.Errorf("batches = %v, want one of 1", got)
	}
}

func TestRequestsArrivingDuringABatchShareTheNextOne(t *testing.T) {
	r := &recorder{gate: make(chan struct{}), entered: make(chan struct{}, 10)}
	q := New(r.apply, 5, time.Second)
	defer q.Close()
	var wg sync.WaitGroup
	results := make([]int, 13)
	errs := make([]error, 13)
	do := func(i int) {
		defer wg.Done()
		results[i], errs[i] = q.Do(context.Background(), i)
	}
	wg.Add(1)
	go do(0)
	<-r.entered // the first batch holds the loop
	for i := 1; i < 13; i++ {
		wg.Add(1)
		go do(i)
	}
	waitPending(t, q, 12) // the twelve queue up behind the first batch
	close(r.gate)
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i] != 2*i {
			t.Errorf("request %d = %d, %v", i, results[i], errs[i])
		}
	}
	got := r.sizes()
	want := []int{1, 5, 5, 2}
	if len(got) != len(want) {
		t.Fatalf("batches = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("batches = %v, want %v", got, want)
		}
	}
}

func TestEachRequestGetsItsOwnAnswer(t *testing.T) {
	r := &recorder{}
	q := New(r.apply, 8, time.Second)
	defer q.Close()
	var wg sync.WaitGroup
	for i := -50; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := q.Do(context.Background(), i)
			if i < 0 && err == nil || i >= 0 && (err != nil || v != 2*i) {
				t.Errorf("Do(%d) = %d, %v", i, v, err)
			}
		}()
	}
	wg.Wait()
}

func TestARequestWhoseCallerGaveUpIsNotApplied(t *testing.T) {
	r := &recorder{gate: make(chan struct{}), entered: make(chan struct{}, 10)}
	q := New(r.apply, 8, time.Second)
	defer q.Close()
	go q.Do(context.Background(), 1)
	<-r.entered
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := q.Do(ctx, 2)
		errc <- err
	}()
	waitPending(t, q, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v, want context.Canceled", err)
	}
	close(r.gate)
	if _, err := q.Do(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.batches {
		for _, v := range b {
			if v == 2 {
				t.Fatalf("a cancelled request was applied: %v", r.batches)
			}
		}
	}
}

func TestAPanickingBatchFailsOnlyItsRequests(t *testing.T) {
	calls := 0
	q := New(func(_ context.Context, reqs []int, out []Outcome[int]) {
		calls++
		if calls == 1 {
			panic("boom")
		}
		for i := range reqs {
			out[i].Value = reqs[i]
		}
	}, 8, time.Second)
	defer q.Close()
	if _, err := q.Do(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Do in the panicking batch = %v", err)
	}
	if v, err := q.Do(context.Background(), 2); err != nil || v != 2 {
		t.Fatalf("Do after the panic = %d, %v", v, err)
	}
}

func TestAfterCloseRequestsAreRefused(t *testing.T) {
	r := &recorder{}
	q := New(r.apply, 8, time.Second)
	q.Close()
	q.Close() // twice is fine
	if _, err := q.Do(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after Close = %v, want ErrClosed", err)
	}
}

func TestTheBatchHasItsOwnDeadline(t *testing.T) {
	q := New(func(ctx context.Context, reqs []int, out []Outcome[int]) {
		<-ctx.Done()
		for i := range out {
			out[i].Err = ctx.Err()
		}
	}, 8, 30*time.Millisecond)
	defer q.Close()
	if _, err := q.Do(context.Background(), 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do = %v, want the batch's deadline", err)
	}
}

func BenchmarkDo(b *testing.B) {
	q := New(func(_ context.Context, reqs []int, out []Outcome[int]) {
		for i := range reqs {
			out[i].Value = reqs[i]
		}
	}, 64, time.Second)
	defer q.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := q.Do(ctx, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// waitPending waits until n requests wait for a batch.
func waitPending[Req, Res any](t *testing.T, q *Batcher[Req, Res], n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); q.Pending() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests wait, want %d", q.Pending(), n)
		}
	}
}

// A failure one request may have caused runs each request alone; any other failure
// is every request's answer.
func TestSettle(t *testing.T) {
	errBlamed, errOther := errors.New("constraint"), errors.New("disk full")
	blamed := func(err error) bool { return err == errBlamed }
	var alone [][]int
	apply := func(_ context.Context, reqs []int, out []Outcome[int]) {
		alone = append(alone, reqs)
		out[0] = Outcome[int]{Value: reqs[0] * 10}
	}
	out := make([]Outcome[int], 3)
	Settle(context.Background(), []int{1, 2, 3}, out, errBlamed, blamed, apply)
	if len(alone) != 3 || out[0].Value != 10 || out[2].Value != 30 || out[1].Err != nil {
		t.Errorf("a blamed failure: runs %v, answers %+v; want each request alone", alone, out)
	}
	alone = nil
	out = make([]Outcome[int], 2)
	Settle(context.Background(), []int{1, 2}, out, errOther, blamed, apply)
	if len(alone) != 0 || out[0].Err != errOther || out[1].Err != errOther {
		t.Errorf("another failure: runs %v, answers %+v; want the error for all", alone, out)
	}
	out = make([]Outcome[int], 1)
	Settle(context.Background(), []int{1}, out, errBlamed, blamed, apply)
	if len(alone) != 0 || out[0].Err != errBlamed {
		t.Errorf("a lone request's failure: runs %v, answers %+v; want its error", alone, out)
	}
}
