package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/tracing"
)

// The outbox: a change writes its events in its own write transaction
// (updateWithEvents, writeEvents), and nothing per endpoint: the dispatcher's claims
// fan them out (webhooks.go). The single writer commits events in seq order, so the
// feed and the endpoints' cursors page by seq without a gap.

const (
	qInsertEvent = `INSERT INTO events (id, type, created_at, data, webhook_id) VALUES (?, ?, ?, ?, ?)`
	// qAnyWebhook spares the wake-up when no endpoint listens, the common case.
	qAnyWebhook = `SELECT EXISTS (SELECT 1 FROM webhooks WHERE enabled = 1)`
)

// insertEvents writes the events of a change, a chunk of rows per statement
// (multirow.go); the feed's events have no webhook_id.
var insertEvents = newMultiInsert(`INSERT INTO events (id, type, created_at, data, webhook_id) VALUES `, `(?, ?, ?, ?, NULL)`, ``)

// updateWithEvents is update for a change that makes events: fn returns them, and
// they are written in its transaction. A commit of events that an enabled endpoint
// may want calls WakeDispatcher.
func (db *DB) updateWithEvents(ctx context.Context, fn func(tx *sql.Tx) ([]petstore.Event, error)) error {
	var wanted, wrote bool
	err := db.update(ctx, func(tx *sql.Tx) error {
		events, err := fn(tx)
		if err != nil {
			return err
		}
		wrote = len(events) > 0
		wanted, err = db.writeEvents(ctx, tx, events)
		return err
	})
	if err == nil && wrote {
		db.feedWritten()
	}
	if err == nil && wanted {
		db.wake()
	}
	return err
}

// writeEvents writes events in tx. It reports whether an enabled endpoint may want
// them, for the caller to wake the dispatcher once the transaction commits.
func (db *DB) writeEvents(ctx context.Context, tx *sql.Tx, events []petstore.Event) (wanted bool, err error) {
	if len(events) == 0 {
		return false, nil
	}
	petstore.StampTrace(events, tracing.TraceParent(ctx))
	args := make([]any, 0, insertEvents.width*chunk(len(events)))
	var created time.Time
	var createdText string
	err = eachChunk(events, func(n int, part []petstore.Event) error {
		args = args[:0]
		for _, e := range part {
			data, err := petstore.MarshalEventData(e)
			if err != nil {
				return fmt.Errorf("write events: %w", err)
			}
			if createdText == "" || !e.CreatedAt.Equal(created) { // a change's events share their time
				created, createdText = e.CreatedAt, formatTime(e.CreatedAt)
			}
			args = append(args, e.ID, string(e.Type), createdText, string(data))
		}
		if _, err := tx.StmtContext(ctx, db.writeStmts[insertEvents.queries[n]]).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("write events: %w", err)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	listening, err := db.txStmt(ctx, tx, qAnyWebhook)
	if err != nil {
		return false, err
	}
	if err := listening.QueryRowContext(ctx).Scan(&wanted); err != nil {
		return false, fmt.Errorf("write events: %w", err)
	}
	return wanted, nil
}

// feedWritten tells the live stream's reader that events were committed.
func (db *DB) feedWritten() {
	if db.feedHook != nil {
		db.feedHook()
	}
}

// wake tells the dispatcher that deliveries are due.
func (db *DB) wake() {
	if db.wakeHook != nil {
		db.wakeHook()
	}
}

const eventColumns = `seq, id, type, created_at, data`

func scanEvent(row scanner) (petstore.Event, error) {
	var (
		e       petstore.Event
		typ     string
		created string
		data    []byte
	)
	if err := row.Scan(&e.Seq, &e.ID, &typ, &created, &data); err != nil {
		return petstore.Event{}, err
	}
	e.Type = petstore.EventType(typ)
	var err error
	if e.CreatedAt, err = parseTime(created); err != nil {
		return petstore.Event{}, err
	}
	if err := petstore.UnmarshalEventData(&e, data); err != nil {
		return petstore.Event{}, err
	}
	return e, nil
}

// eventsQuery is the query of one page of the feed. Types (a key's readable types)
// reads each type from events_type, up to a page each, and merges them by seq: a page
// reads no event of another type, however many there are.
func eventsQuery(f petstore.EventFilter, p petstore.Page) (string, []any) {
	const all = `SELECT ` + eventColumns + ` FROM events WHERE type <> 'webhook.test'`
	if len(f.Types) == 1 {
		f.Type = f.Types[0]
	}
	switch {
	case f.Type != "":
		return all + ` AND type = ? AND seq > ? ORDER BY seq LIMIT ?`, []any{string(f.Type), p.After, p.Size()}
	case f.Types == nil:
		return all + ` AND seq > ? ORDER BY seq LIMIT ?`, []any{p.After, p.Size()}
	case len(f.Types) == 0:
		return all + ` AND 0`, nil
	}
	var b strings.Builder
	args := make([]any, 0, 3*len(f.Types)+1)
	for i, t := range f.Types {
		if i > 0 {
			b.WriteString(` UNION ALL `)
		}
		b.WriteString(`SELECT * FROM (` + all + ` AND type = ? AND seq > ? ORDER BY seq LIMIT ?)`)
		args = append(args, string(t), p.After, p.Size())
	}
	b.WriteString(` ORDER BY seq LIMIT ?`)
	return b.String(), append(args, p.Size())
}

// Events lists a page of the feed by seq; test events are not in it.
func (db *DB) Events(ctx context.Context, f petstore.EventFilter, p petstore.Page) ([]petstore.Event, error) {
	if f.Types != nil && len(f.Types) == 0 && f.Type == "" {
		return []petstore.Event{}, nil
	}
	q, args := eventsQuery(f, p)
	return list(uncancelled(ctx), db, "events", 0, scanEvent, q, args...)
}

// Event finds one event of the feed by its id.
func (db *DB) Event(ctx context.Context, id string) (petstore.Event, error) {
	return one(ctx, db, "event", func() error { return petstore.EventNotFound(id) }, scanEvent, `SELECT `+eventColumns+` FROM events WHERE id = ? AND type <> 'webhook.test'`, id)
}

// PurgeEvents deletes the events that happened before the given time; their
// deliveries go with them (ON DELETE CASCADE). The first event to keep is found on
// the read pool; the deletion then goes by seq in chunks (purgeInChunks), so that a
// purge of a million events never holds the writer long.
func (db *DB) PurgeEvents(ctx context.Context, before time.Time) (int64, error) {
	// created_at rises with seq (one writer, and a clock that a step back of a few
	// seconds would only delay a purge): delete up to the first event to keep.
	var keep int64
	err := db.read.QueryRowContext(ctx, `SELECT COALESCE(
		(SELECT seq FROM events WHERE created_at >= ? ORDER BY seq LIMIT 1), (SELECT MAX(seq) + 1 FROM events), 0)`,
		formatTime(before)).Scan(&keep)
	if err != nil {
		return 0, fmt.Errorf("purge events: %w", err)
	}
	n, err := db.purgeInChunks(ctx, `DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE seq < ? ORDER BY seq LIMIT ?)`, keep)
	if err != nil {
		return n, fmt.Errorf("purge events: %w", err)
	}
	return n, nil
}

// A purge's transactions are bounded by time, not rows: an order that arrives while
// one runs waits for all of it, and what a row costs varies tenfold with the cores'
// load and the rows' width. purgeChunk bounds the rows of the first transaction and
// of every later one; each next one is sized from the last one's rate to take
// purgeBudget; after each the purge leaves the writer to the orders for as long as it
// held it, and at least purgePause, so that it never takes more than half of it.
const (
	purgeChunk    = 1000
	purgeMinChunk = 16
	purgeBudget   = 4 * time.Millisecond
	purgePause    = 2 * time.Millisecond
)

// purgeInChunks runs del, a DELETE whose last parameter is the chunk's size, each
// time in a write transaction of its own, until a chunk deletes fewer rows than it
// was allowed; it returns how many it deleted in all.
func (db *DB) purgeInChunks(ctx context.Context, del string, args ...any) (int64, error) {
	size := db.purgeChunk
	args = append(args, size)
	var total int64
	for {
		args[len(args)-1] = size
		var (
			n          int64
			began      time.Time
			took, held time.Duration
		)
		err := db.update(ctx, func(tx *sql.Tx) error {
			began = time.Now()
			res, err := tx.ExecContext(ctx, del, args...)
			took = time.Since(began)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		held = time.Since(began)
		total += n
		if err != nil || n < int64(size) {
			return total, err
		}
		db.purged(n)
		size = nextChunk(size, took, db.purgeChunk)
		t := time.NewTimer(max(purgePause, held))
		select {
		case <-ctx.Done():
			t.Stop()
			return total, ctx.Err()
		case <-t.C:
		}
	}
}

// nextChunk is the size of the chunk after one of size rows that took took: as many
// rows as purgeBudget allows at that rate, between purgeMinChunk and most.
func nextChunk(size int, took time.Duration, most int) int {
	if took <= 0 {
		return most
	}
	return max(min(purgeMinChunk, most), min(most, int(int64(size)*int64(purgeBudget)/int64(took))))
}
