package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// An idempotency key is a row per (account, key). status is NULL while the claim is
// unanswered and holds the HTTP status of the stored response once it is answered.
// created_at is when the key was (last) claimed.

const qAnswerIdempotencyKey = `UPDATE idempotency_keys SET status = ?, location = ?, body = ?
	WHERE account_id = ? AND key = ? AND request_hash = ? AND status IS NULL`

// answerIdempotencyKey records the response on a claim that is still unanswered and
// still holds the request's hash. Anything else means the claim was lost (released,
// purged, or taken over and answered by another request), and the caller's
// transaction must not go on.
func answerIdempotencyKey(ctx context.Context, db *DB, tx *sql.Tx, k petstore.IdempotencyKey, r petstore.StoredResponse) error {
	s, err := db.txStmt(ctx, tx, qAnswerIdempotencyKey)
	if err != nil {
		return err
	}
	res, err := s.ExecContext(ctx, r.Status, r.Location, body(r.Body), k.AccountID, k.Key, k.RequestHash)
	if err != nil {
		return fmt.Errorf("answer idempotency key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("answer idempotency key: %w", err)
	}
	if n == 0 {
		return petstore.Errorf(petstore.EConflict,
			"The request with this Idempotency-Key no longer holds it; send the request again.")
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

// ClaimIdempotencyKey claims k for a request starting at now; see
// petstore.IdempotencyStore for the rules. An unanswered claim older than
// petstore.ClaimTimeout is taken over, with this request's hash: its request placed
// nothing.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, k petstore.IdempotencyKey, now time.Time, ttl time.Duration) (petstore.StoredResponse, bool, error) {
	var (
		resp   petstore.StoredResponse
		replay bool
	)
	err := db.update(ctx, func(tx *sql.Tx) error {
		var (
			hash     []byte
			status   sql.NullInt64
			location string
			stored   []byte
			created  string
		)
		err := tx.QueryRowContext(ctx,
			`SELECT request_hash, status, location, body, created_at FROM idempotency_keys
			 WHERE account_id = ? AND key = ?`, k.AccountID, k.Key,
		).Scan(&hash, &status, &location, &stored, &created)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx,
				`INSERT INTO idempotency_keys (account_id, key, request_hash, created_at) VALUES (?, ?, ?, ?)`,
				k.AccountID, k.Key, k.RequestHash, formatTime(now))
			return err
		}
		if err != nil {
			return err
		}
		rec := petstore.IdempotencyRecord{RequestHash: hash}
		if rec.ClaimedAt, err = parseTime(created); err != nil {
			return err
		}
		if status.Valid {
			rec.Response = &petstore.StoredResponse{Status: int(status.Int64), Location: location, Body: stored}
		}
		verdict, err := petstore.JudgeClaim(rec, k.RequestHash, now, ttl)
		if err != nil {
			return err
		}
		if verdict == petstore.Replay {
			resp, replay = *rec.Response, true
			return nil
		}
		_, err = tx.ExecContext(ctx,
			`UPDATE idempotency_keys
			 SET request_hash = ?, status = NULL, location = '', body = NULL, created_at = ?
			 WHERE account_id = ? AND key = ?`,
			k.RequestHash, formatTime(now), k.AccountID, k.Key)
		return err
	})
	if isForeignKey(err) {
		return petstore.StoredResponse{}, false, petstore.Errorf(petstore.ENotFound, "Account %d was not found.", k.AccountID)
	}
	if err != nil {
		return petstore.StoredResponse{}, false, fmt.Errorf("claim idempotency key: %w", err)
	}
	return resp, replay, nil
}

// SaveIdempotentResponse records the response of a claimed key. A key this request
// no longer holds is EConflict.
func (db *DB) SaveIdempotentResponse(ctx context.Context, k petstore.IdempotencyKey, r petstore.StoredResponse) error {
	err := db.update(ctx, func(tx *sql.Tx) error {
		return answerIdempotencyKey(ctx, db, tx, k, r)
	})
	if err != nil {
		return fmt.Errorf("save idempotent response: %w", err)
	}
	return nil
}

// ReleaseIdempotencyKey drops an unanswered claim held with this request's hash, so
// that a retry runs again. An answered key is kept: its response stands.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, k petstore.IdempotencyKey) error {
	err := db.update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`DELETE FROM idempotency_keys
			 WHERE account_id = ? AND key = ? AND request_hash = ? AND status IS NULL`,
			k.AccountID, k.Key, k.RequestHash)
		return err
	})
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// PurgeIdempotencyKeys deletes keys claimed before the given time and says how many.
func (db *DB) PurgeIdempotencyKeys(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.update(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < ?`, formatTime(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return n, nil
}
