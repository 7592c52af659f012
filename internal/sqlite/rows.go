package sqlite

import "database/sql"

// collect reads every row of rows with scan, then closes them. The list has room for
// capacity rows, and is never nil: an empty page is [], not null.
func collect[T any](rows *sql.Rows, capacity int, scan func(row interface{ Scan(...any) error }) (T, error)) ([]T, error) {
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
