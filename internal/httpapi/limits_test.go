package httpapi_test

import (
	"context"
	"fmt"
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
