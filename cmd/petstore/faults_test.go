package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/postgres/pgtest"
)

// Faults as tests: the database goes away under traffic and comes back. Every answer
// meanwhile is a success or a fast 503 with Retry-After, never a 500; the server
// recovers by itself; and it is left with no more goroutines than before.

// faultProxy stands between the server and PostgreSQL, so that a test can cut the
// database off without stopping the server every other test uses.
type faultProxy struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	up       bool
	// silent makes a cut proxy accept connections and never answer on them, as a
	// server that hangs does, instead of ending them.
	silent bool
	conns  map[net.Conn]struct{}
	// copying counts the proxy's own goroutines, two per open connection: the pool
	// keeps idle connections, which are not the server's leak.
	copying atomic.Int64
}

func newFaultProxy(t *testing.T, upstream string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, upstream: upstream, up: true, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.setUp(false) })
	go p.serve()
	return p
}

func (p *faultProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		// Checked and tracked under one lock, so that a cut cannot miss a connection
		// opened while it ran.
		p.mu.Lock()
		if !p.up {
			if p.silent {
				p.conns[c] = struct{}{} // held open, unanswered
			} else {
				c.Close() // as a stopped server: the connection ends at once
			}
			p.mu.Unlock()
			u.Close()
			continue
		}
		p.conns[c], p.conns[u] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.copying.Add(2)
		go func() { defer p.copying.Add(-1); io.Copy(u, c); u.Close(); c.Close() }()
		go func() { defer p.copying.Add(-1); io.Copy(c, u); u.Close(); c.Close() }()
	}
}

// hang cuts every open connection, and from then on accepts new ones and never
// answers on them.
func (p *faultProxy) hang() {
	p.mu.Lock()
	p.silent = true
	p.mu.Unlock()
	p.setUp(false)
}

// setUp lets connections through, or cuts every open one and refuses new ones.
func (p *faultProxy) setUp(up bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up = up
	if !up {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

// traffic is a few clients ordering and reading as fast as they can, recording every
// answer that is neither a success nor a proper 503.
type traffic struct {
	t       *testing.T
	base    string
	key     string
	petID   int64
	client  *http.Client
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	bad     []string
	ok, out int
	slowest time.Duration
	// placed counts every order answered 201, for the books at the end.
	placed int
}

func (tr *traffic) start(workers int) {
	tr.stop = make(chan struct{})
	for w := range workers {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-tr.stop:
					return
				default:
				}
				var req *http.Request
				if (i+w)%2 == 0 {
					req, _ = http.NewRequest("POST", tr.base+"/v1/store/orders", strings.NewReader(fmt.Sprintf(`{"petId":%d,"quantity":1}`, tr.petID)))
					req.Header.Set("Content-Type", "application/json")
				} else {
					req, _ = http.NewRequest("GET", fmt.Sprintf("%s/v1/store/inventory/%d", tr.base, tr.petID), nil)
				}
				req.Header.Set("Authorization", "Bearer "+tr.key)
				began := time.Now()
				res, err := tr.client.Do(req)
				took := time.Since(began)
				tr.mu.Lock()
				tr.slowest = max(tr.slowest, took)
				switch {
				case err != nil:
					tr.bad = append(tr.bad, err.Error())
				case res.StatusCode < 300:
					tr.ok++
					if res.StatusCode == 201 {
						tr.placed++
					}
				case res.StatusCode == 503 && res.Header.Get("Retry-After") != "":
					tr.out++
				default:
					body, _ := io.ReadAll(res.Body)
					tr.bad = append(tr.bad, fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, res.StatusCode, body))
				}
				tr.mu.Unlock()
				if res != nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				if res != nil && res.StatusCode == 503 {
					time.Sleep(10 * time.Millisecond) // as a client honouring Retry-After would, a little
				}
			}
		}()
	}
}

func (tr *traffic) halt() {
	close(tr.stop)
	tr.wg.Wait()
}

// counts returns the successes and 503s since the last call, and the slowest answer.
func (tr *traffic) counts() (ok, out int, slowest time.Duration, bad []string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ok, out, slowest, bad = tr.ok, tr.out, tr.slowest, tr.bad
	tr.ok, tr.out, tr.slowest, tr.bad = 0, 0, 0, nil
	return ok, out, slowest, bad
}

// waitForSuccess waits until the traffic succeeds again.
func (tr *traffic) waitForSuccess(within time.Duration) time.Duration {
	tr.t.Helper()
	began := time.Now()
	for time.Since(began) < within {
		time.Sleep(50 * time.Millisecond)
		tr.mu.Lock()
		ok := tr.ok
		tr.mu.Unlock()
		if ok > 0 {
			return time.Since(began)
		}
	}
	tr.t.Fatalf("no request succeeded within %v of the database coming back", within)
	return 0
}

func TestPostgresStoppedAndBackMidTrafficAnswers503AndRecovers(t *testing.T) {
	dsn := pgtest.Schema(t, pgtest.URL(t))
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, u.Host)
	app := fmt.Sprintf("petstore-fault-%d", time.Now().UnixNano())
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	u.Host = proxy.ln.Addr().String()

	base, stdout := startServe(t, noEnv, "--database", u.String(), "--admin-addr", "off", "--rate-limit", "0")
	admin := keyPattern.FindString(stdout.String())
	if admin == "" {
		t.Fatalf("no admin key printed:\n%s", stdout)
	}
	petID := makePet(t, base, admin, 1_000_000)

	// Before any traffic: what the traffic starts (clients, connections, the proxy's
	// copies) must all be gone again at the end.
	goroutines := serverGoroutines() - int(proxy.copying.Load())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: 30 * time.Second}
	tr := &traffic{t: t, base: base, key: admin, petID: petID, client: client}
	tr.start(4)
	time.Sleep(500 * time.Millisecond)
	if ok, _, _, bad := tr.counts(); ok == 0 || len(bad) > 0 {
		t.Fatalf("before the fault: %d successes, failures %q", ok, bad)
	}

	// 1. The database is stopped: connections are cut and new ones refused.
	proxy.setUp(false)
	time.Sleep(2 * time.Second)
	_, unavailable, slowest, bad := tr.counts()
	if len(bad) > 0 {
		t.Errorf("while the database was stopped, answers other than 503: %q", first(bad, 5))
	}
	if unavailable == 0 || slowest > 3*time.Second {
		t.Errorf("while the database was stopped: %d answers of 503, the slowest in %v; want many, each under 3 s (the handler's budget is 10 s)", unavailable, slowest)
	}
	proxy.setUp(true)
	t.Logf("stopped: %d × 503, slowest %v; back after %v", unavailable, slowest, tr.waitForSuccess(15*time.Second))

	// 2. The server shuts the sessions down under the queries (SQLSTATE 57P01).
	tr.counts()
	for range 5 {
		terminate(t, pgtest.URL(t), app)
		time.Sleep(200 * time.Millisecond)
	}
	ok, unavailable, _, bad := tr.counts()
	if len(bad) > 0 {
		t.Errorf("while sessions were terminated, answers other than 503: %q", first(bad, 5))
	}
	t.Logf("terminated sessions: %d successes, %d × 503; back after %v", ok, unavailable, tr.waitForSuccess(15*time.Second))

	tr.halt()
	client.CloseIdleConnections()
	// No goroutine is left behind by the failed connections, queries and batches.
	deadline := time.Now().Add(10 * time.Second)
	server := func() int { return serverGoroutines() - int(proxy.copying.Load()) }
	for server() > goroutines && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := server(); n > goroutines {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the faults, %d before:\n%s", n, goroutines, buf[:runtime.Stack(buf, true)])
	}
}

// serverGoroutines counts the process's goroutines but pgx's background readers: a
// pooled connection that wrote a large message keeps one blocked in Read until the
// server next sends it something (pgconn/internal/bgreader), which is one per idle
// connection of a bounded pool, not a leak, and comes and goes with the traffic.
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if len(bytes.TrimSpace(g)) > 0 && !bytes.Contains(g, []byte("bgreader.(*BGReader).bgRead")) {
			count++
		}
	}
	return count
}

// terminate ends every session of the application named app, as an operator's
// pg_terminate_backend or a shutting-down server would (SQLSTATE 57P01).
func terminate(t *testing.T, dbURL, app string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, app); err != nil {
		t.Fatal(err)
	}
}

// makePet creates a category and a pet with stock through the API and returns its id.
func makePet(t *testing.T, base, admin string, stock int) int64 {
	t.Helper()
	var id int64
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/v1/categories", `{"name":"Faults"}`},
		{"POST", "/v1/pets", `{"name":"Rex","categoryId":1,"price":1999}`},
		{"PUT", "/v1/store/inventory/%d", fmt.Sprintf(`{"quantity":%d}`, stock)},
	} {
		path := step.path
		if strings.Contains(path, "%d") {
			path = fmt.Sprintf(path, id)
		}
		req, _ := http.NewRequest(step.method, base+path, strings.NewReader(step.body))
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", step.method, path, res.StatusCode, body)
		}
		fmt.Sscanf(string(body), `{"id":%d`, &id)
	}
	return id
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// A full disk under SQLite: writes answer 503 (never 500), /readyz says the service
// cannot take writes, nothing half-written is left, and when space is freed the
// server recovers by itself. The disk is a small tmpfs mounted for the test.
func TestSQLiteDiskFullMidTrafficAnswers503AndRecovers(t *testing.T) {
	dir := smallDisk(t, "8m")
	base, stdout := startServe(t, noEnv, "--database", filepath.Join(dir, "petstore.db"), "--admin-addr", "off", "--rate-limit", "0")
	admin := keyPattern.FindString(stdout.String())
	const stock = 1_000_000
	petID := makePet(t, base, admin, stock)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: 30 * time.Second}
	tr := &traffic{t: t, base: base, key: admin, petID: petID, client: client}
	tr.start(4)
	time.Sleep(300 * time.Millisecond)

	filler := fill(t, dir)
	waitUnready(t, base, "the disk filled")
	tr.counts()
	time.Sleep(time.Second)
	ok, unavailable, slowest, bad := tr.counts()
	if len(bad) > 0 {
		t.Errorf("with the disk full, answers other than 503: %q", first(bad, 5))
	}
	if unavailable == 0 || slowest > 3*time.Second {
		t.Errorf("with the disk full: %d successes, %d × 503, the slowest in %v; want 503s, each under 3 s (the handler's budget is 10 s)", ok, unavailable, slowest)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	t.Logf("disk full: %d reads served, %d × 503, slowest %v; back after %v", ok, unavailable, slowest, tr.waitForSuccess(15*time.Second))
	// /readyz also makes a write of its own, and orders of the traffic that were
	// failing when the first one committed may still be finishing: it is ready again
	// soon after, not in the same instant (the race run on a busy machine once read it
	// between the two).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := status(t, base+"/readyz")
		if got == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("/readyz answers %d 5 s after space was freed and an order committed", got)
			break
		}
	}
	tr.halt()
	_, _, _, bad = tr.counts()
	if len(bad) > 0 {
		t.Errorf("after recovery, answers other than 503: %q", first(bad, 5))
	}
	// The books: every unit that left the stock is in an order answered 201.
	var inv struct{ Quantity int }
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/v1/store/inventory/%d", base, petID), nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(res.Body).Decode(&inv)
	res.Body.Close()
	if sold := stock - inv.Quantity; sold != tr.placed {
		t.Errorf("%d units left the stock, %d orders were answered 201", sold, tr.placed)
	}
}

// smallDisk mounts a tmpfs of the given size for the test and returns its path.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small disk needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v: %s", err, out)
	}
	// Registered after TempDir's clean-up, so it runs first: unmount, then remove.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
		}
	})
	return dir
}

// fill writes a file into dir until the disk is full, and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			return path
		}
	}
}

func status(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// The disk under SQLite turns read-only mid-traffic, as ext4 does after an I/O error
// (errors=remount-ro): writes answer 503 (never 500), reads go on, and /readyz says the
// service cannot take writes. (Such a filesystem needs fsck and a new mount; the server
// serves reads until then.) A server started on a read-only database refuses to start.
func TestSQLiteOnADiskTurnedReadOnlyAnswers503ForWrites(t *testing.T) {
	dir, dev := ext4Disk(t)
	db := filepath.Join(dir, "petstore.db")
	base, stdout := startServe(t, noEnv, "--database", db, "--admin-addr", "off", "--rate-limit", "0")
	admin := keyPattern.FindString(stdout.String())
	petID := makePet(t, base, admin, 1_000_000)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: 30 * time.Second}
	tr := &traffic{t: t, base: base, key: admin, petID: petID, client: client}
	tr.start(4)
	time.Sleep(300 * time.Millisecond)

	if err := os.WriteFile("/sys/fs/ext4/"+dev+"/trigger_fs_error", []byte("1"), 0); err != nil {
		t.Fatalf("make the filesystem fail: %v", err)
	}
	waitUnready(t, base, "the disk turned read-only")
	tr.counts()
	time.Sleep(time.Second)
	tr.halt()
	ok, unavailable, slowest, bad := tr.counts()
	if len(bad) > 0 {
		t.Errorf("on a read-only disk, answers other than 503: %q", first(bad, 5))
	}
	if ok == 0 || unavailable == 0 || slowest > 3*time.Second {
		t.Errorf("on a read-only disk: %d reads served, %d × 503, the slowest in %v; want both, each under 3 s (the handler's budget is 10 s)", ok, unavailable, slowest)
	}
	t.Logf("read-only disk: %d reads served, %d × 503, slowest %v", ok, unavailable, slowest)

	// A new server on the read-only database does not start half a service.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errOut strings.Builder
	err := run(ctx, []string{"serve", "--addr", freeAddr(t), "--database", db, "--admin-addr", "off"}, noEnv, io.Discard, &errOut)
	if err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Errorf("serve on a read-only database returned %v, want a refusal to start", err)
	}
}

// ext4Disk mounts a small ext4 filesystem from a file, which turns read-only on its
// first error, and returns its path and the name of its loop device.
func ext4Disk(t *testing.T) (dir, dev string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a filesystem needs root")
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	dir = t.TempDir()
	for _, cmd := range [][]string{
		{"truncate", "-s", "32M", img},
		{"mkfs.ext4", "-q", img},
		{"mount", "-o", "loop,errors=remount-ro", img, dir},
	} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(cmd, " "), err, out)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
			exec.Command("umount", "-l", dir).Run() // at least detach it
		}
	})
	out, err := exec.Command("losetup", "-j", img).Output()
	if err != nil {
		t.Fatal(err)
	}
	dev, _, _ = strings.Cut(string(out), ":")
	return dir, filepath.Base(dev)
}

// waitUnready waits until /readyz says the store cannot take writes, after what.
func waitUnready(t *testing.T, base, after string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for status(t, base+"/readyz") != 503 {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still answers 200 ten seconds after %s", after)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Redis that stops answering under a running server, with the server's own Redis
// settings: API calls still succeed, each within a moment (the limiter gives up after
// 250 ms, without retrying), and the limit on sign-ups still holds, counted in the
// process's memory.
func TestServeWithRedisThatHangsKeepsAnsweringAndLimitingPasswords(t *testing.T) {
	redisURL := os.Getenv("PETSTORE_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("PETSTORE_TEST_REDIS_URL is not set")
	}
	u, err := url.Parse(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	prefix := fmt.Sprintf("petstore-test-%d:", time.Now().UnixNano())
	base, stdout := startServe(t, noEnv, "--database", filepath.Join(t.TempDir(), "petstore.db"), "--admin-addr", "off",
		"--redis", u.String(), "--redis-prefix", prefix)
	admin := keyPattern.FindString(stdout.String())

	proxy.hang()
	var slowest time.Duration
	for range 5 {
		began := time.Now()
		if status, body := get(t, base+"/v1/categories", admin); status != 200 {
			t.Fatalf("with Redis hanging, GET answered %d %s", status, body)
		}
		slowest = max(slowest, time.Since(began))
	}
	// One read time-out per limiter call: serve's 250 ms, not go-redis's 3 s default.
	if slowest > 900*time.Millisecond {
		t.Errorf("with Redis hanging, the slowest GET took %v; want about one 250 ms limiter time-out", slowest)
	}
	// Ten sign-ups take the minute's allowance (it refills one every six seconds, and
	// each sign-up pays a hash and a limiter time-out: the count allows for refills).
	began := time.Now()
	signUp := func(email string) *http.Response {
		res, err := http.Post(base+"/v1/accounts", "application/json",
			strings.NewReader(fmt.Sprintf(`{"email":%q,"password":"correct horse battery"}`, email)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	var last *http.Response
	for i := range 10 {
		if last = signUp(fmt.Sprintf("h%d@example.com", i)); last.StatusCode != 201 {
			t.Fatalf("sign-up %d with Redis hanging: %d", i, last.StatusCode)
		}
	}
	if left, refilled := remaining(t, last, "credentials"), int(time.Since(began)/(6*time.Second)); left > refilled {
		t.Errorf("after ten sign-ups with Redis hanging, %d left of ten a minute (%d refilled): the limit lapsed", left, refilled)
	}
	if res := signUp("h-more@example.com"); time.Since(began) < 6*time.Second && res.StatusCode != 429 {
		t.Errorf("the 11th sign-up with Redis hanging answered %d, want 429: the limit lapsed", res.StatusCode)
	}
	t.Logf("Redis hanging: slowest GET %v", slowest)
}
