package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

// CreateAPIKey stores a key by the hash of its secret. A hash already stored is
// EConflict; an unknown account is ENotFound.
func (db *DB) CreateAPIKey(ctx context.Context, k petstore.NewAPIKey) (petstore.APIKey, error) {
	key := petstore.APIKey{AccountID: k.AccountID, Name: k.Name, Prefix: k.Prefix, CreatedAt: timestamp(db.now())}
	err := db.update(ctx, func(tx pgx.Tx) error {
		// The account's row lock makes keys of one account take turns, so that the
		// count below cannot be passed by two at once.
		var live int
		err := tx.QueryRow(ctx,
			`SELECT (SELECT count(*) FROM api_keys WHERE account_id = a.id AND revoked_at IS NULL)
			 FROM accounts a WHERE a.id = $1 FOR UPDATE`, k.AccountID).Scan(&live)
		if noRows(err) {
			return petstore.NotFound("Account", k.AccountID)
		}
		if err != nil {
			return err
		}
		if err := petstore.CheckKeyCount(live); err != nil {
			return err
		}
		return tx.QueryRow(ctx,
			`INSERT INTO api_keys (account_id, name, prefix, hash, created_at)
			 VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			k.AccountID, k.Name, k.Prefix, k.Hash, key.CreatedAt,
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
	WHERE account_id = $1 AND revoked_at IS NULL AND id > $2 ORDER BY id LIMIT $3`

// APIKeys lists a page of an account's keys that are not revoked, by id.
func (db *DB) APIKeys(ctx context.Context, accountID int64, p petstore.Page) ([]petstore.APIKey, error) {
	return list(ctx, db, "api keys", 0, func(row pgx.Row) (petstore.APIKey, error) {
		k := petstore.APIKey{AccountID: accountID}
		err := row.Scan(&k.ID, &k.Name, &k.Prefix, &k.CreatedAt)
		return k, err
	}, qAPIKeys, accountID, p.After, p.Size())
}

// RevokeAPIKey revokes one of an account's keys. Another account's key, and a key
// already revoked, is ENotFound.
func (db *DB) RevokeAPIKey(ctx context.Context, accountID, keyID int64) error {
	tag, err := db.pool.Exec(ctx,
		`UPDATE api_keys SET revoked_at = $1
		 WHERE id = $2 AND account_id = $3 AND revoked_at IS NULL`,
		timestamp(db.now()), keyID, accountID)
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return petstore.NotFound("API key", keyID)
	}
	return nil
}

// PrincipalByKeyHash finds who holds the key with this hash; an unknown or revoked key
// is ENotFound. It runs on every request whose key is not in the authenticator's
// cache: one round trip on a statement pgx has prepared on the connection.
func (db *DB) PrincipalByKeyHash(ctx context.Context, hash []byte) (petstore.Principal, error) {
	var (
		p    petstore.Principal
		role string
	)
	err := db.pool.QueryRow(ctx,
		`SELECT a.id, a.role, k.id FROM api_keys k JOIN accounts a ON a.id = k.account_id
		 WHERE k.hash = $1 AND k.revoked_at IS NULL`, hash,
	).Scan(&p.AccountID, &role, &p.KeyID)
	if noRows(err) {
		return petstore.Principal{}, petstore.KeyNotFound()
	}
	if err != nil {
		return petstore.Principal{}, fmt.Errorf("principal by key: %w", err)
	}
	p.Role = petstore.Role(role)
	return p, nil
}
