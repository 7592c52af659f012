package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acme-pets/petstore/internal/petstore"
)

// An idempotency key is a row per (account, key). status is NULL while the claim is
// unanswered and holds the HTTP status of the stored response once it is answered.
// created_at is when the key was (last) claimed.

const qAnswerIdempotencyKey = `UPDATE idempotency_keys SET status = $1, location = $2, body = $3
	WHERE account_id = $4 AND key = $5 AND request_hash = $6 AND status IS NULL`

// errClaimLost is what answering a key that the request no longer holds gets.
var errClaimLost = petstore.Errorf(petstore.EConflict,
	"The request with this Idempotency-Key no longer holds it; send the request again.")

// queueAnswer queues the statement that records the response on a claim that is
// still unanswered and still holds the request's hash; answered reads its result.
func queueAnswer(b *pgx.Batch, k petstore.IdempotencyKey, r petstore.StoredResponse) {
	b.Queue(qAnswerIdempotencyKey, r.Status, r.Location, body(r.Body), k.AccountID, k.Key, k.RequestHash)
}

// answered checks the result of qAnswerIdempotencyKey. No row means the claim was
// lost (released, purged, or taken over and answered by another request), and the
// caller's transaction must not go on.
func answered(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return fmt.Errorf("answer idempotency key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errClaimLost
	}
	return nil
}

// committed checks the result of a COMMIT sent by hand: PostgreSQL answers a COMMIT
// of a failed transaction with ROLLBACK, not with an error.
func committed(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tag.String() != "COMMIT" {
		return errors.New("commit: the transaction was rolled back")
	}
	return nil
}

// body keeps an empty body distinct from NULL, so that it reads back as empty.
func body(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// errKeyGone sends ClaimIdempotencyKey round again when the row it found with its
// insert was deleted (released or purged) before it could lock it.
var errKeyGone = errors.New("idempotency key deleted meanwhile")

// ClaimIdempotencyKey claims k for a request starting at now; see
// petstore.IdempotencyStore for the rules. An unanswered claim older than
// petstore.ClaimTimeout is taken over, with this request's hash: its request placed
// nothing.
//
// The claim is race-free across processes: a new key is claimed by one INSERT … ON
// CONFLICT DO NOTHING (one round trip; of requests racing for it exactly one
// inserts, the others wait for it to commit and insert nothing); a key that exists
// is locked (FOR UPDATE) before it is judged and perhaps claimed afresh.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, k petstore.IdempotencyKey, now time.Time, ttl time.Duration) (petstore.StoredResponse, bool, error) {
	now = timestamp(now)
	for {
		tag, err := db.pool.Exec(ctx,
			`INSERT INTO idempotency_keys (account_id, key, request_hash, created_at) VALUES ($1, $2, $3, $4)
			 ON CONFLICT (account_id, key) DO NOTHING`,
			k.AccountID, k.Key, k.RequestHash, now)
		if isForeignKey(err) {
			return petstore.StoredResponse{}, false, petstore.Errorf(petstore.ENotFound, "Account %d was not found.", k.AccountID)
		}
		if err != nil {
			return petstore.StoredResponse{}, false, fmt.Errorf("claim idempotency key: %w", err)
		}
		if tag.RowsAffected() == 1 {
			return petstore.StoredResponse{}, false, nil
		}
		resp, replay, err := db.claimExisting(ctx, k, now, ttl)
		if errors.Is(err, errKeyGone) {
			continue
		}
		if err != nil {
			return petstore.StoredResponse{}, false, fmt.Errorf("claim idempotency key: %w", err)
		}
		return resp, replay, nil
	}
}

// claimExisting judges a key that exists, under its row lock: see
// ClaimIdempotencyKey.
func (db *DB) claimExisting(ctx context.Context, k petstore.IdempotencyKey, now time.Time, ttl time.Duration) (petstore.StoredResponse, bool, error) {
	var (
		resp   petstore.StoredResponse
		replay bool
	)
	err := db.update(ctx, func(tx pgx.Tx) error {
		var (
			hash     []byte
			status   *int
			location string
			stored   []byte
			claimed  time.Time
		)
		err := tx.QueryRow(ctx,
			`SELECT request_hash, status, location, body, created_at FROM idempotency_keys
			 WHERE account_id = $1 AND key = $2 FOR UPDATE`, k.AccountID, k.Key,
		).Scan(&hash, &status, &location, &stored, &claimed)
		if noRows(err) {
			return errKeyGone
		}
		if err != nil {
			return err
		}
		rec := petstore.IdempotencyRecord{RequestHash: hash, ClaimedAt: claimed}
		if status != nil {
			rec.Response = &petstore.StoredResponse{Status: *status, Location: location, Body: stored}
		}
		verdict, err := petstore.JudgeClaim(rec, k.RequestHash, now, ttl)
		if err != nil {
			return err
		}
		if verdict == petstore.Replay {
			resp, replay = *rec.Response, true
			return nil
		}
		_, err = tx.Exec(ctx,
			`UPDATE idempotency_keys
			 SET request_hash = $1, status = NULL, location = '', body = NULL, created_at = $2
			 WHERE account_id = $3 AND key = $4`,
			k.RequestHash, now, k.AccountID, k.Key)
		return err
	})
	return resp, replay, err
}

// SaveIdempotentResponse records the response of a claimed key. A key this request
// no longer holds is EConflict.
func (db *DB) SaveIdempotentResponse(ctx context.Context, k petstore.IdempotencyKey, r petstore.StoredResponse) error {
	if err := answered(db.pool.Exec(ctx, qAnswerIdempotencyKey,
		r.Status, r.Location, body(r.Body), k.AccountID, k.Key, k.RequestHash)); err != nil {
		return fmt.Errorf("save idempotent response: %w", err)
	}
	return nil
}

// ReleaseIdempotencyKey drops an unanswered claim held with this request's hash, so
// that a retry runs again. An answered key is kept: its response stands.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, k petstore.IdempotencyKey) error {
	_, err := db.pool.Exec(ctx,
		`DELETE FROM idempotency_keys
		 WHERE account_id = $1 AND key = $2 AND request_hash = $3 AND status IS NULL`,
		k.AccountID, k.Key, k.RequestHash)
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// PurgeIdempotencyKeys deletes keys claimed before the given time and says how many.
func (db *DB) PurgeIdempotencyKeys(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
