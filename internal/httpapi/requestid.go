package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// requestID returns the client's X-Request-Id when it is a sane token (1–128
// characters of A-Z a-z 0-9 - _ . :), and a new random id otherwise.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); saneID(id) {
		return id
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func saneID(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}
