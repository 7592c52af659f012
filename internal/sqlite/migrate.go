package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"time"

	"github.com/acme-pets/petstore/internal/migration"
	"github.com/pressly/goose/v3"
)

// Migrate applies every migration that db has not had yet. Processes that start
// together on a new file take turns through a lock row, so that only one of them
// creates the schema.
func Migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return migration.Up(ctx, db, migration.Schema{
		Dialect: goose.DialectSQLite3, Files: fsys, Locker: migrationLock{}, Go: goMigrations(),
	})
}

// goMigrations are the migrations written in Go, numbered among the SQL files of
// migrations. Both stores run the same three, in the same order, and a step both
// take has the same name in both (a SQL file's name, or the function here), but not
// the same number: SQLite has migrations of its own (2 and 3 bring its first schema
// to the shape PostgreSQL's first already had; 6, readiness; 16, an index
// PostgreSQL's 5 made), so its shared steps stand further on; and numbers of
// migrations taken back stay unused in each. The numbers are not aligned, and must not be: goose records the
// version of every migration it applied, so a database migrated under the old
// numbers would, under new ones, skip a step it never had or run one again.
func goMigrations() []*goose.Migration {
	return []*goose.Migration{
		goose.NewGoMigration(7, &goose.GoFunc{RunTx: migration.RekeyEmails}, nil),    // re-key emails
		goose.NewGoMigration(10, &goose.GoFunc{RunTx: migration.LowerPetNames}, nil), // lower pet names
		goose.NewGoMigration(13, &goose.GoFunc{RunTx: indexPetNames}, nil),           // index pet names
	}
}

// migrationLock is a goose.SessionLocker for SQLite, which has no advisory locks: a
// row in a table of its own is the lock. A lock older than staleLock is taken over,
// in case its process died while migrating. It runs on goose's own connection (a
// goose.Locker would ask the pool for a second one, and the writer pool has only one).
type migrationLock struct{}

const staleLock = time.Minute

func (migrationLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS goose_lock (
		id        INTEGER PRIMARY KEY CHECK (id = 1),
		locked_at TEXT    NOT NULL
	)`)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	for {
		now := time.Now()
		res, err := conn.ExecContext(ctx,
			`INSERT INTO goose_lock (id, locked_at) VALUES (1, ?)
			 ON CONFLICT (id) DO UPDATE SET locked_at = excluded.locked_at WHERE locked_at < ?`,
			formatTime(now), formatTime(now.Add(-staleLock)))
		if err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		} else if n == 1 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("migration lock: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (migrationLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, `DELETE FROM goose_lock`); err != nil {
		return fmt.Errorf("migration unlock: %w", err)
	}
	return nil
}
