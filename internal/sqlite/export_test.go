package sqlite

import (
	"context"
	"database/sql"
)

// WriterForTest and ReaderForTest give the tests the pools, to check how they are set up.
func WriterForTest(db *DB) *sql.DB { return db.write }
func ReaderForTest(db *DB) *sql.DB { return db.read }

// SetPurgeChunkForTest makes purges delete n rows at a time and report each full
// chunk to purged.
func SetPurgeChunkForTest(db *DB, n int, purged func(int64)) {
	if n > 0 {
		db.purgeChunk = n
	}
	if purged != nil {
		db.purged = purged
	}
}

// AnalyzeForTest gathers the planner's statistics.
func (db *DB) AnalyzeForTest(ctx context.Context) error {
	_, err := db.write.ExecContext(ctx, `ANALYZE`)
	return err
}
