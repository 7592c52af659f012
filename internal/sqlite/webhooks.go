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
	webhookColumns = `id, url, description, events_mask, enabled, disabled_reason, secret, previous_secret,
		previous_secret_expires_at, failing_since, created_at, updated_at`
	qWebhook = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id = ?`

	deliveryColumns = `d.id, d.webhook_id, e.id, e.type, d.status, d.attempts, d.next_attempt_at, d.last_attempt_at,
		d.response_status, d.last_error, d.created_at`
	deliveryFrom = ` FROM deliveries d JOIN events e ON e.seq = d.event_seq`
)

func scanWebhook(row interface{ Scan(...any) error }) (petstore.Webhook, error) {
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
	if w.PreviousSecretExpiresAt, err = parseNullTime(expires); err != nil {
		return petstore.Webhook{}, err
	}
	if w.FailingSince, err = parseNullTime(failing); err != nil {
		return petstore.Webhook{}, err
	}
	if w.CreatedAt, err = parseTime(created); err != nil {
		return petstore.Webhook{}, err
	}
	if w.UpdatedAt, err = parseTime(updated); err != nil {
		return petstore.Webhook{}, err
	}
	return w, nil
}

func scanDelivery(row interface{ Scan(...any) error }, more ...any) (petstore.Delivery, error) {
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

// CreateWebhook adds an enabled endpoint.
func (db *DB) CreateWebhook(ctx context.Context, w petstore.Webhook) (petstore.Webhook, error) {
	now := db.now().UTC()
	w.Enabled, w.DisabledReason, w.FailingSince = true, "", nil
	w.CreatedAt, w.UpdatedAt = now, now
	err := db.update(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO webhooks (url, description, events_mask, enabled, secret,
			previous_secret, previous_secret_expires_at, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?) RETURNING id`,
			w.URL, w.Description, int64(w.Events), w.Secret, w.PreviousSecret, nullTime(w.PreviousSecretExpiresAt),
			formatTime(now), formatTime(now)).Scan(&w.ID)
	})
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("create webhook: %w", err)
	}
	w.PreviousSecretExpiresAt = utc(w.PreviousSecretExpiresAt)
	return w, nil
}

// Webhook finds an endpoint.
func (db *DB) Webhook(ctx context.Context, id int64) (petstore.Webhook, error) {
	s, err := db.readStmt(ctx, qWebhook)
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("webhook: %w", err)
	}
	w, err := scanWebhook(s.QueryRowContext(reading(ctx), id))
	if errors.Is(err, sql.ErrNoRows) {
		return petstore.Webhook{}, petstore.WebhookNotFound(id)
	}
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("webhook: %w", err)
	}
	return w, nil
}

// The lists of endpoints and of an endpoint's deliveries.
const (
	qWebhooks   = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id > ? ORDER BY id LIMIT ?`
	qDeliveries = `SELECT ` + deliveryColumns + deliveryFrom + ` WHERE d.webhook_id = ? AND d.id > ? ORDER BY d.id LIMIT ?`
)

// Webhooks lists a page of endpoints by id.
func (db *DB) Webhooks(ctx context.Context, p petstore.Page) ([]petstore.Webhook, error) {
	s, err := db.readStmt(ctx, qWebhooks)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	rows, err := s.QueryContext(reading(ctx), p.After, p.Size())
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	defer rows.Close()
	hooks := []petstore.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, fmt.Errorf("webhooks: %w", err)
		}
		hooks = append(hooks, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return hooks, nil
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
// why it was disabled and its run of failures; disabling it fails its pending
// deliveries, which would otherwise wait for it forever.
func (db *DB) UpdateWebhook(ctx context.Context, id int64, change func(petstore.Webhook) (petstore.Webhook, error)) (petstore.Webhook, error) {
	var w petstore.Webhook
	err := db.update(ctx, func(tx *sql.Tx) error {
		cur, err := loadWebhook(ctx, tx, id)
		if err != nil {
			return err
		}
		if w, err = change(cur); err != nil {
			return err
		}
		w.ID, w.CreatedAt, w.UpdatedAt = cur.ID, cur.CreatedAt, db.now().UTC()
		switch {
		case w.Enabled && !cur.Enabled:
			w.DisabledReason, w.FailingSince = "", nil
		case !w.Enabled && cur.Enabled:
			if err := failPending(ctx, tx, id, petstore.DisabledByAdmin); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhooks SET url = ?, description = ?, events_mask = ?, enabled = ?,
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

// failPending fails an endpoint's pending deliveries, saying why.
func failPending(ctx context.Context, tx *sql.Tx, webhookID int64, why string) error {
	_, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, leased_until = NULL,
		last_error = ? WHERE webhook_id = ? AND status = 'pending'`, why, webhookID)
	if err != nil {
		return fmt.Errorf("fail deliveries of webhook %d: %w", webhookID, err)
	}
	return nil
}

// DeleteWebhook removes an endpoint; its deliveries go with it (ON DELETE CASCADE).
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
		if err := tx.QueryRowContext(ctx, `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at,
			retry_since, created_at) VALUES (?, ?, 'pending', ?, ?, ?) RETURNING id`, id, seq, at, at, at).Scan(&d.ID); err != nil {
			return fmt.Errorf("queue test delivery: %w", err)
		}
		d.WebhookID, d.EventID, d.EventType, d.Status = id, e.ID, e.Type, petstore.DeliveryPending
		d.NextAttemptAt, d.CreatedAt = &now, now
		return nil
	})
	if err != nil {
		return petstore.Delivery{}, fmt.Errorf("send test event: %w", err)
	}
	db.queued(true)
	return d, nil
}

// Deliveries lists a page of an endpoint's deliveries by id; an unknown endpoint is
// ENotFound.
func (db *DB) Deliveries(ctx context.Context, webhookID int64, p petstore.Page) ([]petstore.Delivery, error) {
	if _, err := db.Webhook(ctx, webhookID); err != nil {
		return nil, err
	}
	s, err := db.readStmt(ctx, qDeliveries)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	rows, err := s.QueryContext(reading(ctx), webhookID, p.After, p.Size())
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	defer rows.Close()
	out := []petstore.Delivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("deliveries: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	return out, nil
}

// RetryDelivery makes a delivery pending again, due at now, with a fresh retry
// horizon. A pending one is left as it is; one of a disabled endpoint is EConflict,
// as it would wait for the endpoint forever.
func (db *DB) RetryDelivery(ctx context.Context, webhookID, deliveryID int64, now time.Time) (petstore.Delivery, error) {
	now = now.UTC()
	var d petstore.Delivery
	err := db.update(ctx, func(tx *sql.Tx) error {
		w, err := loadWebhook(ctx, tx, webhookID)
		if err != nil {
			return err
		}
		d, err = scanDelivery(tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+deliveryFrom+` WHERE d.id = ? AND d.webhook_id = ?`,
			deliveryID, webhookID))
		if errors.Is(err, sql.ErrNoRows) {
			return petstore.DeliveryNotFound(deliveryID)
		}
		if err != nil || d.Status == petstore.DeliveryPending {
			return err
		}
		if !w.Enabled {
			return petstore.WebhookDisabled(webhookID)
		}
		at := formatTime(now)
		if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?,
			retry_since = ?, leased_until = NULL WHERE id = ?`, at, at, deliveryID); err != nil {
			return err
		}
		d.Status, d.NextAttemptAt, d.Attempts = petstore.DeliveryPending, &now, 0
		return nil
	})
	if err != nil {
		return petstore.Delivery{}, fmt.Errorf("retry delivery: %w", err)
	}
	if d.Status == petstore.DeliveryPending {
		db.queued(true)
	}
	return d, nil
}

// qClaimable finds, for every endpoint, its oldest pending delivery (the head of its
// queue, so that it gets its events in order) when it is due and no live lease holds
// it. It walks the endpoints, not the deliveries, so that a long queue behind a
// failing endpoint costs one index lookup. A disabled endpoint only ever has a test
// delivery pending.
const qClaimable = `SELECT d.id FROM webhooks w
	JOIN deliveries d ON d.id = (SELECT MIN(p.id) FROM deliveries p WHERE p.webhook_id = w.id AND p.status = 'pending')
	WHERE d.next_attempt_at <= ? AND (d.leased_until IS NULL OR d.leased_until <= ?)
	ORDER BY d.next_attempt_at, d.id LIMIT ?`

// ClaimDeliveries leases up to max due deliveries, one per endpoint. The write
// transaction (BEGIN IMMEDIATE) keeps every other claim, in this process or another,
// out until the leases are written.
func (db *DB) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, max int) ([]petstore.DeliveryJob, error) {
	at, until := formatTime(now), formatTime(now.Add(lease))
	var jobs []petstore.DeliveryJob
	err := db.update(ctx, func(tx *sql.Tx) error {
		jobs = jobs[:0]
		rows, err := tx.QueryContext(ctx, qClaimable, at, at, max)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET leased_until = ? WHERE id = ?`, until, id); err != nil {
				return err
			}
			job, err := loadJob(ctx, tx, id)
			if err != nil {
				return err
			}
			jobs = append(jobs, job)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return jobs, nil
}

// loadJob reads a delivery with its event and endpoint.
func loadJob(ctx context.Context, tx *sql.Tx, id int64) (petstore.DeliveryJob, error) {
	var (
		job        petstore.DeliveryJob
		retrySince string
		seq        int64
		err        error
	)
	job.Delivery, err = scanDelivery(tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+`, d.retry_since, d.event_seq`+deliveryFrom+` WHERE d.id = ?`, id),
		&retrySince, &seq)
	if err != nil {
		return job, fmt.Errorf("load delivery %d: %w", id, err)
	}
	if job.RetrySince, err = parseTime(retrySince); err != nil {
		return job, err
	}
	if job.Event, err = scanEvent(tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE seq = ?`, seq)); err != nil {
		return job, fmt.Errorf("load event of delivery %d: %w", id, err)
	}
	if job.Webhook, err = loadWebhook(ctx, tx, job.Delivery.WebhookID); err != nil {
		return job, err
	}
	return job, nil
}

// FinishAttempt records an attempt and ends its lease. A delivery no longer pending
// (its endpoint was disabled meanwhile) is left as it is; one deleted with its
// endpoint is ENotFound.
func (db *DB) FinishAttempt(ctx context.Context, r petstore.AttemptResult) error {
	err := db.update(ctx, func(tx *sql.Tx) error {
		var next sql.NullString
		if r.Status == petstore.DeliveryPending {
			next = nullTime(&r.NextAttemptAt)
		}
		var webhookID int64
		// The run's first attempt starts its retry horizon (retry_since).
		err := tx.QueryRowContext(ctx, `UPDATE deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?,
			last_attempt_at = ?, response_status = ?, last_error = ?, leased_until = NULL,
			retry_since = CASE WHEN attempts = 0 THEN ? ELSE retry_since END
			WHERE id = ? AND status = 'pending' RETURNING webhook_id`,
			string(r.Status), next, formatTime(r.At), r.ResponseStatus, r.Error, formatTime(r.At), r.DeliveryID).Scan(&webhookID)
		if errors.Is(err, sql.ErrNoRows) {
			// No longer pending (its endpoint was disabled meanwhile): leave it.
			var exists bool
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM deliveries WHERE id = ?)`, r.DeliveryID).Scan(&exists); err != nil || exists {
				return err
			}
			return petstore.DeliveryNotFound(r.DeliveryID)
		}
		if err != nil {
			return err
		}
		if r.Status == petstore.DeliverySucceeded {
			_, err := tx.ExecContext(ctx, `UPDATE webhooks SET failing_since = NULL WHERE id = ?`, webhookID)
			return err
		}
		var (
			since   string
			enabled bool
		)
		if err := tx.QueryRowContext(ctx, `UPDATE webhooks SET failing_since = COALESCE(failing_since, ?) WHERE id = ?
			RETURNING failing_since, enabled`, formatTime(r.At), webhookID).Scan(&since, &enabled); err != nil {
			return err
		}
		// An endpoint already disabled (by an admin, who then sent it a test event) is
		// left as it is: its reason says the service disabled it, which it did not.
		from, err := parseTime(since)
		if err != nil || !enabled || r.DisableIfFailingBefore.IsZero() || !from.Before(r.DisableIfFailingBefore) {
			return err
		}
		why := petstore.DisabledReason(from, r.At, r.Error)
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ?`,
			why, formatTime(r.At), webhookID); err != nil {
			return err
		}
		return failPending(ctx, tx, webhookID, petstore.FailedByDisabling(why))
	})
	if err != nil {
		return fmt.Errorf("finish delivery %d: %w", r.DeliveryID, err)
	}
	return nil
}

// QueueStats counts the pending deliveries and dates the oldest event they carry.
func (db *DB) QueueStats(ctx context.Context) (petstore.QueueStats, error) {
	s, err := db.readStmt(ctx, `SELECT COUNT(*), MIN(e.created_at) FROM deliveries d JOIN events e ON e.seq = d.event_seq
		WHERE d.status = 'pending'`)
	if err != nil {
		return petstore.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	var (
		st     petstore.QueueStats
		oldest sql.NullString
	)
	if err := s.QueryRowContext(reading(ctx)).Scan(&st.Pending, &oldest); err != nil {
		return petstore.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	if t, err := parseNullTime(oldest); err != nil {
		return petstore.QueueStats{}, err
	} else if t != nil {
		st.Oldest = *t
	}
	return st, nil
}
