package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// CreateAPIKey stores a key by the hash of its secret. A hash already stored is
// EConflict; an unknown account is ENotFound.
func (db *DB) CreateAPIKey(ctx context.Context, k petstore.NewAPIKey) (petstore.APIKey, error) {
	now := db.now().UTC()
	key := petstore.APIKey{AccountID: k.AccountID, Name: k.Name, Prefix: k.Prefix, CreatedAt: now, Scopes: k.Scopes, ExpiresAt: k.ExpiresAt}
	err := db.update(ctx, func(tx *sql.Tx) error {
		var live int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM api_keys WHERE account_id = ? AND revoked_at IS NULL`,
			k.AccountID).Scan(&live); err != nil {
			return err
		}
		if err := petstore.CheckKeyCount(live); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx,
			`INSERT INTO api_keys (account_id, name, prefix, hash, created_at, scopes, expires_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			k.AccountID, k.Name, k.Prefix, k.Hash, formatTime(now), petstore.JoinScopes(k.Scopes), nullTime(k.ExpiresAt),
		).Scan(&key.ID)
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

const qAPIKeys = `SELECT id, name, prefix, created_at, scopes, expires_at, last_used_at FROM api_keys
	WHERE account_id = ? AND revoked_at IS NULL AND id > ? ORDER BY id LIMIT ?`

// APIKeys lists a page of an account's keys that are not revoked, by id.
func (db *DB) APIKeys(ctx context.Context, accountID int64, p petstore.Page) ([]petstore.APIKey, error) {
	return list(uncancelled(ctx), db, "api keys", 0, func(row scanner) (petstore.APIKey, error) {
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
	}, qAPIKeys, accountID, p.After, p.Size())
}

// RevokeAPIKey revokes one of an account's keys. Another account's key, and a key
// already revoked, is ENotFound.
func (db *DB) RevokeAPIKey(ctx context.Context, accountID, keyID int64) error {
	var n int64
	err := db.update(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE api_keys SET revoked_at = ?
			 WHERE id = ? AND account_id = ? AND revoked_at IS NULL`,
			formatTime(db.now()), keyID, accountID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if n == 0 {
		return petstore.NotFound("API key", keyID)
	}
	return nil
}

const qPrincipalByKeyHash = `SELECT a.id, a.role, k.id, k.scopes, k.expires_at FROM api_keys k JOIN accounts a ON a.id = k.account_id
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
		err := r.Scan(&p.AccountID, (*string)(&p.Role), &p.KeyID, &scopes, &expires)
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
