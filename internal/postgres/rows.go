package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// collect reads every row of rows with scan (pgx.AppendRows), then closes them. The
// list has room for capacity rows, and is never nil: an empty page is [], not null.
func collect[T any](rows pgx.Rows, capacity int, scan func(pgx.Row) (T, error)) ([]T, error) {
	return pgx.AppendRows(make([]T, 0, capacity), rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}

// list runs q with args on the pool and collects its rows with scan; its errors say
// what was read.
func list[T any](ctx context.Context, db *DB, what string, capacity int, scan func(pgx.Row) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.pool.Query(ctx, q, args...)
	if err == nil {
		var l []T
		if l, err = collect(rows, capacity, scan); err == nil {
			return l, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", what, err)
}

// one reads the row of q with scan; missing makes the error of a row that is not
// there, and other errors say what was read.
func one[T any](ctx context.Context, db *DB, what string, missing func() error, scan func(pgx.Row) (T, error), q string, args ...any) (T, error) {
	v, err := scan(db.pool.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return v, missing()
	}
	if err != nil {
		return v, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}
