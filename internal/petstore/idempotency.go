package petstore

import (
	"bytes"
	"time"
)

// IdempotencyTTL is how long an Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

// IdempotencyKey is the Idempotency-Key of one account's request, with the hash of the
// request's body.
type IdempotencyKey struct {
	AccountID   int64
	Key         string
	RequestHash []byte
}

// KeyRef names an Idempotency-Key: keys are scoped to the account.
type KeyRef struct {
	AccountID int64
	Key       string
}

// Ref returns the name of k.
func (k IdempotencyKey) Ref() KeyRef { return KeyRef{k.AccountID, k.Key} }

// IdempotencyRecord is what is stored for an Idempotency-Key: the body it was first
// used with and the result of that request, the placed order or the refusal. It is
// written in the same transaction as the order, so a key is never stored without its
// result, nor an order placed with a key without the key.
type IdempotencyRecord struct {
	RequestHash []byte
	// CreatedAt is when the first request was answered.
	CreatedAt time.Time
	// Exactly one of Order and Refusal is set.
	Order   *Order
	Refusal *Error
}

// JudgeKey applies the Idempotency-Key rules to a request with requestHash, at now,
// for a key stored as rec: a key older than ttl is used afresh (false, nil); another
// body is EIdempotencyKeyReused; the same body gets the stored result (true, nil).
func JudgeKey(rec IdempotencyRecord, requestHash []byte, now time.Time, ttl time.Duration) (replay bool, err error) {
	switch {
	case now.Sub(rec.CreatedAt) >= ttl:
		return false, nil
	case !bytes.Equal(rec.RequestHash, requestHash):
		return false, errKeyReused
	}
	return true, nil
}

var errKeyReused = Errorf(EIdempotencyKeyReused, "This Idempotency-Key was already used with another request body.")
