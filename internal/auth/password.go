package auth

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/alexedwards/argon2id"
)

// PasswordParams are the argon2id cost parameters.
type PasswordParams = argon2id.Params

// DefaultPasswordParams follow OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane).
var DefaultPasswordParams = PasswordParams{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Passwords hashes and checks passwords. Each hash takes Params.Memory of memory, so
// at most a fixed number run at once (see Limit): a burst of sign-ups or password
// guesses waits instead of exhausting memory.
type Passwords struct {
	Params PasswordParams
	slots  chan struct{}
}

// Limit returns p allowing at most n hashes at once.
func (p Passwords) Limit(n int) Passwords {
	p.slots = make(chan struct{}, n)
	return p
}

// Hash returns the PHC-encoded argon2id hash of password.
func (p Passwords) Hash(ctx context.Context, password string) (string, error) {
	if err := p.acquire(ctx); err != nil {
		return "", err
	}
	defer p.release()
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
	if err := p.acquire(ctx); err != nil {
		return false, err
	}
	defer p.release()
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

func (p Passwords) acquire(ctx context.Context) error {
	if p.slots == nil {
		return nil
	}
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p Passwords) release() {
	if p.slots != nil {
		<-p.slots
	}
}
