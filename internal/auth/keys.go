// Package auth makes and checks credentials: API keys (made here, stored only as a
// hash, looked up through a short-lived cache) and passwords (argon2id).
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"strings"
)

// KeyPrefix starts every API key, so that secret scanners can recognise leaked keys.
const KeyPrefix = "psk_"

const (
	keyRandomBytes = 20                                  // 160 bits of entropy
	keyLength      = len(KeyPrefix) + keyRandomBytes*8/5 // psk_ + 32 base32 characters
	shownPrefixLen = len(KeyPrefix) + 8                  // what listings show: psk_ and 8 characters
)

var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewKey makes a new random API key and returns it with the prefix that listings
// show and the hash to store.
func NewKey() (key, prefix string, hash []byte) {
	var b [keyRandomBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	key = KeyPrefix + keyEncoding.EncodeToString(b[:])
	return key, key[:shownPrefixLen], HashKey(key)
}

// HashKey returns the stored form of a key. A fast hash is right here: keys carry 160
// random bits, so unlike passwords they cannot be guessed from their hash.
func HashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// WellFormed reports whether s has the shape of a key this service makes, so that
// garbage is refused without a database lookup.
func WellFormed(s string) bool {
	if len(s) != keyLength || !strings.HasPrefix(s, KeyPrefix) {
		return false
	}
	for i := len(KeyPrefix); i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// The prefixes of the one-time tokens of links, so that secret scanners find them
// too: an invitation's (psi_) and a password reset's (psr_).
const (
	InvitationPrefix = "psi_"
	ResetPrefix      = "psr_"
)

// tokenRandomBytes is the entropy of a one-time token: 256 bits.
const tokenRandomBytes = 32

// NewToken makes a one-time token with prefix (256 random bits, base64url) and
// returns it with the hash to store (HashKey: its SHA-256).
func NewToken(prefix string) (token string, hash []byte) {
	var b [tokenRandomBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	token = prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashKey(token)
}

// TokenWellFormed reports whether s has the shape of a token NewToken(prefix) makes,
// so that garbage is refused without a database lookup.
func TokenWellFormed(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(tokenRandomBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}
