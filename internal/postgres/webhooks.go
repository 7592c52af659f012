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

	// deliveryColumns are a delivery's, read from deliveries d joined with events e.
	deliveryColumns = `d.id, d.webhook_id, e.id, e.type, d.status, d.attempts, d.next_attempt_at,
		d.last_attempt_at, d.response_status, d.last_error, d.created_at`
	qDelivery = `SELECT ` + deliveryColumns + ` FROM deliveries d JOIN events e ON e.seq = d.event_seq
		WHERE d.id = $1 AND d.webhook_id = $2`

	// qFailPending fails an endpoint's pending deliveries (it was disabled), saying why.
	qFailPending = `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, leased_until = NULL,
		last_error = $2 WHERE webhook_id = $1 AND status = 'pending'`
)

func scanWebhook(row pgx.Row) (petstore.Webhook, error) {
	var w petstore.Webhook
	err := row.Scan(&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.DisabledReason, &w.Secret,
		&w.PreviousSecret, &w.PreviousSecretExpiresAt, &w.FailingSince, &w.CreatedAt, &w.UpdatedAt)
	return w, err
}

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

// textError turns the failure of text PostgreSQL cannot hold (NUL) into a
// validation error.
func textError(err error) error {
	if pgCode(err) == invalidByteSequence {
		return petstore.Invalid("description", "must not contain NUL characters")
	}
	return err
}

// CreateWebhook adds an enabled endpoint, dated by the store's clock.
func (db *DB) CreateWebhook(ctx context.Context, w petstore.Webhook) (petstore.Webhook, error) {
	now := timestamp(db.now())
	w.Enabled, w.DisabledReason, w.FailingSince = true, "", nil
	w.CreatedAt, w.UpdatedAt = now, now
	w.PreviousSecretExpiresAt = optionalTimestamp(w.PreviousSecretExpiresAt)
	err := db.pool.QueryRow(ctx, `INSERT INTO webhooks (url, description, events, enabled, disabled_reason,
		secret, previous_secret, previous_secret_expires_at, failing_since, created_at, updated_at)
		VALUES ($1, $2, $3, true, '', $4, $5, $6, NULL, $7, $7) RETURNING id`,
		w.URL, w.Description, int64(w.Events), w.Secret, w.PreviousSecret, w.PreviousSecretExpiresAt, now,
	).Scan(&w.ID)
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("create webhook: %w", textError(err))
	}
	return w, nil
}

// Webhook finds an endpoint.
func (db *DB) Webhook(ctx context.Context, id int64) (petstore.Webhook, error) {
	w, err := scanWebhook(db.pool.QueryRow(ctx, qWebhook, id))
	if noRows(err) {
		return petstore.Webhook{}, petstore.WebhookNotFound(id)
	}
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("webhook: %w", err)
	}
	return w, nil
}

// The lists of endpoints and of an endpoint's deliveries.
const (
	qWebhooks   = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id > $1 ORDER BY id LIMIT $2`
	qDeliveries = `SELECT ` + deliveryColumns + ` FROM deliveries d JOIN events e ON e.seq = d.event_seq
		WHERE d.webhook_id = $1 AND d.id > $2 ORDER BY d.id LIMIT $3`
)

// Webhooks lists a page of endpoints by id.
func (db *DB) Webhooks(ctx context.Context, p petstore.Page) ([]petstore.Webhook, error) {
	rows, err := db.pool.Query(ctx, qWebhooks, p.After, p.Size())
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (petstore.Webhook, error) { return scanWebhook(r) })
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return list, nil
}

// UpdateWebhook changes an endpoint to what change returns, under the endpoint's row
// lock. The id and creation date stay; enabling a disabled endpoint clears why it was
// disabled and its run of failures; disabling one fails its pending deliveries.
func (db *DB) UpdateWebhook(ctx context.Context, id int64, change func(petstore.Webhook) (petstore.Webhook, error)) (petstore.Webhook, error) {
	var w petstore.Webhook
	err := db.update(ctx, func(tx pgx.Tx) error {
		cur, err := scanWebhook(tx.QueryRow(ctx, qWebhook+` FOR UPDATE`, id))
		if noRows(err) {
			return petstore.WebhookNotFound(id)
		}
		if err != nil {
			return err
		}
		if w, err = change(cur); err != nil {
			return err
		}
		w.ID, w.CreatedAt, w.UpdatedAt = cur.ID, cur.CreatedAt, timestamp(db.now())
		w.PreviousSecretExpiresAt = optionalTimestamp(w.PreviousSecretExpiresAt)
		w.FailingSince = optionalTimestamp(w.FailingSince)
		if w.Enabled {
			w.DisabledReason = ""
			if !cur.Enabled {
				w.FailingSince = nil
			}
		}
		_, err = tx.Exec(ctx, `UPDATE webhooks SET url = $1, description = $2, events = $3, enabled = $4,
			disabled_reason = $5, secret = $6, previous_secret = $7, previous_secret_expires_at = $8,
			failing_since = $9, updated_at = $10 WHERE id = $11`,
			w.URL, w.Description, int64(w.Events), w.Enabled, w.DisabledReason, w.Secret, w.PreviousSecret,
			w.PreviousSecretExpiresAt, w.FailingSince, w.UpdatedAt, id)
		if err != nil {
			return textError(err)
		}
		if cur.Enabled && !w.Enabled {
			_, err = tx.Exec(ctx, qFailPending, id, petstore.DisabledByAdmin)
		}
		return err
	})
	if err != nil {
		return petstore.Webhook{}, fmt.Errorf("update webhook: %w", err)
	}
	return w, nil
}

// DeleteWebhook removes an endpoint and its deliveries, in one statement.
func (db *DB) DeleteWebhook(ctx context.Context, id int64) error {
	var n int
	err := db.pool.QueryRow(ctx, `WITH w AS (DELETE FROM webhooks WHERE id = $1 RETURNING id),
		d AS (DELETE FROM deliveries WHERE webhook_id = $1)
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
// delivery, due at now.
func (db *DB) SendTestEvent(ctx context.Context, id int64, now time.Time) (petstore.Delivery, error) {
	now = timestamp(now)
	var d petstore.Delivery
	err := db.update(ctx, func(tx pgx.Tx) error {
		// FOR SHARE: the endpoint cannot be deleted under the delivery.
		w, err := scanWebhook(tx.QueryRow(ctx, qWebhook+` FOR SHARE`, id))
		if noRows(err) {
			return petstore.WebhookNotFound(id)
		}
		if err != nil {
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
			SELECT $5, seq, 'pending', $3, $3, $3 FROM ev RETURNING id`,
			e.ID, string(e.Type), now, string(data), id).Scan(&d.ID)
	})
	if err != nil {
		return petstore.Delivery{}, fmt.Errorf("send test event: %w", err)
	}
	db.wake()
	return d, nil
}

// Deliveries lists a page of an endpoint's deliveries by id.
func (db *DB) Deliveries(ctx context.Context, webhookID int64, p petstore.Page) ([]petstore.Delivery, error) {
	rows, err := db.pool.Query(ctx, qDeliveries, webhookID, p.After, p.Size())
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (petstore.Delivery, error) { return scanDelivery(r) })
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	if len(list) == 0 {
		// An empty page of an endpoint that does not exist is not found.
		if _, err := db.Webhook(ctx, webhookID); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// RetryDelivery makes a delivery that is not pending pending again, due at now, with
// its retry horizon from now and its count of attempts started afresh. A delivery of a
// disabled endpoint is EConflict: it would wait for the endpoint forever.
func (db *DB) RetryDelivery(ctx context.Context, webhookID, deliveryID int64, now time.Time) (petstore.Delivery, error) {
	now = timestamp(now)
	var (
		d       petstore.Delivery
		retried bool
	)
	err := db.update(ctx, func(tx pgx.Tx) error {
		var enabled bool
		err := tx.QueryRow(ctx, `SELECT enabled FROM webhooks WHERE id = $1 FOR SHARE`, webhookID).Scan(&enabled)
		if noRows(err) {
			return petstore.WebhookNotFound(webhookID)
		}
		if err != nil {
			return err
		}
		d, err = scanDelivery(tx.QueryRow(ctx, qDelivery+` FOR UPDATE OF d`, deliveryID, webhookID))
		if noRows(err) {
			return petstore.DeliveryNotFound(deliveryID)
		}
		if err != nil || d.Status == petstore.DeliveryPending {
			return err
		}
		if !enabled {
			return petstore.WebhookDisabled(webhookID)
		}
		if _, err := tx.Exec(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $2,
			retry_since = $2, leased_until = NULL WHERE id = $1`, deliveryID, now); err != nil {
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

// ClaimDeliveries leases due deliveries in one statement. The candidates are the
// heads of the endpoints' lines: each endpoint's oldest pending delivery by event (the
// head-of-line rule, which also makes at most one per endpoint), found by one index
// probe per endpoint, however long its backlog. A head is claimed when it is due and
// not under a lease. FOR UPDATE SKIP LOCKED passes over the rows another claim is
// taking; a row another claim leased (or finished) and committed since this
// statement's snapshot is read again under its lock and no longer matches, so no two
// claims share a delivery.
func (db *DB) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, max int) ([]petstore.DeliveryJob, error) {
	if max <= 0 {
		return nil, nil
	}
	now = timestamp(now)
	rows, err := db.pool.Query(ctx, `WITH c AS (
			SELECT d.id FROM deliveries d
			WHERE d.id IN (SELECT h.id FROM webhooks w CROSS JOIN LATERAL (
					SELECT p.id FROM deliveries p WHERE p.webhook_id = w.id AND p.status = 'pending'
					ORDER BY p.event_seq, p.id LIMIT 1) h)
			AND d.status = 'pending' AND d.next_attempt_at <= $1
			AND (d.leased_until IS NULL OR d.leased_until <= $1)
			ORDER BY d.next_attempt_at, d.id
			LIMIT $3
			FOR UPDATE OF d SKIP LOCKED
		)
		UPDATE deliveries d SET leased_until = $2
		FROM c, events e, webhooks w
		WHERE d.id = c.id AND e.seq = d.event_seq AND w.id = d.webhook_id
		RETURNING `+deliveryColumns+`, d.retry_since, e.seq, e.created_at, e.data,
		w.id, w.url, w.description, w.events, w.enabled, w.disabled_reason, w.secret, w.previous_secret,
		w.previous_secret_expires_at, w.failing_since, w.created_at, w.updated_at`,
		now, timestamp(now.Add(lease)), max)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (petstore.DeliveryJob, error) {
		var (
			j           petstore.DeliveryJob
			typ, status string
			data        []byte
		)
		d, w := &j.Delivery, &j.Webhook
		err := r.Scan(&d.ID, &d.WebhookID, &d.EventID, &typ, &status, &d.Attempts, &d.NextAttemptAt,
			&d.LastAttemptAt, &d.ResponseStatus, &d.LastError, &d.CreatedAt, &j.RetrySince,
			&j.Event.Seq, &j.Event.CreatedAt, &data,
			&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.DisabledReason, &w.Secret,
			&w.PreviousSecret, &w.PreviousSecretExpiresAt, &w.FailingSince, &w.CreatedAt, &w.UpdatedAt)
		if err != nil {
			return j, err
		}
		d.EventType, d.Status = petstore.EventType(typ), petstore.DeliveryStatus(status)
		j.Event.ID, j.Event.Type = d.EventID, d.EventType
		return j, petstore.UnmarshalEventData(&j.Event, data)
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return jobs, nil
}

// qFinishAttempt records an attempt on a pending delivery and ends its lease; the
// run's first attempt starts its retry horizon (retry_since). A delivery no longer
// pending (its endpoint was disabled meanwhile) is left as it is.
const qFinishAttempt = `UPDATE deliveries SET attempts = attempts + 1, last_attempt_at = $2,
	response_status = $3, last_error = $4, leased_until = NULL, status = $5,
	next_attempt_at = CASE WHEN $5 = 'pending' THEN $6::timestamptz END,
	retry_since = CASE WHEN attempts = 0 THEN $2 ELSE retry_since END
	WHERE id = $1 AND status = 'pending' RETURNING webhook_id`

// FinishAttempt records an attempt's result. A success is one statement (it clears
// the endpoint's run of failures); a failure runs in a transaction that may disable
// the endpoint. A delivery no longer pending is left as it is; one deleted with its
// endpoint is ENotFound.
func (db *DB) FinishAttempt(ctx context.Context, r petstore.AttemptResult) error {
	at := timestamp(r.At)
	args := []any{r.DeliveryID, at, r.ResponseStatus, r.Error, string(r.Status), timestamp(r.NextAttemptAt)}
	if r.Status == petstore.DeliverySucceeded {
		var finished, exists bool
		err := db.pool.QueryRow(ctx, `WITH d AS (`+qFinishAttempt+`),
			w AS (UPDATE webhooks SET failing_since = NULL
				WHERE id = (SELECT webhook_id FROM d) AND failing_since IS NOT NULL)
			SELECT EXISTS (SELECT 1 FROM d), EXISTS (SELECT 1 FROM deliveries WHERE id = $1)`, args...).Scan(&finished, &exists)
		if err != nil {
			return fmt.Errorf("finish attempt: %w", err)
		}
		if !finished && !exists {
			return petstore.DeliveryNotFound(r.DeliveryID)
		}
		return nil
	}
	err := db.update(ctx, func(tx pgx.Tx) error {
		var webhookID int64
		err := tx.QueryRow(ctx, qFinishAttempt, args...).Scan(&webhookID)
		if noRows(err) {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM deliveries WHERE id = $1)`, r.DeliveryID).Scan(&exists); err != nil || exists {
				return err
			}
			return petstore.DeliveryNotFound(r.DeliveryID)
		}
		if err != nil {
			return err
		}
		var (
			since   time.Time
			enabled bool
		)
		err = tx.QueryRow(ctx, `UPDATE webhooks SET failing_since = coalesce(failing_since, $2) WHERE id = $1
			RETURNING failing_since, enabled`, webhookID, at).Scan(&since, &enabled)
		if noRows(err) {
			return nil // the endpoint is being deleted
		}
		if err != nil {
			return err
		}
		if !enabled || r.DisableIfFailingBefore.IsZero() || !since.Before(r.DisableIfFailingBefore) {
			return nil
		}
		why := petstore.DisabledReason(since, r.At, r.Error)
		if _, err := tx.Exec(ctx, `UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE id = $1`,
			webhookID, why, at); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, qFailPending, webhookID, petstore.FailedByDisabling(why))
		return err
	})
	if err != nil {
		return fmt.Errorf("finish attempt: %w", err)
	}
	return nil
}

// QueueStats counts the pending deliveries and dates the oldest one's event.
func (db *DB) QueueStats(ctx context.Context) (petstore.QueueStats, error) {
	var (
		st     petstore.QueueStats
		oldest *time.Time
	)
	err := db.pool.QueryRow(ctx, `SELECT count(*), min(e.created_at) FROM deliveries d
		JOIN events e ON e.seq = d.event_seq JOIN webhooks w ON w.id = d.webhook_id
		WHERE d.status = 'pending'`).Scan(&st.Pending, &oldest)
	if err != nil {
		return petstore.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	if oldest != nil {
		st.Oldest = *oldest
	}
	return st, nil
}
