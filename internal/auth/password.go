package auth

import (
	"fmt"

	"github.com/alexedwards/argon2id"
)

// PasswordParams are the argon2id cost parameters.
type PasswordParams = argon2id.Params

// DefaultPasswordParams follow OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane).
var DefaultPasswordParams = PasswordParams{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Passwords hashes and checks passwords.
type Passwords struct {
	Params PasswordParams
}

// Hash returns the PHC-encoded argon2id hash of password.
func (p Passwords) Hash(password string) (string, error) {
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

// Check reports whether password matches hash. An empty hash (a key-only account)
// matches nothing.
func (p Passwords) Check(password, hash string) bool {
	if hash == "" {
		return false
	}
	ok, err := argon2id.ComparePasswordAndHash(password, hash)
	return err == nil && ok
}
