package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

var _ petstore.WebhookStore = (*DB)(nil)

const (
	webhookColumns = `id, url, description, events, enabled, disabled_reason, secret, previous_secret,
		previous_secret_expires_at, failing_since, created_at, updated_at`
	qWebhook = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id = $1`

	// qFailPending fails an endpoint's pending deliveries (it was disabled), saying why.
	qFailPending = `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, leased_until = NULL,
		last_error = $2 WHERE webhook_id = $1 AND status = 'pending'`

	// qHead is the end of the feed as an endpoint's cursor may pass it: every event
	// with a smaller seq has committed or never will.
	qHead = `(SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::bigint << ` + seqShiftSQL + `) - 1)`
	// qEnd is the end of the feed as this transaction sees it, for an endpoint created,
	// enabled or disabled now: an event of a transaction still running may be given a
	// smaller seq and fall before it, which is fair for one that ran at the same time.
	qEnd = `greatest(` + qHead + `, (SELECT coalesce(max(seq), 0) FROM events))`
)

func scanWebhook(row pgx.Row) (petstore.Webhook, error) {
	var w petstore.Webhook
	err := row.Scan(&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.DisabledReason, &w.Secret,
		&w.PreviousSecret, &w.PreviousSecretExpiresAt, &w.FailingSince, &w.CreatedAt, &w.UpdatedAt)
	return w, err
}

// CreateWebhook adds an enabled endpoint, dated by the store's clock, sent the events
// that commit from now on: its cursor starts at the feed's end. The MaxWebhooks+1st is
// EConflict; a lock on the table makes the count exact across processes.
func (db *DB) CreateWebhook(ctx context.Context, w petstore.Webhook) (petstore.Webhook, error) {
	if err := w.CheckText(petstore.Webhook{}); err != nil {
		return petstore.Webhook{}, err
	}
	now := timestamp(db.now())
	w = w.Created(now)
	w.PreviousSecretExpiresAt = optionalTimestamp(w.PreviousSecretExpiresAt)
	err := db.update(ctx, func(tx pgx.Tx) error {
		// SHARE ROW EXCLUSIVE conflicts with itself: two creations count in turn.
		if _, err := tx.Exec(ctx, `LOCK TABLE webhooks IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhooks`).Scan(&n); err != nil {
			return err
		}
		if err := petstore.CheckWebhookCount(n); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO webhooks (url, description, events, enabled, disabled_reason,
			secret, previous_secret, previous_secret_expires_at, failing_since, created_at, updated_at,
			fan_cursor, span_from, send_window)
			VALUES ($1, $2, $3, true, '', $4, $5, $6, NULL, $7, $7, `+qEnd+`, `+qEnd+`, $8) RETURNING id`,
			w.URL, w.Description, int64(w.Events), w.Secret, w.PreviousSecret, w.PreviousSecretExpiresAt, now,
			petstore.DefaultDeliveryWindow,
		).Scan(&w.ID)
	})
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("create webhook: %w", err)
	}
	return w, nil
}

// Webhook finds an endpoint.
func (db *DB) Webhook(ctx context.Context, id int64) (petstore.Webhook, error) {
	return one(ctx, db, "webhook", func() error { return petstore.WebhookNotFound(id) }, scanWebhook, qWebhook, id)
}

// qWebhooks lists a page of endpoints.
const qWebhooks = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id > $1 ORDER BY id LIMIT $2`

// Webhooks lists a page of endpoints by id.
func (db *DB) Webhooks(ctx context.Context, p petstore.Page) ([]petstore.Webhook, error) {
	return list(ctx, db, "webhooks", 0, scanWebhook, qWebhooks, p.After, p.Size())
}

// UpdateWebhook changes an endpoint to what change returns, under the endpoint's row
// lock (which claims take too). The id and creation date stay. Enabling a disabled
// endpoint clears why it was disabled and its run of failures, and starts its cursor
// at the feed's end; disabling one fails its pending deliveries and the events after
// its cursor; a new subscription closes the span sent with the old one.
func (db *DB) UpdateWebhook(ctx context.Context, id int64, change func(petstore.Webhook, petstore.PendingTypes) (petstore.Webhook, error)) (petstore.Webhook, error) {
	var w petstore.Webhook
	err := db.update(ctx, func(tx pgx.Tx) error {
		cur, err := scanWebhook(tx.QueryRow(ctx, qWebhook+` FOR UPDATE`, id))
		if noRows(err) {
			return petstore.WebhookNotFound(id)
		}
		if err != nil {
			return err
		}
		pending := func() ([]petstore.EventType, error) { return pendingTypes(ctx, tx, id) }
		if w, err = change(cur, pending); err != nil {
			return err
		}
		if err := w.CheckText(cur); err != nil {
			return err
		}
		w.PreviousSecretExpiresAt = optionalTimestamp(w.PreviousSecretExpiresAt)
		w.FailingSince = optionalTimestamp(w.FailingSince)
		var span petstore.SpanChange
		w, span = w.Changed(cur, timestamp(db.now()))
		if err := changeSpan(ctx, tx, id, cur.Events, span); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE webhooks SET url = $1, description = $2, events = $3, enabled = $4,
			disabled_reason = $5, secret = $6, previous_secret = $7, previous_secret_expires_at = $8,
			failing_since = $9, updated_at = $10 WHERE id = $11`,
			w.URL, w.Description, int64(w.Events), w.Enabled, w.DisabledReason, w.Secret, w.PreviousSecret,
			w.PreviousSecretExpiresAt, w.FailingSince, w.UpdatedAt, id)
		return err
	})
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("update webhook: %w", err)
	}
	return w, nil
}

// pendingTypes reads the types of an endpoint's pending deliveries. It walks them
// (deliveries_due), at most a few days of a failing endpoint's events, and is read
// only when a limited key gives an endpoint a new URL.
func pendingTypes(ctx context.Context, tx pgx.Tx, id int64) ([]petstore.EventType, error) {
	rows, err := tx.Query(ctx, `SELECT DISTINCT e.type FROM deliveries d JOIN events e ON e.seq = d.event_seq
		WHERE d.webhook_id = $1 AND d.status = 'pending'`, id)
	if err != nil {
		return nil, fmt.Errorf("pending deliveries of webhook %d: %w", id, err)
	}
	types, err := pgx.CollectRows(rows, pgx.RowTo[petstore.EventType])
	if err != nil {
		return nil, fmt.Errorf("pending deliveries of webhook %d: %w", id, err)
	}
	return types, nil
}

// changeSpan does to an endpoint's spans what a change of it does (mask is the
// subscription it had).
func changeSpan(ctx context.Context, tx pgx.Tx, id int64, mask petstore.EventMask, span petstore.SpanChange) error {
	switch span {
	case petstore.SpanRestarted:
		return restartSpan(ctx, tx, id)
	case petstore.SpanFailed:
		return disable(ctx, tx, id, mask, petstore.DisabledByAdmin)
	case petstore.SpanClosed:
		return closeSpan(ctx, tx, id, mask)
	}
	return nil
}

// closeSpan keeps the endpoint's current span (span_from to its cursor, sent with
// mask) among its past ones and starts the next at the cursor. The caller holds the
// endpoint's row lock.
func closeSpan(ctx context.Context, tx pgx.Tx, id int64, mask petstore.EventMask) error {
	_, err := tx.Exec(ctx, `WITH s AS (
			INSERT INTO webhook_spans (webhook_id, from_seq, to_seq, events)
			SELECT id, span_from, fan_cursor, $2 FROM webhooks WHERE id = $1 AND fan_cursor > span_from
		)
		UPDATE webhooks SET span_from = fan_cursor WHERE id = $1`, id, int64(mask))
	if err != nil {
		return fmt.Errorf("close span of webhook %d: %w", id, err)
	}
	return nil
}

// disable fails an endpoint's pending deliveries and the events after its cursor
// (kept as a failed span up to the feed's end), saying why.
func disable(ctx context.Context, tx pgx.Tx, id int64, mask petstore.EventMask, why string) error {
	if err := closeSpan(ctx, tx, id, mask); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_spans (webhook_id, from_seq, to_seq, events, failed_error)
		SELECT id, fan_cursor, `+qEnd+`, $2, $3 FROM webhooks WHERE id = $1 AND `+qEnd+` > fan_cursor`,
		id, int64(mask), why); err != nil {
		return fmt.Errorf("fail the unsent events of webhook %d: %w", id, err)
	}
	if _, err := tx.Exec(ctx, qFailPending, id, why); err != nil {
		return fmt.Errorf("fail deliveries of webhook %d: %w", id, err)
	}
	return nil
}

// restartSpan starts an endpoint that is enabled again at the feed's end.
func restartSpan(ctx context.Context, tx pgx.Tx, id int64) error {
	_, err := tx.Exec(ctx, `UPDATE webhooks SET fan_cursor = greatest(fan_cursor, `+qEnd+`),
		span_from = greatest(fan_cursor, `+qEnd+`), send_window = $2 WHERE id = $1`, id, petstore.DefaultDeliveryWindow)
	if err != nil {
		return fmt.Errorf("restart webhook %d: %w", id, err)
	}
	return nil
}

// DeleteWebhook removes an endpoint, its deliveries and its spans, in one statement.
func (db *DB) DeleteWebhook(ctx context.Context, id int64) error {
	var n int
	err := db.pool.QueryRow(ctx, `WITH w AS (DELETE FROM webhooks WHERE id = $1 RETURNING id),
		d AS (DELETE FROM deliveries WHERE webhook_id = $1),
		s AS (DELETE FROM webhook_spans WHERE webhook_id = $1)
		SELECT count(*) FROM w`, id).Scan(&n)
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	if n == 0 {
		return petstore.WebhookNotFound(id)
	}
	return nil
}

// SendTestEvent writes a webhook.test event holding the endpoint, and its one
// delivery, due at now; MaxPendingTests pending already are EConflict.
func (db *DB) SendTestEvent(ctx context.Context, id int64, now time.Time) (petstore.Delivery, error) {
	now = timestamp(now)
	var d petstore.Delivery
	err := db.update(ctx, func(tx pgx.Tx) error {
		// FOR UPDATE: the endpoint cannot be deleted under the delivery, and two
		// tests count their pending ones in turn.
		w, err := scanWebhook(tx.QueryRow(ctx, qWebhook+` FOR UPDATE`, id))
		if noRows(err) {
			return petstore.WebhookNotFound(id)
		}
		if err != nil {
			return err
		}
		var pending int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM deliveries d JOIN events e ON e.seq = d.event_seq
			WHERE d.webhook_id = $1 AND d.status = 'pending' AND e.type = 'webhook.test'`, id).Scan(&pending); err != nil {
			return err
		}
		if err := petstore.CheckPendingTests(id, pending); err != nil {
			return err
		}
		e := event(petstore.WebhookTest, now)
		e.Webhook = &w
		data, err := petstore.MarshalEventData(e)
		if err != nil {
			return err
		}
		d = petstore.Delivery{WebhookID: id, EventID: e.ID, EventType: e.Type, Status: petstore.DeliveryPending,
			NextAttemptAt: &now, CreatedAt: now}
		return tx.QueryRow(ctx, `WITH ev AS (
				INSERT INTO events (seq, id, type, created_at, data)
				VALUES ((pg_current_xact_id()::text::bigint << `+seqShiftSQL+`) + 1, $1, $2, $3, $4)
				RETURNING seq
			)
			INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at, retry_since, created_at)
			SELECT $5, seq, 'pending', $3, $3, $3 FROM ev RETURNING event_seq`,
			e.ID, string(e.Type), now, string(data), id).Scan(&d.ID)
	})
	if err != nil {
		return petstore.Delivery{}, fmt.Errorf("send test event: %w", err)
	}
	db.wake()
	return d, nil
}
