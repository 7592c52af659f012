package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/acme-pets/petstore/internal/petstore"
)

// QueueStats counts the pending deliveries and the events after each enabled
// endpoint's cursor (seqs are consecutive here, so that is a subtraction, whatever
// the backlog), and dates the oldest event among them.
func (db *DB) QueueStats(ctx context.Context) (petstore.QueueStats, error) {
	s, err := db.readStmt(ctx, `SELECT
		(SELECT COUNT(*) FROM deliveries WHERE status = 'pending')
		+ COALESCE((SELECT SUM(MAX(m.seq - w.fan_cursor, 0)) FROM webhooks w, (SELECT COALESCE(MAX(seq), 0) AS seq FROM events) m
			WHERE w.enabled = 1), 0),
		(SELECT MIN(c) FROM (
			SELECT MIN(e.created_at) AS c FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.status = 'pending'
			UNION ALL
			SELECT (SELECT e.created_at FROM events e WHERE e.seq > w.fan_cursor AND e.type <> 'webhook.test' ORDER BY e.seq LIMIT 1)
			FROM webhooks w WHERE w.enabled = 1))`)
	if err != nil {
		return petstore.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	var (
		st     petstore.QueueStats
		oldest sql.NullString
	)
	if err := s.QueryRowContext(uncancelled(ctx)).Scan(&st.Pending, &oldest); err != nil {
		return petstore.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	if t, err := parseNullTime(oldest); err != nil {
		return petstore.QueueStats{}, err
	} else if t != nil {
		st.Oldest = *t
	}
	return st, nil
}
