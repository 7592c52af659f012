package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/postgres/pgtest"
)

// With --redis, two server processes share the limits on passwords: an address gets
// ten sign-ups a minute in all, and an email five failed logins in all, wherever the
// requests land.
func TestServeSharesThePasswordLimitsThroughRedis(t *testing.T) {
	redisURL := os.Getenv("PETSTORE_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("PETSTORE_TEST_REDIS_URL is not set")
	}
	db := filepath.Join(t.TempDir(), "petstore.db")
	// A prefix of this run's own, so that other runs' counts are not this one's.
	prefix := fmt.Sprintf("petstore-test-%d:", time.Now().UnixNano())
	args := []string{"--database", db, "--no-bootstrap", "--admin-addr", "off", "--redis", redisURL, "--redis-prefix", prefix}
	a, _ := startServe(t, noEnv, args...)
	b, _ := startServe(t, noEnv, args...)
	servers := []string{a, b}

	post := func(base, path, body string, basic ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if len(basic) == 2 {
			req.SetBasicAuth(basic[0], basic[1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	// Ten sign-ups, alternating: the allowance left after the last is the minute's
	// allowance less ten, not less five. (It refills one every six seconds, and each
	// sign-up costs a memory-hard hash, slow under the race detector: the count allows
	// for what refilled meanwhile.)
	began := time.Now()
	var last *http.Response
	for i := range 10 {
		last = post(servers[i%2], "/v1/accounts", fmt.Sprintf(`{"email":"u%d@example.com","password":"correct horse battery"}`, i))
		if last.StatusCode != 201 {
			t.Fatalf("sign-up %d: %d", i, last.StatusCode)
		}
	}
	if left, refilled := remaining(t, last, "credentials"), int(time.Since(began)/(6*time.Second)); left > refilled {
		t.Errorf("after ten sign-ups on two processes, %d left of ten a minute (%d refilled): the processes count apart", left, refilled)
	}
	var more []*http.Response
	for _, base := range servers {
		more = append(more, post(base, "/v1/accounts", `{"email":"more@example.com","password":"correct horse battery"}`))
	}
	// Checked only when nothing can have refilled by the last answer.
	if time.Since(began) < 6*time.Second {
		for _, res := range more {
			if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" {
				t.Errorf("the 11th sign-up of the minute answered %d (Retry-After %q), want 429", res.StatusCode, res.Header.Get("Retry-After"))
			}
		}
	}

	// The failed logins of one email, across both processes (from other addresses as
	// far as the per-address limit knows: it is off in this second pair).
	args = append(args[:len(args):len(args)], "--credential-limit", "0")
	c, _ := startServe(t, noEnv, args...)
	d, _ := startServe(t, noEnv, args...)
	for i, base := range []string{c, d, c, d, c} {
		if res := post(base, "/v1/api-keys", `{"name":"k"}`, "u0@example.com", "a wrong guess!"); res.StatusCode != 401 {
			t.Fatalf("wrong password %d: %d, want 401", i, res.StatusCode)
		}
	}
	for _, base := range []string{c, d} {
		if res := post(base, "/v1/api-keys", `{"name":"k"}`, "u0@example.com", "correct horse battery"); res.StatusCode != 429 {
			t.Errorf("after five failures in all, the right password answered %d, want 429", res.StatusCode)
		}
	}
	if res := post(d, "/v1/api-keys", `{"name":"k"}`, "u1@example.com", "correct horse battery"); res.StatusCode != 201 {
		t.Errorf("another email answered %d, want 201", res.StatusCode)
	}
}

// Two processes of the built binary, sharing Redis and PostgreSQL, give a burst of
// parallel guesses at one email, from forty addresses and split between them, no more
// password checks in all than the failed-login limit; the right password then waits
// on both.
func TestTheBinaryHoldsTheFailedLoginLimitAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	redisURL := os.Getenv("PETSTORE_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("PETSTORE_TEST_REDIS_URL is not set")
	}
	dsn := pgtest.Schema(t, pgtest.URL(t))
	bin := buildPetstore(t)
	prefix := fmt.Sprintf("petstore-test-%d:", time.Now().UnixNano())
	var servers []string
	for range 2 {
		p := startBinary(t, bin, "--addr", freeAddr(t), "--database", dsn, "--no-bootstrap", "--admin-addr", "off",
			"--redis", redisURL, "--redis-prefix", prefix)
		servers = append(servers, p.URL)
	}
	login := func(base, from, password string) int {
		req, _ := http.NewRequest("POST", base+"/v1/api-keys", strings.NewReader(`{"name":"k"}`))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("kate@example.com", password)
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}, Timeout: 30 * time.Second}
		res, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	req, _ := http.NewRequest("POST", servers[0]+"/v1/accounts", strings.NewReader(`{"email":"kate@example.com","password":"correct horse battery"}`))
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 201 {
		t.Fatalf("sign-up: %v %v", res, err)
	}

	const guesses = 40
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	for i := range guesses {
		wg.Go(func() {
			<-start
			status := login(servers[i%2], fmt.Sprintf("127.0.0.%d", i+2), "a wrong guess!")
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	t.Logf("%d parallel guesses on two processes: %v", guesses, statuses)
	if statuses[401] == 0 || statuses[401] > 5 || statuses[401]+statuses[429] != guesses {
		t.Errorf("answers %v: want at most the limit's 5 password checks (401) in all, and the rest 429", statuses)
	}
	for i, base := range servers {
		if status := login(base, fmt.Sprintf("127.0.1.%d", i+1), "correct horse battery"); status != 429 {
			t.Errorf("after the burst, the right password answered %d on process %d, want 429", status, i)
		}
	}
}

// remaining reads the allowance left of a policy from a response's RateLimit header
// (`"credentials";r=3;t=18`).
func remaining(t *testing.T, res *http.Response, policy string) int {
	t.Helper()
	for _, v := range res.Header.Values("RateLimit") {
		for _, item := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(item), ";")
			if name != strconv.Quote(policy) {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				if n, ok := strings.CutPrefix(p, "r="); ok {
					r, err := strconv.Atoi(n)
					if err != nil {
						t.Fatalf("RateLimit %q: %v", v, err)
					}
					return r
				}
			}
		}
	}
	t.Fatalf("no %q policy in RateLimit %q", policy, res.Header.Values("RateLimit"))
	return 0
}

// redisServer runs a Redis of the test's own on a free port, which the test may stop,
// hang and start again without touching the Redis other tests share.
type redisServer struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	if os.Getenv("PETSTORE_TEST_REDIS_URL") == "" {
		t.Skip("PETSTORE_TEST_REDIS_URL is not set")
	}
	r := &redisServer{t: t, addr: freeAddr(t)}
	r.start()
	t.Cleanup(func() { r.signal(syscall.SIGCONT); r.stop() })
	return r
}

func (r *redisServer) start() {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	r.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server (the Redis tests need it on PATH): %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if out, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", port, "ping").Output(); err == nil && strings.TrimSpace(string(out)) == "PONG" {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatal("redis-server did not answer PING")
		}
	}
}

// stop kills the server, as a crash would.
func (r *redisServer) stop() {
	if r.cmd != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		r.cmd = nil
	}
}

func (r *redisServer) signal(sig syscall.Signal) {
	if r.cmd != nil {
		r.cmd.Process.Signal(sig)
	}
}

// The general rate limit never lapses: with Redis hung (SIGSTOP) or killed under a
// running server, one key's burst of parallel requests is still limited, counted in
// the process's memory, and each answer comes within a moment; each outage is logged
// once, not per request, and told by a metric; and when Redis is back the count is
// shared again.
func TestServeRateLimitHoldsWhileRedisIsHungOrStopped(t *testing.T) {
	rds := startRedis(t)
	admin := freeAddr(t)
	prefix := fmt.Sprintf("petstore-test-%d:", time.Now().UnixNano())
	base, stdout, logs := startServeLogged(t, noEnv, "--database", filepath.Join(t.TempDir(), "petstore.db"),
		"--admin-addr", admin, "--redis", "redis://"+rds.addr+"/0", "--redis-prefix", prefix, "--rate-limit", "20")
	key := keyPattern.FindString(stdout.String())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}, Timeout: 10 * time.Second}

	// burst sends 100 requests at once with one key, after the bucket refilled.
	burst := func(when string) (ok, limited int) {
		t.Helper()
		time.Sleep(1100 * time.Millisecond) // 20 a second: a second refills the burst
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			slowest time.Duration
			other   []int
		)
		for range 100 {
			wg.Go(func() {
				req, _ := http.NewRequest("GET", base+"/v1/categories", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				began := time.Now()
				res, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				mu.Lock()
				defer mu.Unlock()
				slowest = max(slowest, time.Since(began))
				switch res.StatusCode {
				case 200:
					ok++
				case 429:
					limited++
				default:
					other = append(other, res.StatusCode)
				}
			})
		}
		wg.Wait()
		t.Logf("%s: %d × 200, %d × 429, slowest %v", when, ok, limited, slowest)
		if len(other) > 0 || ok == 0 || ok > 30 || slowest > 2*time.Second {
			t.Errorf("%s: %d × 200, %d × 429, other answers %v, slowest %v; want at most the burst of 20 (and what refills meanwhile) allowed, the rest 429, each within a moment",
				when, ok, limited, other, slowest)
		}
		return ok, limited
	}
	metric := func(name string) string {
		t.Helper()
		_, body := get(t, "http://"+admin+"/metrics", "")
		for line := range strings.SplitSeq(string(body), "\n") {
			if v, found := strings.CutPrefix(line, name+" "); found {
				return v
			}
		}
		t.Fatalf("no %s in /metrics", name)
		return ""
	}
	sharedUp := func() string { return metric("petstore_rate_limit_shared_up") }
	// waitShared sends requests (each outage is probed by a request) until the
	// metric says the limits are shared again.
	waitShared := func(after string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); sharedUp() != "1"; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the limits were not shared again ten seconds after %s", after)
			}
			get(t, base+"/v1/categories", key)
		}
	}

	burst("Redis up")
	if got := sharedUp(); got != "1" {
		t.Errorf("with Redis up, petstore_rate_limit_shared_up is %s", got)
	}

	rds.signal(syscall.SIGSTOP)
	burst("Redis hung (SIGSTOP)")
	burst("Redis still hung")
	if got := sharedUp(); got != "0" {
		t.Errorf("with Redis hung, petstore_rate_limit_shared_up is %s, want 0", got)
	}
	rds.signal(syscall.SIGCONT)
	waitShared("SIGCONT")

	rds.stop()
	burst("Redis killed")
	if got := sharedUp(); got != "0" {
		t.Errorf("with Redis killed, petstore_rate_limit_shared_up is %s, want 0", got)
	}
	rds.start()
	waitShared("Redis restarted")
	// Back in Redis: no decision of the next burst is made in memory.
	local := metric("petstore_rate_limit_local_decisions_total")
	burst("Redis back")
	if now := metric("petstore_rate_limit_local_decisions_total"); now != local || local == "0" {
		t.Errorf("decisions made in memory: %s before Redis came back, %s after a burst with Redis back; want more than 0, and no more", local, now)
	}
	if n := strings.Count(logs.String(), "shared rate limits unavailable"); n != 2 {
		t.Errorf("two outages were logged %d times, want once each:\n%s", n, logs)
	}
	if n := strings.Count(logs.String(), "shared rate limits answer again"); n != 2 {
		t.Errorf("two recoveries were logged %d times, want once each", n)
	}
}
