package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/acme-pets/petstore/internal/petstore"
)

// CreateMessage stores a message as given (its id and time are the caller's). Text
// the policy refuses is EValidationFailed; an id already used is EConflict; an
// unknown account is ENotFound.
func (db *DB) CreateMessage(ctx context.Context, m petstore.Message) error {
	if err := m.Validate(); err != nil {
		return err
	}
	err := db.update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO messages (id, account_id, text, status, created_at) VALUES (?, ?, ?, ?, ?)`,
			m.ID, m.AccountID, m.Text, m.Status, formatTime(m.CreatedAt))
		return err
	})
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
	return one(ctx, db, "message", func() error { return petstore.MessageNotFound(id) }, func(r scanner) (petstore.Message, error) {
		m := petstore.Message{ID: id, AccountID: accountID}
		var created string
		err := r.Scan(&m.Text, &m.Status, &created)
		if err == nil {
			m.CreatedAt, err = parseTime(created)
		}
		return m, err
	}, `SELECT text, status, created_at FROM messages WHERE id = ? AND account_id = ?`, id, accountID)
}
