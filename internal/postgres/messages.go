package postgres

import (
	"context"
	"fmt"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/jackc/pgx/v5"
)

// CreateMessage stores a message as given (its id and time are the caller's; the
// time is kept to the microsecond). Text the policy refuses is EValidationFailed
// (NUL among it: PostgreSQL text cannot hold one); an id already used is EConflict;
// an unknown account is ENotFound.
func (db *DB) CreateMessage(ctx context.Context, m petstore.Message) error {
	if err := m.Validate(); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx,
		`INSERT INTO messages (id, account_id, text, status, created_at) VALUES ($1, $2, $3, $4, $5)`,
		m.ID, m.AccountID, m.Text, m.Status, timestamp(m.CreatedAt))
	switch {
	case isUnique(err):
		return petstore.MessageExists()
	case isForeignKey(err):
		return petstore.NotFound("Account", m.AccountID)
	case err != nil:
		return fmt.Errorf("create message: %w", err)
	}
	return nil
}

// Message finds one of an account's messages; another account's is ENotFound.
func (db *DB) Message(ctx context.Context, accountID int64, id string) (petstore.Message, error) {
	return one(ctx, db, "message", func() error { return petstore.MessageNotFound(id) }, func(r pgx.Row) (petstore.Message, error) {
		m := petstore.Message{ID: id, AccountID: accountID}
		err := r.Scan(&m.Text, &m.Status, &m.CreatedAt)
		return m, err
	}, `SELECT text, status, created_at FROM messages WHERE id = $1 AND account_id = $2`, id, accountID)
}
