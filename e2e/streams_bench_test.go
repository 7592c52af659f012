package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/servetest"
)

// TestStreamsFanOut is a measurement, not a timed test (docs/PERFORMANCE.md, "Event
// streams"): the real binary with 1,000 event streams open (200 admin accounts, five
// each, the limit), how much more resident memory the server holds than before them,
// and how long one order takes to reach all 1,000. PETSTORE_STREAM_BENCH=1 runs it.
func TestStreamsFanOut(t *testing.T) {
	if os.Getenv("PETSTORE_STREAM_BENCH") == "" {
		t.Skip("a measurement: PETSTORE_STREAM_BENCH=1 runs it (docs/PERFORMANCE.md)")
	}
	const accounts, perAccount = 200, 5
	bin := petstoreBinary(t)
	s := &server{database: filepath.Join(t.TempDir(), "petstore.db"), bin: bin}
	s.AdminKey = s.createKey(t, "admin@example.com", "admin")
	s.CustomerKey = s.createKey(t, "customer@example.com", "customer")
	keys := make([]string, accounts)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < accounts; i += 4 {
				keys[i] = s.createKey(t, fmt.Sprintf("staff%d@example.com", i), "admin")
			}
		}()
	}
	wg.Wait()
	var stderr bytes.Buffer
	p, err := servetest.Serve(bin, &stderr, 40*time.Second, "--addr", "127.0.0.1:0", "--database", s.database,
		"--no-bootstrap", "--log-level", "warn", "--admin-addr", "off", "--rate-limit", "0")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	s.URL = p.URL
	pet := s.benchPet(t)
	// The server warmed up: the reader of the streams started, a few requests served.
	warm := s.openBenchStream(t, s.AdminKey)
	warm.cancel()
	before := rss(t, p.Cmd.Process.Pid)

	streams := make([]*benchStream, 0, accounts*perAccount)
	for i := range accounts * perAccount {
		streams = append(streams, s.openBenchStream(t, keys[i/perAccount]))
	}
	defer func() {
		for _, st := range streams {
			st.cancel()
		}
	}()
	time.Sleep(2 * time.Second) // let the heap settle
	open := rss(t, p.Cmd.Process.Pid)

	var order struct{ ID int64 }
	placed := time.Now()
	s.call(t, s.CustomerKey, "POST", "/store/orders", map[string]any{"petId": pet, "quantity": 1}, http.StatusCreated, &order)
	answered := time.Since(placed)
	want := fmt.Sprintf(`"id":%d,`, order.ID)
	var last time.Duration
	deadline := time.After(30 * time.Second)
	for i, st := range streams {
		select {
		case at := <-st.seen(want):
			last = max(last, at.Sub(placed))
		case <-deadline:
			t.Fatalf("stream %d did not get the order within 30 s", i)
		}
	}
	after := rss(t, p.Cmd.Process.Pid)
	mib := func(kb int64) float64 { return float64(kb) / 1024 }
	t.Logf("RSS with no stream %.1f MiB, with %d streams open %.1f MiB (+%.1f MiB), after the order %.1f MiB",
		mib(before), len(streams), mib(open), mib(open-before), mib(after))
	t.Logf("POST /store/orders answered in %v; its order.placed reached all %d streams %v after it was sent", answered.Round(time.Millisecond), len(streams), last.Round(time.Millisecond))
	if open-before > 100*1024 {
		t.Errorf("1,000 streams hold %.1f MiB more, over the 100 MiB target", mib(open-before))
	}
	if last > time.Second {
		t.Errorf("the order reached every stream after %v, over the 1 s target", last)
	}
}

// benchPet makes a pet with plenty of stock and returns its id.
func (s *server) benchPet(t *testing.T) int64 {
	t.Helper()
	var c, p struct{ ID int64 }
	s.call(t, s.AdminKey, "POST", "/categories", map[string]any{"name": "Bench"}, http.StatusCreated, &c)
	s.call(t, s.AdminKey, "POST", "/pets", map[string]any{"name": "Bench pet", "categoryId": c.ID, "price": 100}, http.StatusCreated, &p)
	s.call(t, s.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", p.ID), map[string]any{"quantity": 1000}, http.StatusOK, nil)
	return p.ID
}

// benchStream is one open stream whose data lines a goroutine reads.
type benchStream struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	lines  []string
	times  []time.Time
	more   chan struct{}
}

var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: -1}}

func (s *server) openBenchStream(t *testing.T, key string) *benchStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/events/stream?type=order.placed", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := benchClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		cancel()
		t.Fatalf("open a stream: %d", res.StatusCode)
	}
	st := &benchStream{cancel: cancel, more: make(chan struct{}, 1)}
	r := bufio.NewReader(res.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("the stream opened with %q, %v", line, err)
	}
	go func() {
		defer res.Body.Close()
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "data: ") {
				now := time.Now()
				st.mu.Lock()
				st.lines, st.times = append(st.lines, line), append(st.times, now)
				st.mu.Unlock()
				select {
				case st.more <- struct{}{}:
				default:
				}
			}
		}
	}()
	return st
}

// seen delivers when the stream got a data line holding want.
func (st *benchStream) seen(want string) <-chan time.Time {
	out := make(chan time.Time, 1)
	go func() {
		for {
			st.mu.Lock()
			for i, l := range st.lines {
				if strings.Contains(l, want) {
					out <- st.times[i]
					st.mu.Unlock()
					return
				}
			}
			st.mu.Unlock()
			<-st.more
		}
	}()
	return out
}

// rss is the resident memory of process pid, in KiB (Linux).
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("resident memory: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
