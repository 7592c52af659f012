package postgres

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"

	"github.com/acme-pets/petstore/internal/migration"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies every migration that the schema first on the pool's search_path
// has not had yet. Goose needs a *sql.DB: pgx's stdlib adapter lends it connections
// of the pool just for this. Processes that start together take turns on a
// session-level advisory lock, so that only one of them creates the schema.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	var schema string
	if err := pool.QueryRow(ctx, `SELECT coalesce(current_schema(), '')`).Scan(&schema); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if schema == "" {
		return fmt.Errorf("migrate: no schema of the search_path exists; create it first")
	}
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(migrationLockID(schema)),
		// Retry every second (goose's shortest period) for up to five minutes.
		lock.WithLockTimeout(1, 300),
	)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close() // the pool stays open
	return migration.Up(ctx, sqlDB, migration.Schema{
		Dialect: goose.DialectPostgres, Files: fsys, Locker: locker, Go: goMigrations(),
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
		goose.NewGoMigration(4, &goose.GoFunc{RunTx: migration.RekeyEmails}, nil),   // re-key emails
		goose.NewGoMigration(7, &goose.GoFunc{RunTx: migration.LowerPetNames}, nil), // lower pet names
		goose.NewGoMigration(10, &goose.GoFunc{RunTx: indexPetNames}, nil),          // index pet names
	}
}

// migrationLockID is the advisory lock that migrations of one schema take. Advisory
// locks are per database; one id per schema lets schemas of one database (tests,
// several deployments) migrate at the same time while processes sharing a schema
// still take turns.
func migrationLockID(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("petstore migrations\x00" + schema))
	return int64(h.Sum64())
}
