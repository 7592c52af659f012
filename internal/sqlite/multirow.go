package sqlite

import (
	"strings"
)

// A batch of orders writes its orders and its events with multi-row INSERTs: one
// statement per chunk of rows rather than one per row. Each statement pays for opening
// its table's and its indexes' cursors, for AUTOINCREMENT's read and write of
// sqlite_sequence and for a trip through database/sql and the driver; per row that was
// a third of an order's INSERT (docs/PERFORMANCE.md, "The floor").
//
// A statement is prepared in Open for each chunk size (hotWrites), powers of two up to
// maxChunk: any number of rows is at most log2(maxChunk)+1 statements past the full
// chunks, and the writer connection keeps only a few statements of each shape.
const maxChunk = 64

// multiInsert is an INSERT of many rows: head, then row once per row, then tail.
type multiInsert struct {
	head, row, tail string
	// width is the number of parameters of row.
	width int
	// queries holds the statement of each chunk size, by size.
	queries map[int]string
}

func newMultiInsert(head, row, tail string) multiInsert {
	m := multiInsert{head: head, row: row, tail: tail, width: strings.Count(row, "?"), queries: make(map[int]string)}
	for n := 1; n <= maxChunk; n *= 2 {
		m.queries[n] = head + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") + tail
	}
	return m
}

// all returns the statements of every chunk size, for hotWrites.
func (m multiInsert) all() []string {
	var qs []string
	for n := 1; n <= maxChunk; n *= 2 {
		qs = append(qs, m.queries[n])
	}
	return qs
}

// chunk is the size of the next statement for rest rows: the largest chunk size not
// above rest.
func chunk(rest int) int {
	n := maxChunk
	for n > rest {
		n /= 2
	}
	return n
}

// eachChunk hands rows to write in chunks of the prepared sizes, largest first; n is
// the chunk's size, which picks its statement (queries[n]).
func eachChunk[T any](rows []T, write func(n int, part []T) error) error {
	for len(rows) > 0 {
		n := chunk(len(rows))
		if err := write(n, rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}
