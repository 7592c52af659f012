package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// CreateAPIKey stores a key by the hash of its secret, with its api_key.created
// event. A hash already stored is EConflict; an unknown account is ENotFound.
func (db *DB) CreateAPIKey(ctx context.Context, k petstore.NewAPIKey) (petstore.APIKey, error) {
	now := db.now().UTC()
	key := petstore.APIKey{AccountID: k.AccountID, Name: k.Name, Prefix: k.Prefix, CreatedAt: now, Scopes: k.Scopes, ExpiresAt: k.ExpiresAt}
	err := db.updateWithEvents(ctx, func(tx *sql.Tx) ([]petstore.Event, error) {
		var (
			email string
			live  int
		)
		err := tx.QueryRowContext(ctx, `SELECT email, (`+qLiveKeys+`)
			FROM accounts a WHERE id = ?`, k.AccountID).Scan(&email, &live)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, petstore.NotFound("Account", k.AccountID)
		}
		if err != nil {
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
		if err := tx.QueryRowContext(ctx,
			`INSERT INTO api_keys (account_id, name, prefix, hash, created_at, scopes, expires_at, session)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			k.AccountID, k.Name, k.Prefix, k.Hash, formatTime(now), petstore.JoinScopes(k.Scopes), nullTime(k.ExpiresAt), k.Session,
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

// qLiveKeys counts an account's live keys (of a.id in CreateAPIKey), for the cap.
const qLiveKeys = `SELECT count(*) FROM api_keys WHERE account_id = a.id AND revoked_at IS NULL`

const qAPIKeys = `SELECT id, name, prefix, created_at, scopes, expires_at, last_used_at FROM api_keys
	WHERE account_id = ? AND revoked_at IS NULL AND id > ? ORDER BY id LIMIT ?`

// APIKeys lists a page of an account's keys that are not revoked, by id.
func (db *DB) APIKeys(ctx context.Context, accountID int64, p petstore.Page) ([]petstore.APIKey, error) {
	return list(uncancelled(ctx), db, "api keys", 0, func(row scanner) (petstore.APIKey, error) {
		return scanKey(row, accountID)
	}, qAPIKeys, accountID, p.After, p.Size())
}

// scanKey reads a key of account accountID: its id, name, prefix, created_at,
// scopes, expires_at and last_used_at.
func scanKey(row scanner, accountID int64) (petstore.APIKey, error) {
	k := petstore.APIKey{AccountID: accountID}
	var (
		created        string
		scopes         *string
		expires, added sql.NullString
	)
	err := row.Scan(&k.ID, &k.Name, &k.Prefix, &created, &scopes, &expires, &added)
	if err == nil {
		k.CreatedAt, err = parseTime(created)
	}
	if err == nil {
		k.ExpiresAt, err = parseNullTime(expires)
	}
	if err == nil {
		k.LastUsedAt, err = parseNullTime(added)
	}
	k.Scopes = petstore.SplitScopes(scopes)
	return k, err
}

// RevokeAPIKey revokes one of an account's keys, with its api_key.revoked event.
// Another account's key, and a key already revoked, is ENotFound and writes nothing.
func (db *DB) RevokeAPIKey(ctx context.Context, accountID, keyID int64, by petstore.Actor) error {
	var n int
	err := db.updateWithEvents(ctx, func(tx *sql.Tx) ([]petstore.Event, error) {
		events, err := revokeKeys(ctx, tx, db.now().UTC(), accountID, keySet{id: keyID}, by)
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
func revokeKeys(ctx context.Context, tx *sql.Tx, now time.Time, accountID int64, set keySet, by petstore.Actor) ([]petstore.Event, error) {
	q, args := `UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL`, []any{formatTime(now), accountID}
	if set.id != 0 {
		// Seeks the one key in api_keys_live, which holds no revoked key.
		q, args = q+` AND id = ?`, append(args, set.id)
	}
	if set.expired {
		q, args = q+` AND expires_at <= ?`, append(args, formatTime(now))
	}
	if set.sessions {
		q += ` AND session = 1`
	}
	if set.oldestSession {
		q, args = q+` AND id = (SELECT min(id) FROM api_keys WHERE account_id = ? AND session = 1 AND revoked_at IS NULL)`, append(args, accountID)
	}
	rows, err := tx.QueryContext(ctx, q+` RETURNING id, name, prefix, created_at, scopes, expires_at, last_used_at`, args...)
	if err != nil {
		return nil, err
	}
	keys, err := collect(rows, 0, func(row scanner) (petstore.APIKey, error) { return scanKey(row, accountID) })
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	// RETURNING gives the rows in no set order: the events go by key id.
	slices.SortFunc(keys, func(a, b petstore.APIKey) int { return cmp.Compare(a.ID, b.ID) })
	var email string
	if err := tx.QueryRowContext(ctx, `SELECT email FROM accounts WHERE id = ?`, accountID).Scan(&email); err != nil {
		return nil, err
	}
	events := make([]petstore.Event, len(keys))
	for i, k := range keys {
		events[i] = petstore.KeyEvent(petstore.APIKeyRevoked, k, email, by, now)
	}
	return events, nil
}

const qPrincipalByKeyHash = `SELECT a.id, a.role, a.disabled, k.id, k.scopes, k.expires_at FROM api_keys k JOIN accounts a ON a.id = k.account_id
	WHERE k.hash = ? AND k.revoked_at IS NULL`

// PrincipalByKeyHash finds who holds the key with this hash; an unknown or revoked key
// is ENotFound. An expired key is found: the caller tells it apart. It runs on every
// authenticated request whose key is not cached, on a prepared statement.
func (db *DB) PrincipalByKeyHash(ctx context.Context, hash []byte) (petstore.Principal, error) {
	return one(ctx, db, "principal by key", func() error { return petstore.KeyNotFound() }, func(r scanner) (petstore.Principal, error) {
		var (
			p       petstore.Principal
			scopes  *string
			expires sql.NullString
		)
		err := r.Scan(&p.AccountID, (*string)(&p.Role), &p.Disabled, &p.KeyID, &scopes, &expires)
		if err == nil && expires.Valid {
			p.ExpiresAt, err = parseTime(expires.String)
		}
		p.Scopes = petstore.SplitScopes(scopes)
		return p, err
	}, qPrincipalByKeyHash, hash)
}

// TouchAPIKeys records that the keys were used at the minute at, for those whose last
// use is older.
func (db *DB) TouchAPIKeys(ctx context.Context, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := db.update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ?
			WHERE id IN (SELECT value FROM json_each(?)) AND (last_used_at IS NULL OR last_used_at < ?)`,
			formatTime(at), idsJSON(ids), formatTime(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("touch api keys: %w", err)
	}
	return nil
}
