package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

const (
	// deliveryColumns are a delivery's, read from deliveries d joined with events e.
	deliveryColumns = `d.event_seq, d.webhook_id, e.id, e.type, d.status, d.attempts, d.next_attempt_at,
		d.last_attempt_at, d.response_status, d.last_error, d.created_at`
	qDelivery = `SELECT ` + deliveryColumns + ` FROM deliveries d JOIN events e ON e.seq = d.event_seq
		WHERE d.webhook_id = $1 AND d.event_seq = $2`
	// qDeliveryRows pages an endpoint's delivery rows; the others are what its spans
	// tell of (spanQuery).
	qDeliveryRows = `SELECT ` + deliveryColumns + ` FROM deliveries d JOIN events e ON e.seq = d.event_seq
		WHERE d.webhook_id = $1 AND d.event_seq > $2 ORDER BY d.event_seq LIMIT $3`
)

func scanDelivery(row pgx.Row) (petstore.Delivery, error) {
	var (
		d           petstore.Delivery
		typ, status string
	)
	err := row.Scan(&d.ID, &d.WebhookID, &d.EventID, &typ, &status, &d.Attempts, &d.NextAttemptAt,
		&d.LastAttemptAt, &d.ResponseStatus, &d.LastError, &d.CreatedAt)
	d.EventType, d.Status = petstore.EventType(typ), petstore.DeliveryStatus(status)
	return d, err
}

// qSpans reads an endpoint's spans, past and current (while it is enabled).
const qSpans = `SELECT from_seq, to_seq, events, failed_error FROM webhook_spans WHERE webhook_id = $1
	UNION ALL SELECT span_from, fan_cursor, events, NULL FROM webhooks WHERE id = $1 AND enabled
	ORDER BY 1`

func spans(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, id int64) ([]petstore.Span, error) {
	rows, err := q.Query(ctx, qSpans, id)
	if err != nil {
		return nil, err
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (petstore.Span, error) {
		var (
			s   petstore.Span
			why *string
		)
		err := r.Scan(&s.From, &s.To, &s.Events, &why)
		if why != nil {
			s.Failed, s.Error = true, *why
		}
		return s, err
	})
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, s := range all {
		if s.To > s.From {
			out = append(out, s)
		}
	}
	return out, nil
}

// spanQuery finds the events of spans after seq after that have no delivery row of
// endpoint id, in feed order, up to limit: the deliveries the spans tell of. Spans
// are few (one per change of subscription or of being enabled), so each is a range
// of the events' primary key with the types it held.
func spanQuery(id int64, list []petstore.Span, after int64, limit int) (string, []any) {
	var b strings.Builder
	args := []any{after, id, limit}
	b.WriteString(`SELECT e.seq, e.id, e.type, e.created_at FROM events e WHERE e.seq > $1 AND e.type <> 'webhook.test' AND (`)
	for i, s := range list {
		if i > 0 {
			b.WriteString(" OR ")
		}
		args = append(args, s.From, s.To)
		fmt.Fprintf(&b, "(e.seq > $%d AND e.seq <= $%d", len(args)-1, len(args))
		if s.Events != petstore.MaskAll {
			types := make([]string, 0, len(petstore.EventTypes))
			for _, t := range s.Events.Types() {
				types = append(types, string(t))
			}
			args = append(args, types)
			fmt.Fprintf(&b, " AND e.type = ANY($%d)", len(args))
		}
		b.WriteString(")")
	}
	b.WriteString(`) AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.webhook_id = $2 AND d.event_seq = e.seq)
		ORDER BY e.seq LIMIT $3`)
	return b.String(), args
}

// Deliveries lists a page of an endpoint's deliveries by id (the event's seq): its
// rows, merged with what its spans tell of the events without one, read in one
// snapshot (REPEATABLE READ) so that rows and spans agree.
func (db *DB) Deliveries(ctx context.Context, webhookID int64, p petstore.Page) ([]petstore.Delivery, error) {
	var out []petstore.Delivery
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks WHERE id = $1)`, webhookID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return petstore.WebhookNotFound(webhookID)
		}
		rows, err := tx.Query(ctx, qDeliveryRows, webhookID, p.After, p.Size())
		if err != nil {
			return err
		}
		kept, err := collect(rows, 0, scanDelivery)
		if err != nil {
			return err
		}
		list, err := spans(ctx, tx, webhookID)
		if err != nil || len(list) == 0 {
			out = kept
			return err
		}
		q, args := spanQuery(webhookID, list, p.After, p.Size())
		erows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		told, err := pgx.CollectRows(erows, func(r pgx.CollectableRow) (petstore.Delivery, error) {
			var (
				e   petstore.Event
				typ string
			)
			if err := r.Scan(&e.Seq, &e.ID, &typ, &e.CreatedAt); err != nil {
				return petstore.Delivery{}, err
			}
			e.Type = petstore.EventType(typ)
			d, _ := petstore.SpanDelivery(webhookID, e, list)
			return d, nil
		})
		if err != nil {
			return err
		}
		out = petstore.MergeDeliveries(kept, told, p.Size())
		return nil
	})
	if err != nil {
		if petstore.ErrorCode(err) != "" {
			return nil, err
		}
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	if out == nil {
		out = []petstore.Delivery{}
	}
	return out, nil
}

// RetryDelivery makes a delivery that is not pending pending again, due at now, with
// its retry horizon from now and its count of attempts started afresh; one that its
// endpoint's spans tell of gets a row. A delivery of a disabled endpoint is
// EConflict: it would wait for the endpoint forever.
func (db *DB) RetryDelivery(ctx context.Context, webhookID, deliveryID int64, now time.Time, may func(petstore.Delivery) error) (petstore.Delivery, error) {
	now = timestamp(now)
	var (
		d       petstore.Delivery
		retried bool
	)
	err := db.update(ctx, func(tx pgx.Tx) error {
		var enabled bool
		// FOR UPDATE: claims hold it too, so that a retry and a fan-out of the same
		// event take turns.
		err := tx.QueryRow(ctx, `SELECT enabled FROM webhooks WHERE id = $1 FOR UPDATE`, webhookID).Scan(&enabled)
		if noRows(err) {
			return petstore.WebhookNotFound(webhookID)
		}
		if err != nil {
			return err
		}
		d, err = scanDelivery(tx.QueryRow(ctx, qDelivery+` FOR UPDATE OF d`, webhookID, deliveryID))
		fromSpan := noRows(err)
		if fromSpan {
			var ok bool
			if d, ok, err = spanDeliveryOf(ctx, tx, webhookID, deliveryID); err == nil && !ok {
				return petstore.DeliveryNotFound(deliveryID)
			}
		}
		if err != nil {
			return err
		}
		if retry, err := petstore.CheckRetry(d, enabled, may); !retry {
			return err
		}
		// The row is not fanned: a success at its first attempt keeps it, since the
		// span may say otherwise (one that the endpoint's disabling failed).
		if fromSpan {
			_, err = tx.Exec(ctx, `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at, retry_since,
				created_at, fanned) VALUES ($1, $2, 'pending', $3, $3, $4, false)`, webhookID, deliveryID, now, d.CreatedAt)
		} else {
			_, err = tx.Exec(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $3,
				retry_since = $3, leased_until = NULL, fanned = false WHERE webhook_id = $1 AND event_seq = $2`, webhookID, deliveryID, now)
		}
		if err != nil {
			return err
		}
		d.Status, d.NextAttemptAt, d.Attempts, retried = petstore.DeliveryPending, &now, 0, true
		return nil
	})
	if err != nil {
		return petstore.Delivery{}, fmt.Errorf("retry delivery: %w", err)
	}
	if retried {
		db.wake()
	}
	return d, nil
}

// spanDeliveryOf finds the delivery of the event at seq that the endpoint's spans
// tell of, if they hold it.
func spanDeliveryOf(ctx context.Context, tx pgx.Tx, webhookID, seq int64) (petstore.Delivery, bool, error) {
	list, err := spans(ctx, tx, webhookID)
	if err != nil {
		return petstore.Delivery{}, false, err
	}
	var (
		e   petstore.Event
		typ string
	)
	err = tx.QueryRow(ctx, `SELECT seq, id, type, created_at FROM events WHERE seq = $1 AND type <> 'webhook.test'`, seq).
		Scan(&e.Seq, &e.ID, &typ, &e.CreatedAt)
	if noRows(err) {
		return petstore.Delivery{}, false, nil
	}
	if err != nil {
		return petstore.Delivery{}, false, err
	}
	e.Type = petstore.EventType(typ)
	d, ok := petstore.SpanDelivery(webhookID, e, list)
	return d, ok, nil
}
