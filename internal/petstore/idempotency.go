package petstore

import (
	"bytes"
	"time"
)

// IdempotencyRecord is what is stored for an Idempotency-Key.
type IdempotencyRecord struct {
	RequestHash []byte
	ClaimedAt   time.Time
	// Response is nil while the request that claimed the key runs.
	Response *StoredResponse
}

// ClaimVerdict is what a new request with a used key gets.
type ClaimVerdict int

// The verdicts of JudgeClaim.
const (
	// ClaimAfresh: the key expired, or its request died; the new request takes it.
	ClaimAfresh ClaimVerdict = iota
	// Replay: the new request gets the stored response.
	Replay
)

// JudgeClaim applies the Idempotency-Key rules to a request with requestHash, at now,
// for a key already stored as rec: a key older than ttl, or a claim unanswered for
// ClaimTimeout (its request died), is claimed afresh; another body is
// EIdempotencyKeyReused; a claim still running is EConflict; an answered one is
// replayed.
func JudgeClaim(rec IdempotencyRecord, requestHash []byte, now time.Time, ttl time.Duration) (ClaimVerdict, error) {
	age := now.Sub(rec.ClaimedAt)
	switch {
	case age >= ttl, rec.Response == nil && age >= ClaimTimeout:
		return ClaimAfresh, nil
	case !bytes.Equal(rec.RequestHash, requestHash):
		return 0, Errorf(EIdempotencyKeyReused, "This Idempotency-Key was already used with another request body.")
	case rec.Response == nil:
		return 0, Errorf(EConflict, "A request with this Idempotency-Key is still being processed; retry later.")
	}
	return Replay, nil
}
