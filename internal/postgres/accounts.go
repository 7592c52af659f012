package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

// Emails are unique in any letter case: email_lower holds the lower-case form that
// the unique index and every lookup use, and email keeps what the user typed. The
// lower-casing is Go's (Unicode), as on SQLite, not PostgreSQL's lower(), which
// depends on the database's ctype.

func emailTaken() error {
	return petstore.EmailTaken()
}

// CreateAccount adds an account; an email already used in any letter case is
// EConflict. An empty role is customer.
func (db *DB) CreateAccount(ctx context.Context, email, passwordHash string, role petstore.Role) (petstore.Account, error) {
	role, err := petstore.AccountRole(role)
	if err != nil {
		return petstore.Account{}, err
	}
	a := petstore.Account{Email: email, Role: role, CreatedAt: timestamp(db.now())}
	err = db.pool.QueryRow(ctx,
		`INSERT INTO accounts (email, email_lower, password_hash, role, created_at)
		 VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		email, petstore.EmailKey(email), passwordHash, string(role), a.CreatedAt,
	).Scan(&a.ID)
	if isUnique(err) {
		return petstore.Account{}, emailTaken()
	}
	if err != nil {
		return petstore.Account{}, fmt.Errorf("create account: %w", err)
	}
	return a, nil
}

func scanAccount(row pgx.Row) (petstore.Account, string, error) {
	var (
		a    petstore.Account
		role string
		hash string
	)
	if err := row.Scan(&a.ID, &a.Email, &role, &a.CreatedAt, &a.Disabled, &hash); err != nil {
		return petstore.Account{}, "", err
	}
	a.Role = petstore.Role(role)
	return a, hash, nil
}

// AccountByEmail finds an account, in any letter case, with its password hash (empty
// for a key-only account).
func (db *DB) AccountByEmail(ctx context.Context, email string) (petstore.Account, string, error) {
	a, hash, err := scanAccount(db.pool.QueryRow(ctx,
		`SELECT id, email, role, created_at, disabled, password_hash FROM accounts WHERE email_lower = $1`,
		petstore.EmailKey(email)))
	if noRows(err) {
		return petstore.Account{}, "", petstore.EmailNotFound()
	}
	if err != nil {
		return petstore.Account{}, "", fmt.Errorf("account by email: %w", err)
	}
	return a, hash, nil
}

// Account finds an account by id.
func (db *DB) Account(ctx context.Context, id int64) (petstore.Account, error) {
	return one(ctx, db, "account", func() error { return petstore.NotFound("Account", id) }, func(r pgx.Row) (petstore.Account, error) {
		a, _, err := scanAccount(r)
		return a, err
	}, `SELECT id, email, role, created_at, disabled, password_hash FROM accounts WHERE id = $1`, id)
}

// Accounts lists a page of the accounts that match f, by id, without their password
// hashes, which the query leaves unread.
func (db *DB) Accounts(ctx context.Context, f petstore.AccountFilter, p petstore.Page) ([]petstore.Account, error) {
	q, args := accountsQuery(f, p)
	return list(ctx, db, "accounts", 0, func(row pgx.Row) (petstore.Account, error) {
		a, _, err := scanAccount(row)
		return a, err
	}, q, args...)
}

// accountsQuery is the query of a page of the accounts of f. With a role, the index
// accounts_role (role, id) serves both the filter and the order.
func accountsQuery(f petstore.AccountFilter, p petstore.Page) (string, []any) {
	q, args := `SELECT id, email, role, created_at, disabled, '' FROM accounts WHERE id > $1`, []any{p.After, p.Size()}
	if len(f.IDs) > 0 {
		args = append(args, f.IDs)
		q += fmt.Sprintf(` AND id = ANY($%d)`, len(args))
	}
	if f.Role != "" {
		args = append(args, string(f.Role))
		q += fmt.Sprintf(` AND role = $%d`, len(args))
	}
	return q + ` ORDER BY id LIMIT $2`, args
}

// EnsureAccount returns the account with this email, creating it without a password
// (key-only) if there is none; a non-empty role is set on the account, new or not.
// It is one statement, so processes ensuring the same account at once agree on it.
func (db *DB) EnsureAccount(ctx context.Context, email string, role petstore.Role) (petstore.Account, error) {
	newRole, err := petstore.AccountRole(role)
	if err != nil {
		return petstore.Account{}, err
	}
	var a petstore.Account
	err = db.update(ctx, func(tx pgx.Tx) error {
		// Of processes ensuring one new account at once, one inserts it; the others
		// wait for it and find it below.
		if _, err := tx.Exec(ctx,
			`INSERT INTO accounts (email, email_lower, password_hash, role, created_at)
			 VALUES ($1, $2, '', $3, $4) ON CONFLICT (email_lower) DO NOTHING`,
			email, petstore.EmailKey(email), string(newRole), timestamp(db.now())); err != nil {
			return err
		}
		var (
			hash string
			err  error
		)
		a, hash, err = scanAccount(tx.QueryRow(ctx,
			`SELECT id, email, role, created_at, disabled, password_hash FROM accounts WHERE email_lower = $1 FOR UPDATE`,
			petstore.EmailKey(email)))
		if err != nil {
			return err
		}
		if err := petstore.CheckRoleGrant(a.Email, hash != "", role); err != nil {
			return err
		}
		if role != "" && role != a.Role {
			if _, err := tx.Exec(ctx, `UPDATE accounts SET role = $1 WHERE id = $2`, string(role), a.ID); err != nil {
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
	err := db.updateWithEvents(ctx, func(tx pgx.Tx) ([]petstore.Event, error) {
		var id int64
		err := tx.QueryRow(ctx, `UPDATE accounts SET password_hash = '' WHERE email_lower = $1 RETURNING id`,
			petstore.EmailKey(email)).Scan(&id)
		if noRows(err) {
			return nil, petstore.EmailNotFound()
		}
		if err != nil {
			return nil, err
		}
		return revokeKeys(ctx, tx, db.now(), id, keySet{}, petstore.Actor{})
	})
	if err != nil {
		return fmt.Errorf("take over account: %w", err)
	}
	return nil
}

// CountAccounts counts all accounts.
func (db *DB) CountAccounts(ctx context.Context) (int, error) {
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM accounts`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count accounts: %w", err)
	}
	return n, nil
}

// qLockEnabledAdmins locks the enabled admins, from their partial index.
const qLockEnabledAdmins = `SELECT id FROM accounts WHERE role = 'admin' AND NOT disabled ORDER BY id FOR UPDATE`

// UpdateAccount applies change to the account with id under the last-admin rule. The
// enabled admins are locked (FOR UPDATE) before they are counted, so that of two
// demotions at once the second waits for the first to commit and counts what is left.
func (db *DB) UpdateAccount(ctx context.Context, id int64, change petstore.AccountChange) (petstore.Account, error) {
	var out petstore.Account
	err := db.update(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, qLockEnabledAdmins)
		if err != nil {
			return err
		}
		admins, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		a, hash, err := scanAccount(tx.QueryRow(ctx,
			`SELECT id, email, role, created_at, disabled, password_hash FROM accounts WHERE id = $1 FOR UPDATE`, id))
		if noRows(err) {
			return petstore.NotFound("Account", id)
		}
		if err != nil {
			return err
		}
		if out, err = change.Apply(a, hash != "", len(admins)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE accounts SET role = $1, disabled = $2 WHERE id = $3`, string(out.Role), out.Disabled, id)
		return err
	})
	if err != nil {
		return petstore.Account{}, fmt.Errorf("update account: %w", err)
	}
	return out, nil
}
