package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
	for i := range 10 {
		res := post(servers[i%2], "/v1/accounts", fmt.Sprintf(`{"email":"u%d@example.com","password":"correct horse battery"}`, i))
		if res.StatusCode != 201 {
			t.Fatalf("sign-up %d: %d", i, res.StatusCode)
		}
	}
	for _, base := range servers {
		if res := post(base, "/v1/accounts", `{"email":"more@example.com","password":"correct horse battery"}`); res.StatusCode != 429 || res.Header.Get("Retry-After") == "" {
			t.Errorf("the 11th sign-up of the minute answered %d (Retry-After %q), want 429", res.StatusCode, res.Header.Get("Retry-After"))
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
