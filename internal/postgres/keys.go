package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

// CreateAPIKey stores a key by the hash of its secret, with its api_key.created
// event. A hash already stored is EConflict; an unknown account is ENotFound.
func (db *DB) CreateAPIKey(ctx context.Context, k petstore.NewAPIKey) (petstore.APIKey, error) {
	now := timestamp(db.now())
	key := petstore.APIKey{AccountID: k.AccountID, Name: k.Name, Prefix: k.Prefix, CreatedAt: now, Scopes: k.Scopes, ExpiresAt: k.ExpiresAt}
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		// The account's row lock makes keys of one account take turns, so that the
		// count cannot be passed by two at once. The count is a statement of its own,
		// after the lock: under READ COMMITTED a statement sees the rows committed
		// when it began, so a count in the statement that waited for the lock would
		// miss the keys its predecessors made meanwhile.
		var (
			email string
			live  int
		)
		err := tx.QueryRow(ctx, `SELECT email FROM accounts WHERE id = $1 FOR UPDATE`, k.AccountID).Scan(&email)
		if noRows(err) {
			return nil, petstore.NotFound("Account", k.AccountID)
		}
		if err != nil {
			return nil, err
		}
		if err := tx.QueryRow(ctx, qLiveKeys, k.AccountID).Scan(&live); err != nil {
			return nil, err
		}
		var revoked []petstore.Event
		if petstore.KeysNeedRoom(live) {
			// Keys that expired make room: they are revoked, each with its event.
			if revoked, err = revokeKeys(ctx, tx, now, k.AccountID, keySet{expired: true}, k.By); err != nil {
				return nil, err
			}
			live -= len(revoked)
		}
		if petstore.SessionMakesRoom(live, k.Session) {
			// A new session ends the oldest one rather than fail: a person who signs
			// in often is not locked out by sessions of theirs that are still live.
			oldest, err := revokeKeys(ctx, tx, now, k.AccountID, keySet{oldestSession: true}, k.By)
			if err != nil {
				return nil, err
			}
			revoked, live = append(revoked, oldest...), live-len(oldest)
		}
		if err := petstore.CheckKeyCount(live); err != nil {
			return nil, err
		}
		if err := tx.QueryRow(ctx,
			`INSERT INTO api_keys (account_id, name, prefix, hash, created_at, scopes, expires_at, session)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			k.AccountID, k.Name, k.Prefix, k.Hash, now, petstore.JoinScopes(k.Scopes), k.ExpiresAt, k.Session,
		).Scan(&key.ID); err != nil {
			return nil, err
		}
		return append(revoked, petstore.KeyEvent(petstore.APIKeyCreated, key, email, k.By, now)), nil
	})
	switch {
	case isUnique(err):
		return petstore.APIKey{}, petstore.KeyExists()
	case isForeignKey(err):
		return petstore.APIKey{}, petstore.NotFound("Account", k.AccountID)
	case err != nil:
		return petstore.APIKey{}, fmt.Errorf("create api key: %w", err)
	}
	return key, nil
}

// qLiveKeys counts an account's live keys, for the cap.
const qLiveKeys = `SELECT count(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`

const qAPIKeys = `SELECT id, name, prefix, created_at, scopes, expires_at, last_used_at FROM api_keys
	WHERE account_id = $1 AND revoked_at IS NULL AND id > $2 ORDER BY id LIMIT $3`

// APIKeys lists a page of an account's keys that are not revoked, by id.
func (db *DB) APIKeys(ctx context.Context, accountID int64, p petstore.Page) ([]petstore.APIKey, error) {
	return list(ctx, db, "api keys", 0, func(row pgx.Row) (petstore.APIKey, error) {
		return scanKey(row, accountID)
	}, qAPIKeys, accountID, p.After, p.Size())
}

// scanKey reads a key of account accountID: its id, name, prefix, created_at,
// scopes, expires_at and last_used_at.
func scanKey(row pgx.Row, accountID int64) (petstore.APIKey, error) {
	k := petstore.APIKey{AccountID: accountID}
	var scopes *string
	err := row.Scan(&k.ID, &k.Name, &k.Prefix, &k.CreatedAt, &scopes, &k.ExpiresAt, &k.LastUsedAt)
	k.Scopes = petstore.SplitScopes(scopes)
	return k, err
}

// RevokeAPIKey revokes one of an account's keys, with its api_key.revoked event.
// Another account's key, and a key already revoked, is ENotFound and writes nothing.
func (db *DB) RevokeAPIKey(ctx context.Context, accountID, keyID int64, by petstore.Actor) error {
	var n int
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		events, err := revokeKeys(ctx, tx, db.now(), accountID, keySet{id: keyID}, by)
		n = len(events)
		return events, err
	})
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if n == 0 {
		return petstore.NotFound("API key", keyID)
	}
	return nil
}

// keySet names which of an account's live keys revokeKeys revokes: the one with id,
// or all of them when id is 0; with expired, only those past their expiry; with
// sessions, only the keys of sessions.
type keySet struct {
	id      int64
	expired bool
	// sessions limits the set to the account's session keys (a password reset's).
	sessions bool
	// oldestSession limits it to the account's oldest live session key.
	oldestSession bool
}

// revokeKeys revokes the keys of set of an account in tx (at most MaxKeysPerAccount),
// and returns an api_key.revoked event for each, by by, for the caller to write in tx.
func revokeKeys(ctx context.Context, tx pgx.Tx, at time.Time, accountID int64, set keySet, by petstore.Actor) ([]petstore.Event, error) {
	now := timestamp(at)
	which, args := "", []any{now, accountID}
	if set.id != 0 {
		// Seeks the one key in api_keys_live, which holds no revoked key.
		which, args = ` AND id = $3`, append(args, set.id)
	}
	if set.expired {
		which += ` AND expires_at <= $1`
	}
	if set.sessions {
		which += ` AND session`
	}
	if set.oldestSession {
		which += ` AND id = (SELECT min(id) FROM api_keys WHERE account_id = $2 AND session AND revoked_at IS NULL)`
	}
	rows, err := tx.Query(ctx, `WITH k AS (
			UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND revoked_at IS NULL`+which+`
			RETURNING id, name, prefix, created_at, scopes, expires_at, last_used_at
		)
		SELECT k.*, a.email FROM k JOIN accounts a ON a.id = $2 ORDER BY k.id`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (petstore.Event, error) {
		k := petstore.APIKey{AccountID: accountID}
		var (
			scopes *string
			email  string
		)
		err := row.Scan(&k.ID, &k.Name, &k.Prefix, &k.CreatedAt, &scopes, &k.ExpiresAt, &k.LastUsedAt, &email)
		k.Scopes = petstore.SplitScopes(scopes)
		return petstore.KeyEvent(petstore.APIKeyRevoked, k, email, by, now), err
	})
}

// PrincipalByKeyHash finds who holds the key with this hash; an unknown or revoked key
// is ENotFound. An expired key is found: the caller tells it apart. It runs on every
// request whose key is not in the authenticator's cache: one round trip on a statement
// pgx has prepared on the connection.
func (db *DB) PrincipalByKeyHash(ctx context.Context, hash []byte) (petstore.Principal, error) {
	return one(ctx, db, "principal by key", func() error { return petstore.KeyNotFound() }, func(r pgx.Row) (petstore.Principal, error) {
		var (
			p       petstore.Principal
			scopes  *string
			expires *time.Time
		)
		err := r.Scan(&p.AccountID, (*string)(&p.Role), &p.Disabled, &p.KeyID, &scopes, &expires)
		if expires != nil {
			p.ExpiresAt = *expires
		}
		p.Scopes = petstore.SplitScopes(scopes)
		return p, err
	}, `SELECT a.id, a.role, a.disabled, k.id, k.scopes, k.expires_at FROM api_keys k JOIN accounts a ON a.id = k.account_id
		 WHERE k.hash = $1 AND k.revoked_at IS NULL`, hash)
}

// TouchAPIKeys records that the keys were used at the minute at, for those whose last
// use is older.
func (db *DB) TouchAPIKeys(ctx context.Context, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := db.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $1
		WHERE id = ANY($2) AND (last_used_at IS NULL OR last_used_at < $1)`, timestamp(at), ids)
	if err != nil {
		return fmt.Errorf("touch api keys: %w", err)
	}
	return nil
}
