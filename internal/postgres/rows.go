package postgres

import "github.com/jackc/pgx/v5"

// collect reads every row of rows with scan (pgx.AppendRows), then closes them. The
// list has room for capacity rows, and is never nil: an empty page is [], not null.
func collect[T any](rows pgx.Rows, capacity int, scan func(pgx.Row) (T, error)) ([]T, error) {
	return pgx.AppendRows(make([]T, 0, capacity), rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}
