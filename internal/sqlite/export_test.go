package sqlite

import (
	"context"
	"database/sql"
)

// WriterForTest and ReaderForTest give the tests the pools, to check how they are set up.
func WriterForTest(db *DB) *sql.DB { return db.write }
func ReaderForTest(db *DB) *sql.DB { return db.read }

// SetBeforeCommitForTest makes every batch of orders run hook last in its
// transaction, after its writes: the batch holds the writer while hook runs, and an
// error from hook fails the batch as a failed commit would (it is rolled back).
func SetBeforeCommitForTest(db *DB, hook func() error) { db.beforeCommit = hook }

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
