package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/acme-pets/petstore/internal/petstore"
)

// CreateAPIKey stores a key by the hash of its secret. A hash already stored is
// EConflict; an unknown account is ENotFound.
func (db *DB) CreateAPIKey(ctx context.Context, k petstore.NewAPIKey) (petstore.APIKey, error) {
	now := db.now().UTC()
	key := petstore.APIKey{AccountID: k.AccountID, Name: k.Name, Prefix: k.Prefix, CreatedAt: now}
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
			`INSERT INTO api_keys (account_id, name, prefix, hash, created_at)
			 VALUES (?, ?, ?, ?, ?) RETURNING id`,
			k.AccountID, k.Name, k.Prefix, k.Hash, formatTime(now),
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

const qAPIKeys = `SELECT id, name, prefix, created_at FROM api_keys
	WHERE account_id = ? AND revoked_at IS NULL AND id > ? ORDER BY id LIMIT ?`

// APIKeys lists a page of an account's keys that are not revoked, by id.
func (db *DB) APIKeys(ctx context.Context, accountID int64, p petstore.Page) ([]petstore.APIKey, error) {
	return list(uncancelled(ctx), db, "api keys", 0, func(row scanner) (petstore.APIKey, error) {
		k := petstore.APIKey{AccountID: accountID}
		var created string
		if err := row.Scan(&k.ID, &k.Name, &k.Prefix, &created); err != nil {
			return k, err
		}
		at, err := parseTime(created)
		k.CreatedAt = at
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

const qPrincipalByKeyHash = `SELECT a.id, a.role, k.id FROM api_keys k JOIN accounts a ON a.id = k.account_id
	WHERE k.hash = ? AND k.revoked_at IS NULL`

// PrincipalByKeyHash finds who holds the key with this hash; an unknown or revoked key
// is ENotFound. It runs on every authenticated request, on a prepared statement.
func (db *DB) PrincipalByKeyHash(ctx context.Context, hash []byte) (petstore.Principal, error) {
	s, err := db.readStmt(ctx, qPrincipalByKeyHash)
	if err != nil {
		return petstore.Principal{}, fmt.Errorf("principal by key: %w", err)
	}
	var (
		p    petstore.Principal
		role string
	)
	err = s.QueryRowContext(uncancelled(ctx), hash).Scan(&p.AccountID, &role, &p.KeyID)
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Principal{}, petstore.KeyNotFound()
	}
	if err != nil {
		return petstore.Principal{}, fmt.Errorf("principal by key: %w", err)
	}
	p.Role = petstore.Role(role)
	return p, nil
}
