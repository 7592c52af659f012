package httpapi_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

// loginGate holds every login of one email in the store (after the limits, before
// the password check) until released, and counts them: a count of the password
// checks the logins reach, and a way to have many in flight at once.
type loginGate struct {
	petstore.Store
	email   string
	entered chan struct{}
	release chan struct{}
}

func (g *loginGate) AccountByEmail(ctx context.Context, email string) (petstore.Account, string, error) {
	if email == g.email {
		g.entered <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
		}
	}
	return g.Store.AccountByEmail(ctx, email)
}

// A burst of parallel guesses at one email, each from an address of its own, gets no
// more password checks than the failed-login limit, however long each check takes:
// the rest wait, and so does the right password sent while the guesses are checked.
func TestParallelGuessesGetNoMoreChecksThanTheFailedLoginLimit(t *testing.T) {
	const (
		email   = "kate@example.com"
		guesses = 39
	)
	gate := &loginGate{email: email, entered: make(chan struct{}, guesses+1), release: make(chan struct{})}
	a := newTestAPI(t, func(c *httpapi.Config) { gate.Store, c.Store = c.Store, gate })
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": email, "password": "correct horse battery"}}).expect(201, "")

	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		wg       sync.WaitGroup
		answered = make(chan int, guesses+1)
	)
	login := func(from, password string) {
		res := a.do(t, req{Method: "POST", Path: "/v1/api-keys", From: from, Auth: basic(email, password), Body: map[string]any{"name": "k"}})
		answered <- res.Status
	}
	// settle waits until each of n requests has answered or is held at the gate.
	checks := 0
	settle := func(n int) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for range n {
			select {
			case status := <-answered:
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			case <-gate.entered:
				checks++
			case <-timeout:
				t.Fatalf("requests neither answered nor reached the password check in 10 s (%d checks so far)", checks)
			}
		}
	}

	start := make(chan struct{})
	for i := range guesses {
		wg.Go(func() {
			<-start
			login(fmt.Sprintf("127.0.0.%d", i+2), "a wrong guess!")
		})
	}
	close(start)
	settle(guesses)
	wg.Go(func() { login("127.0.0.200", "correct horse battery") })
	settle(1)
	close(gate.release)
	wg.Wait()
	for len(answered) > 0 {
		statuses[<-answered]++
	}

	if checks > httpapi.DefaultFailedLoginLimit {
		t.Errorf("%d logins reached the password check at once, want at most the limit, %d", checks, httpapi.DefaultFailedLoginLimit)
	}
	if statuses[201] != 0 {
		t.Error("the right password, sent while the guesses were checked, got in")
	}
	if statuses[401] != checks || statuses[429] != guesses+1-checks {
		t.Errorf("answers %v, want %d × 401 (the guesses checked) and the rest 429", statuses, checks)
	}
}

// The right password is not a failure: logging in again and again never locks an
// account, while wrong guesses still count.
func TestRightPasswordsDoNotUseTheFailedLoginLimit(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.CredentialLimit = -1 })
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "lee@example.com", "password": "correct horse battery"}}).expect(201, "")
	for range 2 * httpapi.DefaultFailedLoginLimit {
		a.do(t, req{Method: "GET", Path: "/v1/api-keys", Auth: basic("lee@example.com", "correct horse battery")}).expect(200, "")
	}
	for range httpapi.DefaultFailedLoginLimit {
		a.do(t, req{Method: "GET", Path: "/v1/api-keys", Auth: basic("lee@example.com", "a wrong guess!")}).expect(401, "unauthorized")
	}
	a.do(t, req{Method: "GET", Path: "/v1/api-keys", Auth: basic("lee@example.com", "correct horse battery")}).expect(429, "rate_limited")
}

// behindProxy trusts the loopback proxy of the tests, whose X-Forwarded-For names the
// client, so that a test can be clients at any address, IPv6 included.
func behindProxy(c *httpapi.Config) {
	c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
}

// An IPv6 client holds a whole /64, so the limits per address count it by its /64:
// sign-ups from forty addresses of one /64 get the ten a minute of one address, and
// an address of another /64, or an IPv4-mapped one, has an allowance of its own.
func TestSignUpsFromOneSlash64ShareOneAllowance(t *testing.T) {
	a := newTestAPI(t, behindProxy)
	signUp := func(i int, client string) *response {
		return a.do(t, req{Method: "POST", Path: "/v1/accounts", Header: map[string]string{"X-Forwarded-For": client},
			Body: map[string]any{"email": fmt.Sprintf("v6-%d@example.com", i), "password": "correct horse battery"}})
	}
	statuses := map[int]int{}
	for i := range 40 {
		statuses[signUp(i, fmt.Sprintf("2001:db8:7:9:%x::%x", i, i+1)).Status]++
	}
	if statuses[201] != httpapi.DefaultCredentialLimit || statuses[429] != 40-httpapi.DefaultCredentialLimit {
		t.Errorf("40 sign-ups from one /64: %v, want %d × 201 and the rest 429", statuses, httpapi.DefaultCredentialLimit)
	}
	signUp(100, "2001:db8:7:a::1").expect(201, "")
	for i := range httpapi.DefaultCredentialLimit {
		signUp(200+i, "::ffff:198.51.100.4").expect(201, "")
	}
	signUp(300, "198.51.100.4").expect(429, "rate_limited") // the same IPv4 client
}

// The general limit of calls without a valid key counts an IPv6 client by its /64
// too: made-up keys from fresh addresses of one /64 get no fresh allowance.
func TestCallsWithoutAKeyFromOneSlash64ShareOneAllowance(t *testing.T) {
	a := newTestAPI(t, behindProxy, withRateLimit(2))
	statuses := map[int]int{}
	for i := range 6 {
		res := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: "psk_made_up", Header: map[string]string{"X-Forwarded-For": fmt.Sprintf("2001:db8::%x", i+1)}})
		statuses[res.Status]++
	}
	if statuses[429] < 3 {
		t.Errorf("6 calls in a row from one /64 under a limit of 2 a second: %v, want at least 3 × 429", statuses)
	}
	a.do(t, req{Method: "GET", Path: "/v1/pets", Key: "psk_made_up", Header: map[string]string{"X-Forwarded-For": "2001:db8:0:1::1"}}).expect(401, "unauthorized")
}
