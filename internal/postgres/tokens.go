package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The one-time tokens of invitations and password resets live in account_tokens
// (migration 16), by the SHA-256 of their secret.

const qAccountByEmailForUpdate = `SELECT id, email, role, created_at, disabled, password_hash FROM accounts WHERE email_lower = $1 FOR UPDATE`

// CreateInvitation stores an invitation's token, replacing the open invitation of the
// same address; an address whose account has a password is EConflict. The account's
// row lock keeps a redemption or another invitation of it from passing in between.
func (db *DB) CreateInvitation(ctx context.Context, t petstore.NewToken) (petstore.Invitation, error) {
	now := timestamp(db.now())
	inv := petstore.Invitation{Email: t.Email, Role: t.Role, CreatedAt: now, ExpiresAt: timestamp(t.ExpiresAt)}
	err := db.update(ctx, func(tx pgx.Tx) error {
		_, hash, err := scanAccount(tx.QueryRow(ctx, qAccountByEmailForUpdate, petstore.EmailKey(t.Email)))
		exists := err == nil
		if err != nil && !noRows(err) {
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
// The partial unique index makes two at once one after the other.
func upsertToken(ctx context.Context, tx pgx.Tx, kind petstore.TokenKind, t petstore.NewToken, now time.Time) (int64, error) {
	role := t.Role
	if role == "" {
		role = petstore.Customer
	}
	var id int64
	err := tx.QueryRow(ctx,
		`INSERT INTO account_tokens (kind, hash, email, email_lower, role, created_at, expires_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (kind, email_lower) WHERE closed_at IS NULL DO UPDATE SET
		   hash = excluded.hash, email = excluded.email, role = excluded.role,
		   created_at = excluded.created_at, expires_at = excluded.expires_at
		 RETURNING id`,
		string(kind), t.Hash, t.Email, petstore.EmailKey(t.Email), string(role), now, timestamp(t.ExpiresAt),
	).Scan(&id)
	return id, err
}

// CreatePasswordReset stores a reset's token for the account with t.Email, replacing
// its open one; ENotFound for no account.
func (db *DB) CreatePasswordReset(ctx context.Context, t petstore.NewToken) error {
	now := timestamp(db.now())
	err := db.update(ctx, func(tx pgx.Tx) error {
		a, _, err := scanAccount(tx.QueryRow(ctx, qAccountByEmailForUpdate, petstore.EmailKey(t.Email)))
		if noRows(err) {
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

// Redeem uses a token once: the UPDATE that closes it takes its row lock, so of two
// redemptions at once the second waits, then finds it closed (READ COMMITTED
// re-reads the row) and is refused.
func (db *DB) Redeem(ctx context.Context, r petstore.Redemption) (petstore.Account, error) {
	now := timestamp(db.now())
	var out petstore.Account
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		email, role, err := closeToken(ctx, tx, r, now)
		if err != nil {
			return nil, err
		}
		a, hash, err := scanAccount(tx.QueryRow(ctx, qAccountByEmailForUpdate, petstore.EmailKey(email)))
		exists := err == nil
		if err != nil && !noRows(err) {
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
		if _, err := tx.Exec(ctx, `UPDATE accounts SET password_hash = $1 WHERE id = $2`, r.PasswordHash, a.ID); err != nil {
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
func closeToken(ctx context.Context, tx pgx.Tx, r petstore.Redemption, now time.Time) (string, petstore.Role, error) {
	var (
		email, role string
		expires     time.Time
	)
	err := tx.QueryRow(ctx,
		`UPDATE account_tokens SET closed_at = $1 WHERE hash = $2 AND kind = $3 AND closed_at IS NULL
		 RETURNING email, role, expires_at`, now, r.Hash, string(r.Kind)).Scan(&email, &role, &expires)
	if noRows(err) {
		return "", "", petstore.ErrInvalidToken()
	}
	if err != nil {
		return "", "", err
	}
	if !petstore.TokenOpen(expires, now) {
		return "", "", petstore.ErrInvalidToken()
	}
	return email, petstore.Role(role), nil
}

// acceptInvitation makes the invited account, or gives the key-only account a its
// password and role (petstore.AcceptInto). An account made meanwhile by a sign-up
// (a unique clash) has a password: the token is refused.
func acceptInvitation(ctx context.Context, tx pgx.Tx, a petstore.Account, exists, hasPassword bool,
	email string, role petstore.Role, passwordHash string, now time.Time) (petstore.Account, error) {
	out, err := petstore.AcceptInto(a, exists, hasPassword, role)
	if err != nil {
		return petstore.Account{}, err
	}
	if !exists {
		out = petstore.Account{Email: email, Role: out.Role, CreatedAt: now}
		err := tx.QueryRow(ctx,
			`INSERT INTO accounts (email, email_lower, password_hash, role, created_at)
			 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (email_lower) DO NOTHING RETURNING id`,
			email, petstore.EmailKey(email), passwordHash, string(out.Role), now).Scan(&out.ID)
		if noRows(err) {
			return petstore.Account{}, petstore.ErrInvalidToken()
		}
		return out, err
	}
	_, err = tx.Exec(ctx, `UPDATE accounts SET password_hash = $1, role = $2 WHERE id = $3`, passwordHash, string(out.Role), a.ID)
	return out, err
}

// RevokeKey revokes the live key with this id of any account, as the operator, with
// its api_key.revoked event; it returns the key's account.
func (db *DB) RevokeKey(ctx context.Context, keyID int64) (int64, error) {
	var accountID int64
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		err := tx.QueryRow(ctx, `SELECT account_id FROM api_keys WHERE id = $1 AND revoked_at IS NULL`, keyID).Scan(&accountID)
		if noRows(err) {
			return nil, petstore.NotFound("API key", keyID)
		}
		if err != nil {
			return nil, err
		}
		events, err := revokeKeys(ctx, tx, db.now(), accountID, keySet{id: keyID}, petstore.Actor{})
		if err == nil && len(events) == 0 {
			// Revoked by another transaction since the read.
			return nil, petstore.NotFound("API key", keyID)
		}
		return events, err
	})
	if err != nil {
		return 0, fmt.Errorf("revoke key: %w", err)
	}
	return accountID, nil
}
