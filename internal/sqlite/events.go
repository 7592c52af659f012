package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The outbox: a change writes its events, and a pending delivery for every enabled
// endpoint subscribed to each, in its own write transaction (record). The single
// writer commits events in seq order, so the feed pages by seq without a gap.

const (
	qInsertEvent = `INSERT INTO events (id, type, created_at, data, webhook_id) VALUES (?, ?, ?, ?, ?)`
	// qAnyWebhook spares the fan-out when no endpoint listens, the common case.
	qAnyWebhook = `SELECT EXISTS (SELECT 1 FROM webhooks WHERE enabled = 1)`
	qFanOut     = `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at, retry_since, created_at)
		SELECT id, ?, 'pending', ?, ?, ? FROM webhooks WHERE enabled = 1 AND events_mask & ? != 0`
)

// record writes events in tx with their deliveries. It reports whether it queued a
// delivery, for the caller to wake the dispatcher once the transaction commits.
func (db *DB) record(ctx context.Context, tx *sql.Tx, events []petstore.Event) (queued bool, err error) {
	if len(events) == 0 {
		return false, nil
	}
	ins, err := db.txStmt(ctx, tx, qInsertEvent)
	if err != nil {
		return false, err
	}
	seqs := make([]int64, len(events))
	for i, e := range events {
		data, err := petstore.MarshalEventData(e)
		if err != nil {
			return false, err
		}
		res, err := ins.ExecContext(ctx, e.ID, string(e.Type), formatTime(e.CreatedAt), string(data), nil)
		if err == nil {
			seqs[i], err = res.LastInsertId()
		}
		if err != nil {
			return false, fmt.Errorf("record event %s: %w", e.Type, err)
		}
	}
	any, err := db.txStmt(ctx, tx, qAnyWebhook)
	if err != nil {
		return false, err
	}
	var listening bool
	if err := any.QueryRowContext(ctx).Scan(&listening); err != nil {
		return false, fmt.Errorf("record events: %w", err)
	}
	if !listening {
		return false, nil
	}
	fan, err := db.txStmt(ctx, tx, qFanOut)
	if err != nil {
		return false, err
	}
	for i, e := range events {
		at := formatTime(e.CreatedAt)
		res, err := fan.ExecContext(ctx, seqs[i], at, at, at, int64(e.Type.Bit()))
		if err != nil {
			return false, fmt.Errorf("queue deliveries of %s: %w", e.Type, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			queued = true
		}
	}
	return queued, nil
}

// queued wakes the dispatcher after a commit that queued deliveries.
func (db *DB) queued(q bool) {
	if q && db.onDeliveries != nil {
		db.onDeliveries()
	}
}

// petEvents are the events of pet id's state going from before to after, dated now;
// the pet's name and category are read only when its status changed, which only the
// status event shows.
func petEvents(ctx context.Context, tx *sql.Tx, id int64, before, after petstore.PetState, now time.Time) ([]petstore.Event, error) {
	pet := petstore.Pet{ID: id}
	if before.Status != after.Status {
		var err error
		if pet, err = scanPet(tx.QueryRowContext(ctx, qPet, id)); err != nil {
			return nil, fmt.Errorf("load pet %d: %w", id, err)
		}
	}
	return petstore.StockEvents(pet, before, after, now), nil
}

const eventColumns = `seq, id, type, created_at, data`

func scanEvent(row interface{ Scan(...any) error }) (petstore.Event, error) {
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

// eventsQuery is the query of one page of the feed.
func eventsQuery(f petstore.EventFilter, p petstore.Page) (string, []any) {
	if f.Type != "" {
		return `SELECT ` + eventColumns + ` FROM events WHERE webhook_id IS NULL AND type = ? AND seq > ? ORDER BY seq LIMIT ?`,
			[]any{string(f.Type), p.After, p.Size()}
	}
	return `SELECT ` + eventColumns + ` FROM events WHERE webhook_id IS NULL AND seq > ? ORDER BY seq LIMIT ?`,
		[]any{p.After, p.Size()}
}

// Events lists a page of the feed by seq; test events are not in it.
func (db *DB) Events(ctx context.Context, f petstore.EventFilter, p petstore.Page) ([]petstore.Event, error) {
	q, args := eventsQuery(f, p)
	s, err := db.readStmt(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	rows, err := s.QueryContext(reading(ctx), args...)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	events := []petstore.Event{}
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return events, nil
}

// Event finds one event of the feed by its id.
func (db *DB) Event(ctx context.Context, id string) (petstore.Event, error) {
	s, err := db.readStmt(ctx, `SELECT `+eventColumns+` FROM events WHERE id = ? AND webhook_id IS NULL`)
	if err != nil {
		return petstore.Event{}, fmt.Errorf("event: %w", err)
	}
	e, err := scanEvent(s.QueryRowContext(reading(ctx), id))
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Event{}, petstore.EventNotFound(id)
	}
	if err != nil {
		return petstore.Event{}, fmt.Errorf("event: %w", err)
	}
	return e, nil
}

// PurgeEvents deletes the events that happened before the given time; their
// deliveries go with them (ON DELETE CASCADE).
func (db *DB) PurgeEvents(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.update(ctx, func(tx *sql.Tx) error {
		// created_at rises with seq (one writer, and a clock that a step back of a
		// few seconds would only delay a purge): delete up to the first event to keep.
		res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE seq < COALESCE(
			(SELECT seq FROM events WHERE created_at >= ? ORDER BY seq LIMIT 1), (SELECT MAX(seq) + 1 FROM events))`,
			formatTime(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("purge events: %w", err)
	}
	return n, nil
}
