package sqlite

import "database/sql"

// WriterForTest and ReaderForTest give the tests the pools, to check how they are set up.
func WriterForTest(db *DB) *sql.DB { return db.write }
func ReaderForTest(db *DB) *sql.DB { return db.read }
