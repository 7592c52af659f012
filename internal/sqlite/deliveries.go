package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

const (
	deliveryColumns = `d.event_seq, d.webhook_id, e.id, e.type, d.status, d.attempts, d.next_attempt_at, d.last_attempt_at,
		d.response_status, d.last_error, d.created_at`
	deliveryFrom = ` FROM deliveries d JOIN events e ON e.seq = d.event_seq`
	// qDeliveryRows pages an endpoint's delivery rows; the others are what its spans
	// tell of (spanQuery).
	qDeliveryRows = `SELECT ` + deliveryColumns + deliveryFrom + ` WHERE d.webhook_id = ? AND d.event_seq > ?
		ORDER BY d.event_seq LIMIT ?`
)

func scanDelivery(row scanner, more ...any) (petstore.Delivery, error) {
	var (
		d           petstore.Delivery
		typ, status string
		next, last  sql.NullString
		created     string
		err         error
	)
	dest := append([]any{&d.ID, &d.WebhookID, &d.EventID, &typ, &status, &d.Attempts, &next, &last,
		&d.ResponseStatus, &d.LastError, &created}, more...)
	if err = row.Scan(dest...); err != nil {
		return petstore.Delivery{}, err
	}
	d.EventType, d.Status = petstore.EventType(typ), petstore.DeliveryStatus(status)
	if d.NextAttemptAt, err = parseNullTime(next); err != nil {
		return petstore.Delivery{}, err
	}
	if d.LastAttemptAt, err = parseNullTime(last); err != nil {
		return petstore.Delivery{}, err
	}
	if d.CreatedAt, err = parseTime(created); err != nil {
		return petstore.Delivery{}, err
	}
	return d, nil
}

// spans reads an endpoint's spans, past and current (if it is enabled), oldest first.
func spans(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, id int64) ([]petstore.Span, error) {
	rows, err := q.QueryContext(ctx, `SELECT from_seq, to_seq, events, failed_error FROM webhook_spans
		WHERE webhook_id = ?1
		UNION ALL SELECT span_from, fan_cursor, events, NULL FROM webhooks WHERE id = ?1 AND enabled = 1
		ORDER BY 1`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []petstore.Span
	for rows.Next() {
		var (
			s   petstore.Span
			why sql.NullString
		)
		if err := rows.Scan(&s.From, &s.To, &s.Events, &why); err != nil {
			return nil, err
		}
		s.Failed, s.Error = why.Valid, why.String
		if s.To > s.From {
			out = append(out, s)
		}
	}
	return out, rows.Err()
}

// spanQuery finds the events of spans after seq after that have no delivery row of
// endpoint id, in feed order, up to limit: the deliveries the spans tell of. Spans
// are few (one per change of subscription or of being enabled), so each is a range
// of the events' primary key with the types it held.
func spanQuery(id int64, list []petstore.Span, after int64, limit int) (string, []any) {
	var b strings.Builder
	args := []any{after}
	b.WriteString(`SELECT ` + eventHead + ` FROM events e WHERE e.seq > ? AND e.type <> 'webhook.test' AND (`)
	for i, s := range list {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString("(e.seq > ? AND e.seq <= ?")
		args = append(args, s.From, s.To)
		if s.Events != petstore.MaskAll {
			b.WriteString(" AND e.type IN (")
			for j, t := range s.Events.Types() {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("?")
				args = append(args, string(t))
			}
			b.WriteString(")")
		}
		b.WriteString(")")
	}
	b.WriteString(`) AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.webhook_id = ? AND d.event_seq = e.seq)
		ORDER BY e.seq LIMIT ?`)
	args = append(args, id, limit)
	return b.String(), args
}

// eventHead is what a delivery shows of its event.
const eventHead = `e.seq, e.id, e.type, e.created_at`

func scanEventHead(row scanner) (petstore.Event, error) {
	var (
		e            petstore.Event
		typ, created string
	)
	if err := row.Scan(&e.Seq, &e.ID, &typ, &created); err != nil {
		return e, err
	}
	e.Type = petstore.EventType(typ)
	var err error
	e.CreatedAt, err = parseTime(created)
	return e, err
}

// Deliveries lists a page of an endpoint's deliveries by id (the event's seq): its
// rows, merged with what its spans tell of the events without one. An unknown
// endpoint is ENotFound.
func (db *DB) Deliveries(ctx context.Context, webhookID int64, p petstore.Page) ([]petstore.Delivery, error) {
	if _, err := db.Webhook(ctx, webhookID); err != nil {
		return nil, err
	}
	rctx := uncancelled(ctx)
	// One read transaction, so that rows and spans agree (a claim or a finish may
	// commit between two statements otherwise).
	tx, err := db.read.BeginTx(rctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	list, err := spans(rctx, tx, webhookID)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	rows, err := tx.QueryContext(rctx, qDeliveryRows, webhookID, p.After, p.Size())
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	out := []petstore.Delivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("deliveries: %w", err)
		}
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	if len(list) == 0 {
		return out, nil
	}
	q, args := spanQuery(webhookID, list, p.After, p.Size())
	erows, err := tx.QueryContext(rctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	defer erows.Close()
	var told []petstore.Delivery
	for erows.Next() {
		e, err := scanEventHead(erows)
		if err != nil {
			return nil, fmt.Errorf("deliveries: %w", err)
		}
		if d, ok := petstore.SpanDelivery(webhookID, e, list); ok {
			told = append(told, d)
		}
	}
	if err := erows.Err(); err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	return petstore.MergeDeliveries(out, told, p.Size()), nil
}

// RetryDelivery makes a delivery pending again, due at now, with a fresh retry
// horizon. A pending one is left as it is; one of a disabled endpoint is EConflict,
// as it would wait for the endpoint forever. A delivery a span tells of gets a row.
func (db *DB) RetryDelivery(ctx context.Context, webhookID, deliveryID int64, now time.Time, may func(petstore.Delivery) error) (petstore.Delivery, error) {
	now = now.UTC()
	var d petstore.Delivery
	err := db.update(ctx, func(tx *sql.Tx) error {
		w, err := loadWebhook(ctx, tx, webhookID)
		if err != nil {
			return err
		}
		d, err = scanDelivery(tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+deliveryFrom+` WHERE d.webhook_id = ? AND d.event_seq = ?`,
			webhookID, deliveryID))
		fromSpan := errors.Is(err, sql.ErrNoRows)
		if fromSpan {
			var ok bool
			if d, ok, err = spanDeliveryOf(ctx, tx, webhookID, deliveryID); err == nil && !ok {
				return petstore.DeliveryNotFound(deliveryID)
			}
		}
		if err != nil {
			return err
		}
		if retry, err := petstore.CheckRetry(d, w.Enabled, may); !retry {
			return err
		}
		// The row is not fanned: a success at its first attempt keeps it, since the
		// span may say otherwise (one that the endpoint's disabling failed).
		at := formatTime(now)
		if fromSpan {
			_, err = tx.ExecContext(ctx, `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at,
				retry_since, created_at, fanned) VALUES (?, ?, 'pending', ?, ?, ?, 0)`, webhookID, deliveryID, at, at, formatTime(d.CreatedAt))
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?,
				retry_since = ?, leased_until = NULL, fanned = 0 WHERE webhook_id = ? AND event_seq = ?`, at, at, webhookID, deliveryID)
		}
		if err != nil {
			return err
		}
		d.Status, d.NextAttemptAt, d.Attempts = petstore.DeliveryPending, &now, 0
		return nil
	})
	if err != nil {
		return petstore.Delivery{}, fmt.Errorf("retry delivery: %w", err)
	}
	if d.Status == petstore.DeliveryPending {
		db.wake()
	}
	return d, nil
}

// spanDeliveryOf finds the delivery of the event at seq that the endpoint's spans
// tell of, if they hold it.
func spanDeliveryOf(ctx context.Context, tx *sql.Tx, webhookID, seq int64) (petstore.Delivery, bool, error) {
	list, err := spans(ctx, tx, webhookID)
	if err != nil {
		return petstore.Delivery{}, false, err
	}
	e, err := scanEventHead(tx.QueryRowContext(ctx, `SELECT `+eventHead+` FROM events e WHERE e.seq = ? AND e.type <> 'webhook.test'`, seq))
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Delivery{}, false, nil
	}
	if err != nil {
		return petstore.Delivery{}, false, err
	}
	d, ok := petstore.SpanDelivery(webhookID, e, list)
	return d, ok, nil
}
