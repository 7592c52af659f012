package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/tracing"
)

// Events (the outbox). A transaction that makes events writes them in one statement
// (qInsertEvents) queued with its other writes, so that an order batch gains no round
// trip, and nothing per endpoint: the dispatcher's claims fan them out (webhooks.go).
//
// An event's seq is the transaction's xid8 shifted left by 16 bits plus the
// event's place in that statement; a transaction writes its events in one statement
// only. The feed shows only the events of transactions older than the oldest one
// still running (pg_snapshot_xmin): every event that may yet commit has a greater
// seq than every event shown, so a reader that follows the cursor misses none, and
// neither does an endpoint's cursor, which stops at the same line. A transaction
// left open holds the feed and the deliveries back until it ends.

// maxEventsPerTx is how many events one transaction may write: the low 16 bits of a
// seq number an event within its transaction (seqShiftSQL, seqMaskSQL).
const maxEventsPerTx = 1<<16 - 1

const (
	// qInsertEvents writes events given as arrays (id, type, created_at, data), and
	// selects one row when an enabled endpoint may want them (the command tag counts
	// it), for the caller to wake the dispatcher after the commit.
	qInsertEvents = `WITH v AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[])
			WITH ORDINALITY AS v(id, type, created_at, data, n)
		), ev AS (
			INSERT INTO events (seq, id, type, created_at, data)
			SELECT (pg_current_xact_id()::text::bigint << ` + seqShiftSQL + `) + n, id, type, created_at, data FROM v
		)
		SELECT 1 FROM webhooks WHERE enabled LIMIT 1`
	seqShiftSQL = "16"
	seqMaskSQL  = "65535"

	eventColumns = `seq, id, type, created_at, data`
	// feedVisible is the feed's cut-off (see above).
	feedVisible = `seq < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint << ` + seqShiftSQL + `)`
	notTest     = `type <> 'webhook.test'`
)

// eventArgs makes the arguments of qInsertEvents; the events keep the trace of
// ctx's span (petstore.StampTrace).
func eventArgs(ctx context.Context, events []petstore.Event) ([]any, error) {
	if len(events) > maxEventsPerTx {
		return nil, fmt.Errorf("write events: %d in one transaction, at most %d", len(events), maxEventsPerTx)
	}
	petstore.StampTrace(events, tracing.TraceParent(ctx))
	n := len(events)
	ids, types, data := make([]string, n), make([]string, n), make([]string, n)
	created := make([]time.Time, n)
	for i, e := range events {
		b, err := petstore.MarshalEventData(e)
		if err != nil {
			return nil, fmt.Errorf("write events: %w", err)
		}
		ids[i], types[i], data[i] = e.ID, string(e.Type), string(b)
		created[i] = timestamp(e.CreatedAt)
	}
	return []any{ids, types, created, data}, nil
}

// updateWithEvents is update for a change that makes events: fn returns them, and
// they are written in its transaction. A commit of events that an enabled endpoint
// may want wakes the dispatcher (Options.WakeDispatcher).
func (db *DB) updateWithEvents(ctx context.Context, fn func(tx pgx.Tx) ([]petstore.Event, error)) error {
	var (
		wanted int64
		wrote  bool
	)
	err := db.update(ctx, func(tx pgx.Tx) error {
		events, err := fn(tx)
		if err != nil || len(events) == 0 {
			return err
		}
		wrote = true
		args, err := eventArgs(ctx, events)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, qInsertEvents, args...)
		if err != nil {
			return fmt.Errorf("write events: %w", err)
		}
		wanted = tag.RowsAffected()
		return nil
	})
	if err == nil && wrote {
		db.feedWritten()
	}
	if err == nil && wanted > 0 {
		db.wake()
	}
	return err
}

// feedWritten tells the live stream's reader that events were committed.
func (db *DB) feedWritten() {
	if db.feedHook != nil {
		db.feedHook()
	}
}

// wake tells the dispatcher of this process that it may have work.
func (db *DB) wake() {
	if db.wakeHook != nil {
		db.wakeHook()
	}
}

// event makes an event of a change, dated now.
func event(t petstore.EventType, now time.Time) petstore.Event {
	return petstore.Event{ID: petstore.NewEventID(), Type: t, CreatedAt: now}
}

// scanEvent reads a row of eventColumns.
func scanEvent(row pgx.Row) (petstore.Event, error) {
	var (
		e    petstore.Event
		typ  string
		data []byte
	)
	if err := row.Scan(&e.Seq, &e.ID, &typ, &e.CreatedAt, &data); err != nil {
		return petstore.Event{}, err
	}
	e.Type = petstore.EventType(typ)
	if err := petstore.UnmarshalEventData(&e, data); err != nil {
		return petstore.Event{}, err
	}
	return e, nil
}

// eventsQuery is the query of one page of the feed. Types (a key's readable types)
// reads each type from events_type, up to a page each, and merges them by seq: a page
// reads no event of another type, however many there are.
func eventsQuery(f petstore.EventFilter, p petstore.Page) (string, []any) {
	const all = `SELECT ` + eventColumns + ` FROM events WHERE seq > $1 AND ` + feedVisible + ` AND ` + notTest
	args := []any{p.After, p.Size()}
	if len(f.Types) == 1 {
		f.Type = f.Types[0]
	}
	switch {
	case f.Type != "":
		return all + ` AND type = $3 ORDER BY seq LIMIT $2`, append(args, string(f.Type))
	case f.Types == nil:
		return all + ` ORDER BY seq LIMIT $2`, args
	case len(f.Types) == 0:
		return all + ` AND false LIMIT $2`, args
	}
	var b strings.Builder
	for i, t := range f.Types {
		if i > 0 {
			b.WriteString(` UNION ALL `)
		}
		args = append(args, string(t))
		fmt.Fprintf(&b, `(%s AND type = $%d ORDER BY seq LIMIT $2)`, all, len(args))
	}
	b.WriteString(` ORDER BY seq LIMIT $2`)
	return b.String(), args
}

// Events lists a page of the feed by seq; see above for which events it shows.
func (db *DB) Events(ctx context.Context, f petstore.EventFilter, p petstore.Page) ([]petstore.Event, error) {
	if f.Types != nil && len(f.Types) == 0 && f.Type == "" {
		return []petstore.Event{}, nil
	}
	q, args := eventsQuery(f, p)
	return list(ctx, db, "events", 0, scanEvent, q, args...)
}

// Event finds an event of the feed by its id.
func (db *DB) Event(ctx context.Context, id string) (petstore.Event, error) {
	return one(ctx, db, "event", func() error { return petstore.EventNotFound(id) }, scanEvent, `SELECT `+eventColumns+` FROM events WHERE id = $1 AND `+notTest, id)
}

// PurgeEvents deletes the events that happened before the given time, with their
// deliveries, a chunk at a time (purgeInChunks): one statement over a million events
// would hold their locks, and swell the WAL, for as long as it ran.
func (db *DB) PurgeEvents(ctx context.Context, before time.Time) (int64, error) {
	n, err := db.purgeInChunks(ctx, `WITH e AS (
			DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE created_at < $1 ORDER BY seq LIMIT $2) RETURNING seq
		), d AS (DELETE FROM deliveries WHERE event_seq IN (SELECT seq FROM e))
		SELECT count(*) FROM e`, timestamp(before))
	if err != nil {
		return n, fmt.Errorf("purge events: %w", err)
	}
	return n, nil
}

// purgeChunk is how many rows one statement of a purge deletes.
const purgeChunk = 5000

// purgeInChunks runs del, a statement whose last parameter is the chunk's size and
// that selects how many rows it deleted, until a chunk deletes fewer; it returns how
// many it deleted in all.
func (db *DB) purgeInChunks(ctx context.Context, del string, args ...any) (int64, error) {
	args = append(args, db.purgeChunk)
	var total int64
	for {
		var n int64
		if err := db.pool.QueryRow(ctx, del, args...).Scan(&n); err != nil {
			return total, err
		}
		total += n
		if n < int64(db.purgeChunk) {
			return total, nil
		}
		db.purged(n)
	}
}
