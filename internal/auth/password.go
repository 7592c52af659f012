package auth

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/alexedwards/argon2id"

	"github.com/acme-pets/petstore/internal/petstore"
)

// PasswordParams are the argon2id cost parameters.
type PasswordParams = argon2id.Params

// DefaultPasswordParams follow OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane).
var DefaultPasswordParams = PasswordParams{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Passwords hashes and checks passwords. Each hash takes Params.Memory of memory, so
// at most a fixed number run at once (see Limit), in two separate pools: new
// passwords (sign-ups) and checks (logins), so that a flood of sign-ups cannot starve
// logins. A request that finds its pool full waits in a short queue; when the queue
// is full too, it is refused at once with ErrBusy rather than waiting out its budget.
type Passwords struct {
	Params PasswordParams
	hashes *pool
	checks *pool
}

// ErrBusy refuses a password operation when its pool and its queue are full: the
// caller should retry in a moment (503 with Retry-After).
var ErrBusy = petstore.Errorf(petstore.EUnavailable, "Too many passwords are being checked at once; retry in a moment.")

// pool is a semaphore with a bounded queue.
type pool struct {
	slots   chan struct{}
	waiting atomic.Int64
	queue   int64
}

func newPool(n int) *pool {
	return &pool{slots: make(chan struct{}, n), queue: int64(4 * n)}
}

func (p *pool) acquire(ctx context.Context) error {
	if p == nil {
		return nil
	}
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
	}
	if p.waiting.Add(1) > p.queue {
		p.waiting.Add(-1)
		return ErrBusy
	}
	defer p.waiting.Add(-1)
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pool) release() {
	if p != nil {
		<-p.slots
	}
}

// Limit returns p allowing at most n hashes of new passwords and n checks at once,
// each with a queue of 4n.
func (p Passwords) Limit(n int) Passwords {
	p.hashes, p.checks = newPool(n), newPool(n)
	return p
}

// Hash returns the PHC-encoded argon2id hash of password.
func (p Passwords) Hash(ctx context.Context, password string) (string, error) {
	if err := p.hashes.acquire(ctx); err != nil {
		return "", err
	}
	defer p.hashes.release()
	params := p.Params
	if params.Memory == 0 {
		params = DefaultPasswordParams
	}
	h, err := argon2id.CreateHash(password, &params)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

// Check reports whether password matches hash. An empty hash (a key-only account, or
// no account at all) matches nothing, after the same work as a real check, so that
// the time of an answer does not tell which emails have accounts.
func (p Passwords) Check(ctx context.Context, password, hash string) (bool, error) {
	if err := p.checks.acquire(ctx); err != nil {
		return false, err
	}
	defer p.checks.release()
	if hash == "" {
		_, _ = argon2id.ComparePasswordAndHash(password, p.dummyHash())
		return false, nil
	}
	ok, err := argon2id.ComparePasswordAndHash(password, hash)
	return err == nil && ok, nil
}

// dummyHashes holds, per set of parameters, the hash of a random password that checks
// against a missing hash compare with.
var dummyHashes sync.Map

func (p Passwords) dummyHash() string {
	params := p.Params
	if params.Memory == 0 {
		params = DefaultPasswordParams
	}
	if h, ok := dummyHashes.Load(params); ok {
		return h.(string)
	}
	h, err := argon2id.CreateHash(rand.Text(), &params)
	if err != nil {
		panic(fmt.Sprintf("hash a dummy password: %v", err)) // only with invalid parameters
	}
	actual, _ := dummyHashes.LoadOrStore(params, h)
	return actual.(string)
}
