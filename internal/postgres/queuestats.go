package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// QueueStats counts the pending deliveries and the events not yet fanned out to
// enabled endpoints (counted up to 10,000 each: seqs are not consecutive here, and a
// scrape must not walk a long backlog), and dates the oldest event among them.
func (db *DB) QueueStats(ctx context.Context) (petstore.QueueStats, error) {
	var (
		st     petstore.QueueStats
		oldest *time.Time
	)
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM deliveries WHERE status = 'pending')
		+ coalesce((SELECT sum((SELECT count(*) FROM (SELECT 1 FROM events e WHERE e.seq > w.fan_cursor
			AND e.type <> 'webhook.test' LIMIT 10000) x)) FROM webhooks w WHERE w.enabled), 0),
		least(
			(SELECT min(e.created_at) FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.status = 'pending'),
			(SELECT min((SELECT e.created_at FROM events e WHERE e.seq > w.fan_cursor AND e.type <> 'webhook.test'
				ORDER BY e.seq LIMIT 1)) FROM webhooks w WHERE w.enabled))`).Scan(&st.Pending, &oldest)
	if err != nil {
		return petstore.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	if oldest != nil {
		st.Oldest = *oldest
	}
	return st, nil
}
