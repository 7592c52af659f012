package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Emails are unique in any letter case: email_lower holds the lower-case form that
// the unique index and every lookup use, and email keeps what the user typed. The
// lower-casing is Go's (Unicode), not SQLite's lower() (ASCII only).

// CreateAccount adds an account; an email already used in any letter case is EConflict.
// An empty role is customer.
func (db *DB) CreateAccount(ctx context.Context, email, passwordHash string, role petstore.Role) (petstore.Account, error) {
	role, err := petstore.AccountRole(role)
	if err != nil {
		return petstore.Account{}, err
	}
	var a petstore.Account
	err = db.update(ctx, func(tx *sql.Tx) error {
		var err error
		a, err = insertAccount(ctx, tx, email, passwordHash, role, db.now())
		return err
	})
	if err != nil {
		return petstore.Account{}, fmt.Errorf("create account: %w", err)
	}
	return a, nil
}

func insertAccount(ctx context.Context, tx *sql.Tx, email, passwordHash string, role petstore.Role, now time.Time) (petstore.Account, error) {
	a := petstore.Account{Email: email, Role: role, CreatedAt: now.UTC()}
	err := tx.QueryRowContext(ctx,
		`INSERT INTO accounts (email, email_lower, password_hash, role, created_at)
		 VALUES (?, ?, ?, ?, ?) RETURNING id`,
		email, petstore.EmailKey(email), passwordHash, string(role), formatTime(now),
	).Scan(&a.ID)
	if isUnique(err) {
		return petstore.Account{}, petstore.EmailTaken()
	}
	if err != nil {
		return petstore.Account{}, err
	}
	return a, nil
}

const qAccountByEmail = `SELECT id, email, role, created_at, disabled, password_hash FROM accounts WHERE email_lower = ?`

func scanAccount(row scanner) (petstore.Account, string, error) {
	var (
		a       petstore.Account
		role    string
		created string
		hash    string
	)
	if err := row.Scan(&a.ID, &a.Email, &role, &created, &a.Disabled, &hash); err != nil {
		return petstore.Account{}, "", err
	}
	a.Role = petstore.Role(role)
	t, err := parseTime(created)
	if err != nil {
		return petstore.Account{}, "", err
	}
	a.CreatedAt = t
	return a, hash, nil
}

// AccountByEmail finds an account, in any letter case, with its password hash (empty
// for a key-only account).
func (db *DB) AccountByEmail(ctx context.Context, email string) (petstore.Account, string, error) {
	s, err := db.readStmt(ctx, qAccountByEmail)
	if err != nil {
		return petstore.Account{}, "", fmt.Errorf("account by email: %w", err)
	}
	a, hash, err := scanAccount(s.QueryRowContext(uncancelled(ctx), petstore.EmailKey(email)))
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Account{}, "", petstore.EmailNotFound()
	}
	if err != nil {
		return petstore.Account{}, "", fmt.Errorf("account by email: %w", err)
	}
	return a, hash, nil
}

const qAccount = `SELECT id, email, role, created_at, disabled, password_hash FROM accounts WHERE id = ?`

// Account finds an account by id.
func (db *DB) Account(ctx context.Context, id int64) (petstore.Account, error) {
	return one(ctx, db, "account", func() error { return petstore.NotFound("Account", id) }, func(r scanner) (petstore.Account, error) {
		a, _, err := scanAccount(r)
		return a, err
	}, qAccount, id)
}

// Accounts lists a page of the accounts that match f, by id, without their password
// hashes, which the query leaves unread.
func (db *DB) Accounts(ctx context.Context, f petstore.AccountFilter, p petstore.Page) ([]petstore.Account, error) {
	q, args := accountsQuery(f, p)
	return list(uncancelled(ctx), db, "accounts", 0, func(row scanner) (petstore.Account, error) {
		a, _, err := scanAccount(row)
		return a, err
	}, q, args...)
}

// accountsQuery is the query of a page of the accounts of f. With a role, the index
// accounts_role (role, id) serves both the filter and the order.
func accountsQuery(f petstore.AccountFilter, p petstore.Page) (string, []any) {
	q, args := `SELECT id, email, role, created_at, disabled, '' FROM accounts WHERE id > ?`, []any{p.After}
	if len(f.IDs) > 0 {
		q, args = q+` AND id IN (SELECT value FROM json_each(?))`, append(args, idsJSON(f.IDs))
	}
	if f.Role != "" {
		q, args = q+` AND role = ?`, append(args, string(f.Role))
	}
	return q + ` ORDER BY id LIMIT ?`, append(args, p.Size())
}

// EnsureAccount returns the account with this email, creating it without a password
// (key-only) if there is none; a non-empty role is set on the account, new or not.
func (db *DB) EnsureAccount(ctx context.Context, email string, role petstore.Role) (petstore.Account, error) {
	newRole, err := petstore.AccountRole(role)
	if err != nil {
		return petstore.Account{}, err
	}
	var a petstore.Account
	err = db.update(ctx, func(tx *sql.Tx) error {
		var (
			hash string
			err  error
		)
		a, hash, err = scanAccount(tx.QueryRowContext(ctx, qAccountByEmail, petstore.EmailKey(email)))
		if errors.Is(err, sql.ErrNoRows) {
			a, err = insertAccount(ctx, tx, email, "", newRole, db.now())
			return err
		}
		if err != nil {
			return err
		}
		if err := petstore.CheckRoleGrant(a.Email, hash != "", role); err != nil {
			return err
		}
		if role != "" && role != a.Role {
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET role = ? WHERE id = ?`, string(role), a.ID); err != nil {
				return err
			}
			a.Role = role
		}
		return nil
	})
	if err != nil {
		return petstore.Account{}, fmt.Errorf("ensure account: %w", err)
	}
	return a, nil
}

// TakeOverAccount removes an account's password and revokes its keys, with an
// api_key.revoked event per key, made by the operator.
func (db *DB) TakeOverAccount(ctx context.Context, email string) error {
	err := db.updateWithEvents(ctx, func(tx *sql.Tx) ([]petstore.Event, error) {
		var id int64
		err := tx.QueryRowContext(ctx, `UPDATE accounts SET password_hash = '' WHERE email_lower = ? RETURNING id`,
			petstore.EmailKey(email)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, petstore.EmailNotFound()
		}
		if err != nil {
			return nil, err
		}
		return revokeKeys(ctx, tx, db.now().UTC(), id, keySet{}, petstore.Actor{})
	})
	if err != nil {
		return fmt.Errorf("take over account: %w", err)
	}
	return nil
}

// CountAccounts counts all accounts.
func (db *DB) CountAccounts(ctx context.Context) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM accounts`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count accounts: %w", err)
	}
	return n, nil
}

// qEnabledAdmins counts the enabled admins, from their partial index.
const qEnabledAdmins = `SELECT count(*) FROM accounts WHERE role = 'admin' AND disabled = 0`

// UpdateAccount applies change to the account with id under the last-admin rule,
// counting the enabled admins in the same write transaction: SQLite has one writer,
// so two demotions at once are one after the other, and the second counts one admin.
func (db *DB) UpdateAccount(ctx context.Context, id int64, change petstore.AccountChange) (petstore.Account, error) {
	var out petstore.Account
	err := db.update(ctx, func(tx *sql.Tx) error {
		a, hash, err := scanAccount(tx.QueryRowContext(ctx, qAccount, id))
		if errors.Is(err, sql.ErrNoRows) {
			return petstore.NotFound("Account", id)
		}
		if err != nil {
			return err
		}
		var admins int
		if err := tx.QueryRowContext(ctx, qEnabledAdmins).Scan(&admins); err != nil {
			return err
		}
		if out, err = change.Apply(a, hash != "", admins); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE accounts SET role = ?, disabled = ? WHERE id = ?`, string(out.Role), out.Disabled, id)
		return err
	})
	if err != nil {
		return petstore.Account{}, fmt.Errorf("update account: %w", err)
	}
	return out, nil
}
