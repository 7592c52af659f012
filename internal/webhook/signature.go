// Package webhook holds what delivering an event to a receiver needs, apart from
// storage: the signature of a delivery (Stripe's scheme), the spacing of retries, and
// an HTTP sender that cannot be pointed at the operator's own network.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery.
const (
	// SignatureHeader carries "t=<unix seconds>,v1=<hex HMAC-SHA256>" and one more v1
	// while an endpoint's old secret is still valid after a rotation.
	SignatureHeader = "Petstore-Signature"
	// EventIDHeader carries the event's id, by which a receiver drops a repeat.
	EventIDHeader = "Petstore-Event-Id"
)

// DefaultTolerance is how far a signature's timestamp may be from the receiver's
// clock: a captured delivery replayed later than this is refused.
const DefaultTolerance = 5 * time.Minute

// Sign returns the signature header of body sent at t: one v1 per secret, each the
// hex HMAC-SHA256 of "<t>.<body>" under that secret. A receiver accepts the delivery
// if any v1 matches a secret it holds, so a rotation can overlap.
func Sign(body []byte, t time.Time, secrets ...[]byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(ts)
	for _, secret := range secrets {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(mac(secret, ts, body)))
	}
	return b.String()
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// The reasons Verify refuses a delivery.
var (
	ErrNoSignature = errors.New("webhook: no t= and v1= in the signature header")
	ErrTooOld      = errors.New("webhook: the signature's timestamp is outside the tolerance")
	ErrMismatch    = errors.New("webhook: no v1 signature matches the secret")
)

// Verify checks a signature header against body and secret, as a receiver does: the
// timestamp must be within tolerance of now, and one v1 must be the HMAC of
// "<t>.<body>". Unknown schemes (v0, a future v2) are ignored.
func Verify(header string, body, secret []byte, now time.Time, tolerance time.Duration) error {
	var (
		ts     string
		sigs   [][]byte
		tsSeen bool
	)
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts, tsSeen = v, true
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if !tsSeen || err != nil || len(sigs) == 0 {
		return ErrNoSignature
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return ErrTooOld
	}
	want := mac(secret, ts, body)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return ErrMismatch
}
