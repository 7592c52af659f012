package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The one-time tokens of invitations and password resets live in account_tokens
// (migration 21), by the SHA-256 of their secret.

// CreateInvitation stores an invitation's token, replacing the open invitation of the
// same address; an address whose account has a password is EConflict.
func (db *DB) CreateInvitation(ctx context.Context, t petstore.NewToken) (petstore.Invitation, error) {
	now := db.now().UTC()
	inv := petstore.Invitation{Email: t.Email, Role: t.Role, CreatedAt: now, ExpiresAt: t.ExpiresAt.UTC()}
	err := db.update(ctx, func(tx *sql.Tx) error {
		_, hash, err := scanAccount(tx.QueryRowContext(ctx, qAccountByEmail, petstore.EmailKey(t.Email)))
		exists := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := petstore.CheckInvitation(t.Email, exists, hash != ""); err != nil {
			return err
		}
		inv.ID, err = upsertToken(ctx, tx, petstore.TokenInvitation, t, now)
		return err
	})
	if err != nil {
		return petstore.Invitation{}, fmt.Errorf("create invitation: %w", err)
	}
	return inv, nil
}

// upsertToken stores a token as the open one of its kind and address: the open one
// before it, if any, takes the new hash and times, so that its own link stops working.
func upsertToken(ctx context.Context, tx *sql.Tx, kind petstore.TokenKind, t petstore.NewToken, now time.Time) (int64, error) {
	role := t.Role
	if role == "" {
		role = petstore.Customer
	}
	var id int64
	err := tx.QueryRowContext(ctx,
		`INSERT INTO account_tokens (kind, hash, email, email_lower, role, created_at, expires_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT (kind, email_lower) WHERE closed_at IS NULL DO UPDATE SET
		   hash = excluded.hash, email = excluded.email, role = excluded.role,
		   created_at = excluded.created_at, expires_at = excluded.expires_at
		 RETURNING id`,
		string(kind), t.Hash, t.Email, petstore.EmailKey(t.Email), string(role), formatTime(now), formatTime(t.ExpiresAt),
	).Scan(&id)
	return id, err
}

// CreatePasswordReset stores a reset's token for the account with t.Email, replacing
// its open one; ENotFound for no account.
func (db *DB) CreatePasswordReset(ctx context.Context, t petstore.NewToken) error {
	now := db.now().UTC()
	err := db.update(ctx, func(tx *sql.Tx) error {
		a, _, err := scanAccount(tx.QueryRowContext(ctx, qAccountByEmail, petstore.EmailKey(t.Email)))
		if errors.Is(err, sql.ErrNoRows) {
			return petstore.EmailNotFound()
		}
		if err != nil {
			return err
		}
		t.Email, t.Role = a.Email, a.Role
		_, err = upsertToken(ctx, tx, petstore.TokenReset, t, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("create password reset: %w", err)
	}
	return nil
}

// Redeem uses a token once: the one write transaction closes it and applies it, so
// that of two redemptions at once the second finds it closed.
func (db *DB) Redeem(ctx context.Context, r petstore.Redemption) (petstore.Account, error) {
	now := db.now().UTC()
	var out petstore.Account
	err := db.updateWithEvents(ctx, func(tx *sql.Tx) ([]petstore.Event, error) {
		email, role, err := closeToken(ctx, tx, r, now)
		if err != nil {
			return nil, err
		}
		a, hash, err := scanAccount(tx.QueryRowContext(ctx, qAccountByEmail, petstore.EmailKey(email)))
		exists := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		if r.Kind == petstore.TokenInvitation {
			out, err = acceptInvitation(ctx, tx, a, exists, hash != "", email, role, r.PasswordHash, now)
			return nil, err
		}
		if !exists {
			return nil, petstore.ErrInvalidToken()
		}
		if out, err = petstore.ResetInto(a, hash != ""); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET password_hash = ? WHERE id = ?`, r.PasswordHash, a.ID); err != nil {
			return nil, err
		}
		return revokeKeys(ctx, tx, now, a.ID, keySet{sessions: true}, petstore.Actor{AccountID: a.ID})
	})
	if err != nil {
		return petstore.Account{}, fmt.Errorf("redeem %s token: %w", r.Kind, err)
	}
	return out, nil
}

// closeToken closes the open token of r's kind and hash, and returns whom it is for
// and the role it gives; a token that is not open, or expired, is ErrInvalidToken.
func closeToken(ctx context.Context, tx *sql.Tx, r petstore.Redemption, now time.Time) (string, petstore.Role, error) {
	var (
		email, role, expires string
	)
	err := tx.QueryRowContext(ctx,
		`UPDATE account_tokens SET closed_at = ? WHERE hash = ? AND kind = ? AND closed_at IS NULL
		 RETURNING email, role, expires_at`, formatTime(now), r.Hash, string(r.Kind)).Scan(&email, &role, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", petstore.ErrInvalidToken()
	}
	if err != nil {
		return "", "", err
	}
	at, err := parseTime(expires)
	if err != nil {
		return "", "", err
	}
	if !petstore.TokenOpen(at, now) {
		return "", "", petstore.ErrInvalidToken()
	}
	return email, petstore.Role(role), nil
}

// acceptInvitation makes the invited account, or gives the key-only account a its
// password and role (petstore.AcceptInto).
func acceptInvitation(ctx context.Context, tx *sql.Tx, a petstore.Account, exists, hasPassword bool,
	email string, role petstore.Role, passwordHash string, now time.Time) (petstore.Account, error) {
	out, err := petstore.AcceptInto(a, exists, hasPassword, role)
	if err != nil {
		return petstore.Account{}, err
	}
	if !exists {
		return insertAccount(ctx, tx, email, passwordHash, out.Role, now)
	}
	_, err = tx.ExecContext(ctx, `UPDATE accounts SET password_hash = ?, role = ? WHERE id = ?`, passwordHash, string(out.Role), a.ID)
	return out, err
}

// RevokeKey revokes the live key with this id of any account, as the operator, with
// its api_key.revoked event; it returns the key's account.
func (db *DB) RevokeKey(ctx context.Context, keyID int64) (int64, error) {
	var accountID int64
	err := db.updateWithEvents(ctx, func(tx *sql.Tx) ([]petstore.Event, error) {
		err := tx.QueryRowContext(ctx, `SELECT account_id FROM api_keys WHERE id = ? AND revoked_at IS NULL`, keyID).Scan(&accountID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, petstore.NotFound("API key", keyID)
		}
		if err != nil {
			return nil, err
		}
		return revokeKeys(ctx, tx, db.now().UTC(), accountID, keySet{id: keyID}, petstore.Actor{})
	})
	if err != nil {
		return 0, fmt.Errorf("revoke key: %w", err)
	}
	return accountID, nil
}
