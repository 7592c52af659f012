package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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
