package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

const (
	webhookColumns = `id, url, description, events, enabled, disabled_reason, secret, previous_secret,
		previous_secret_expires_at, failing_since, created_at, updated_at`
	qWebhook = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id = ?`
)

func scanWebhook(row scanner) (petstore.Webhook, error) {
	var (
		w                petstore.Webhook
		expires, failing sql.NullString
		created, updated string
		err              error
	)
	if err = row.Scan(&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.DisabledReason, &w.Secret,
		&w.PreviousSecret, &expires, &failing, &created, &updated); err != nil {
		return petstore.Webhook{}, err
	}
	return w, parseWebhookTimes(&w, expires, failing, created, updated)
}

// parseWebhookTimes sets the dates of w from their columns.
func parseWebhookTimes(w *petstore.Webhook, expires, failing sql.NullString, created, updated string) error {
	var err error
	if w.PreviousSecretExpiresAt, err = parseNullTime(expires); err != nil {
		return err
	}
	if w.FailingSince, err = parseNullTime(failing); err != nil {
		return err
	}
	if w.CreatedAt, err = parseTime(created); err != nil {
		return err
	}
	w.UpdatedAt, err = parseTime(updated)
	return err
}

// CreateWebhook adds an enabled endpoint, sent the events written from now on: its
// cursor starts at the end of the feed. The MaxWebhooks+1st is EConflict.
func (db *DB) CreateWebhook(ctx context.Context, w petstore.Webhook) (petstore.Webhook, error) {
	if err := w.CheckText(petstore.Webhook{}); err != nil {
		return petstore.Webhook{}, err
	}
	now := db.now().UTC()
	w = w.Created(now)
	err := db.update(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks`).Scan(&n); err != nil {
			return err
		}
		if err := petstore.CheckWebhookCount(n); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `INSERT INTO webhooks (url, description, events, enabled, secret,
			previous_secret, previous_secret_expires_at, created_at, updated_at, fan_cursor, span_from, send_window)
			VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) FROM events),
			(SELECT COALESCE(MAX(seq), 0) FROM events), ?) RETURNING id`,
			w.URL, w.Description, int64(w.Events), w.Secret, w.PreviousSecret, nullTime(w.PreviousSecretExpiresAt),
			formatTime(now), formatTime(now), petstore.DefaultDeliveryWindow).Scan(&w.ID)
	})
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("create webhook: %w", err)
	}
	w.PreviousSecretExpiresAt = utc(w.PreviousSecretExpiresAt)
	return w, nil
}

// Webhook finds an endpoint.
func (db *DB) Webhook(ctx context.Context, id int64) (petstore.Webhook, error) {
	return one(ctx, db, "webhook", func() error { return petstore.WebhookNotFound(id) }, scanWebhook, qWebhook, id)
}

// The lists of endpoints and of an endpoint's deliveries.
// qWebhooks lists a page of endpoints.
const qWebhooks = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id > ? ORDER BY id LIMIT ?`

// Webhooks lists a page of endpoints by id.
func (db *DB) Webhooks(ctx context.Context, p petstore.Page) ([]petstore.Webhook, error) {
	return list(uncancelled(ctx), db, "webhooks", 0, scanWebhook, qWebhooks, p.After, p.Size())
}

// loadWebhook reads an endpoint inside a write transaction.
func loadWebhook(ctx context.Context, tx *sql.Tx, id int64) (petstore.Webhook, error) {
	w, err := scanWebhook(tx.QueryRowContext(ctx, qWebhook, id))
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Webhook{}, petstore.WebhookNotFound(id)
	}
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("load webhook %d: %w", id, err)
	}
	return w, nil
}

// UpdateWebhook changes an endpoint to what change returns. Re-enabling it forgets
// why it was disabled and its run of failures, and starts its cursor at the end of
// the feed (events written while it was disabled are not its). Disabling it fails its
// pending deliveries and the events after its cursor, which would otherwise wait for
// it forever. A new subscription closes the span sent with the old one.
func (db *DB) UpdateWebhook(ctx context.Context, id int64, change func(petstore.Webhook, petstore.PendingTypes) (petstore.Webhook, error)) (petstore.Webhook, error) {
	var w petstore.Webhook
	err := db.update(ctx, func(tx *sql.Tx) error {
		cur, err := loadWebhook(ctx, tx, id)
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
		var span petstore.SpanChange
		w, span = w.Changed(cur, db.now().UTC())
		if err := changeSpan(ctx, tx, id, cur.Events, span); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhooks SET url = ?, description = ?, events = ?, enabled = ?,
			disabled_reason = ?, secret = ?, previous_secret = ?, previous_secret_expires_at = ?, failing_since = ?,
			updated_at = ? WHERE id = ?`,
			w.URL, w.Description, int64(w.Events), w.Enabled, w.DisabledReason, w.Secret, w.PreviousSecret,
			nullTime(w.PreviousSecretExpiresAt), nullTime(w.FailingSince), formatTime(w.UpdatedAt), id)
		return err
	})
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("update webhook: %w", err)
	}
	w.PreviousSecretExpiresAt, w.FailingSince = utc(w.PreviousSecretExpiresAt), utc(w.FailingSince)
	return w, nil
}

// pendingTypes reads the types of an endpoint's pending deliveries. It walks them
// (deliveries_due), at most a few days of a failing endpoint's events, and is read
// only when a limited key gives an endpoint a new URL.
func pendingTypes(ctx context.Context, tx *sql.Tx, id int64) ([]petstore.EventType, error) {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT e.type FROM deliveries d JOIN events e ON e.seq = d.event_seq
		WHERE d.webhook_id = ? AND d.status = 'pending'`, id)
	if err != nil {
		return nil, fmt.Errorf("pending deliveries of webhook %d: %w", id, err)
	}
	types, err := collect(rows, 0, func(r scanner) (petstore.EventType, error) {
		var t string
		err := r.Scan(&t)
		return petstore.EventType(t), err
	})
	if err != nil {
		return nil, fmt.Errorf("pending deliveries of webhook %d: %w", id, err)
	}
	return types, nil
}

// changeSpan does to an endpoint's spans what a change of it does (mask is the
// subscription it had).
func changeSpan(ctx context.Context, tx *sql.Tx, id int64, mask petstore.EventMask, span petstore.SpanChange) error {
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
// mask) among its past ones and starts the next at the cursor.
func closeSpan(ctx context.Context, tx *sql.Tx, id int64, mask petstore.EventMask) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_spans (webhook_id, from_seq, to_seq, events)
		SELECT id, span_from, fan_cursor, ? FROM webhooks WHERE id = ? AND fan_cursor > span_from`, int64(mask), id); err != nil {
		return fmt.Errorf("close span of webhook %d: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET span_from = fan_cursor WHERE id = ?`, id); err != nil {
		return fmt.Errorf("close span of webhook %d: %w", id, err)
	}
	return nil
}

// disable fails an endpoint's pending deliveries and the events after its cursor
// (kept as a failed span up to the end of the feed), saying why.
func disable(ctx context.Context, tx *sql.Tx, id int64, mask petstore.EventMask, why string) error {
	if err := closeSpan(ctx, tx, id, mask); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_spans (webhook_id, from_seq, to_seq, events, failed_error)
		SELECT w.id, w.fan_cursor, m.seq, ?, ? FROM webhooks w, (SELECT COALESCE(MAX(seq), 0) AS seq FROM events) m
		WHERE w.id = ? AND m.seq > w.fan_cursor`, int64(mask), why, id); err != nil {
		return fmt.Errorf("fail the unsent events of webhook %d: %w", id, err)
	}
	_, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, leased_until = NULL,
		last_error = ? WHERE webhook_id = ? AND status = 'pending'`, why, id)
	if err != nil {
		return fmt.Errorf("fail deliveries of webhook %d: %w", id, err)
	}
	return nil
}

// restartSpan starts an endpoint that is enabled again at the end of the feed.
func restartSpan(ctx context.Context, tx *sql.Tx, id int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE webhooks SET fan_cursor = m.seq, span_from = m.seq, send_window = ?
		FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM events) m WHERE id = ?`, petstore.DefaultDeliveryWindow, id)
	if err != nil {
		return fmt.Errorf("restart webhook %d: %w", id, err)
	}
	return nil
}

// DeleteWebhook removes an endpoint; its deliveries and spans go with it (ON DELETE
// CASCADE).
func (db *DB) DeleteWebhook(ctx context.Context, id int64) error {
	err := db.update(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err == nil && n == 0 {
			return petstore.WebhookNotFound(id)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	return nil
}

// SendTestEvent writes a test event for endpoint id and its one delivery, due at now.
// A disabled endpoint gets it too: an admin checks a fixed receiver before enabling it.
func (db *DB) SendTestEvent(ctx context.Context, id int64, now time.Time) (petstore.Delivery, error) {
	now = now.UTC()
	var d petstore.Delivery
	err := db.update(ctx, func(tx *sql.Tx) error {
		w, err := loadWebhook(ctx, tx, id)
		if err != nil {
			return err
		}
		var pending int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM deliveries d JOIN events e ON e.seq = d.event_seq
			WHERE d.webhook_id = ? AND d.status = 'pending' AND e.webhook_id = ?`, id, id).Scan(&pending); err != nil {
			return err
		}
		if err := petstore.CheckPendingTests(id, pending); err != nil {
			return err
		}
		e := petstore.Event{ID: petstore.NewEventID(), Type: petstore.WebhookTest, CreatedAt: now, Webhook: &w}
		data, err := petstore.MarshalEventData(e)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, qInsertEvent, e.ID, string(e.Type), formatTime(now), string(data), id)
		if err != nil {
			return fmt.Errorf("record test event: %w", err)
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return err
		}
		at := formatTime(now)
		if _, err := tx.ExecContext(ctx, `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at,
			retry_since, created_at) VALUES (?, ?, 'pending', ?, ?, ?)`, id, seq, at, at, at); err != nil {
			return fmt.Errorf("queue test delivery: %w", err)
		}
		d = petstore.Delivery{ID: seq, WebhookID: id, EventID: e.ID, EventType: e.Type, Status: petstore.DeliveryPending,
			NextAttemptAt: &now, CreatedAt: now}
		return nil
	})
	if err != nil {
		return petstore.Delivery{}, fmt.Errorf("send test event: %w", err)
	}
	db.wake()
	return d, nil
}
