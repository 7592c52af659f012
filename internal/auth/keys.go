// Package auth makes and checks credentials: API keys (made here, stored only as a
// hash, looked up through a short-lived cache) and passwords (argon2id).
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
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
