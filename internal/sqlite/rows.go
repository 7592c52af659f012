package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// scanner is what a scan function reads: a *sql.Row or the current row of *sql.Rows.
type scanner = interface{ Scan(...any) error }

// collect reads every row of rows with scan, then closes them. The list has room for
// capacity rows, and is never nil: an empty page is [], not null.
func collect[T any](rows *sql.Rows, capacity int, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	list := make([]T, 0, capacity)
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, rows.Err()
}

// list runs the reader statement of q with args and collects its rows with scan; its
// errors say what was read. ctx is the request's for a list that may scan, and
// uncancelled(ctx) for a page an index delivers.
func list[T any](ctx context.Context, db *DB, what string, capacity int, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	s, err := db.readStmt(ctx, q)
	if err == nil {
		var rows *sql.Rows
		if rows, err = s.QueryContext(ctx, args...); err == nil {
			var l []T
			if l, err = collect(rows, capacity, scan); err == nil {
				return l, nil
			}
		}
	}
	return nil, fmt.Errorf("%s: %w", what, err)
}

// one reads the row of the reader statement of q with scan; missing makes the error
// of a row that is not there, and other errors say what was read.
func one[T any](ctx context.Context, db *DB, what string, missing func() error, scan func(scanner) (T, error), q string, args ...any) (T, error) {
	s, err := db.readStmt(ctx, q)
	var v T
	if err == nil {
		v, err = scan(s.QueryRowContext(uncancelled(ctx), args...))
	}
	if errors.Is(err, sql.ErrNoRows) {
		return v, missing()
	}
	if err != nil {
		return v, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}
