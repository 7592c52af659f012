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
	webhookColumns = `id, url, description, events_mask, enabled, disabled_reason, secret, previous_secret,
		previous_secret_expires_at, failing_since, created_at, updated_at`
	qWebhook = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id = ?`

	deliveryColumns = `d.event_seq, d.webhook_id, e.id, e.type, d.status, d.attempts, d.next_attempt_at, d.last_attempt_at,
		d.response_status, d.last_error, d.created_at`
	deliveryFrom = ` FROM deliveries d JOIN events e ON e.seq = d.event_seq`
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

// CreateWebhook adds an enabled endpoint, sent the events written from now on: its
// cursor starts at the end of the feed. The MaxWebhooks+1st is EConflict.
func (db *DB) CreateWebhook(ctx context.Context, w petstore.Webhook) (petstore.Webhook, error) {
	if err := w.CheckText(petstore.Webhook{}); err != nil {
		return petstore.Webhook{}, err
	}
	now := db.now().UTC()
	w.Enabled, w.DisabledReason, w.FailingSince = true, "", nil
	w.CreatedAt, w.UpdatedAt = now, now
	err := db.update(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks`).Scan(&n); err != nil {
			return err
		}
		if n >= petstore.MaxWebhooks {
			return petstore.TooManyWebhooks()
		}
		return tx.QueryRowContext(ctx, `INSERT INTO webhooks (url, description, events_mask, enabled, secret,
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
const (
	qWebhooks = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id > ? ORDER BY id LIMIT ?`
	// qDeliveryRows pages an endpoint's delivery rows; the others are what its spans
	// tell of (spanQuery).
	qDeliveryRows = `SELECT ` + deliveryColumns + deliveryFrom + ` WHERE d.webhook_id = ? AND d.event_seq > ?
		ORDER BY d.event_seq LIMIT ?`
)

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
		w.ID, w.CreatedAt, w.UpdatedAt = cur.ID, cur.CreatedAt, db.now().UTC()
		switch {
		case w.Enabled && !cur.Enabled:
			w.DisabledReason, w.FailingSince = "", nil
			if err := restartSpan(ctx, tx, id); err != nil {
				return err
			}
		case !w.Enabled && cur.Enabled:
			if err := disable(ctx, tx, id, cur.Events, petstore.DisabledByAdmin); err != nil {
				return err
			}
		case w.Enabled && w.Events != cur.Events:
			if err := closeSpan(ctx, tx, id, cur.Events); err != nil {
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

// closeSpan keeps the endpoint's current span (span_from to its cursor, sent with
// mask) among its past ones and starts the next at the cursor.
func closeSpan(ctx context.Context, tx *sql.Tx, id int64, mask petstore.EventMask) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_spans (webhook_id, from_seq, to_seq, events_mask)
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
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_spans (webhook_id, from_seq, to_seq, events_mask, failed_error)
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
		if pending >= petstore.MaxPendingTests {
			return petstore.TooManyTests(id)
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
	db.wakeDispatcher(true)
	return d, nil
}

// spans reads an endpoint's spans, past and current (if it is enabled), oldest first.
func spans(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, id int64) ([]petstore.Span, error) {
	rows, err := q.QueryContext(ctx, `SELECT from_seq, to_seq, events_mask, failed_error FROM webhook_spans
		WHERE webhook_id = ?1
		UNION ALL SELECT span_from, fan_cursor, events_mask, NULL FROM webhooks WHERE id = ?1 AND enabled = 1
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
		if err := may(d); err != nil || d.Status == petstore.DeliveryPending {
			return err
		}
		if !w.Enabled {
			return petstore.WebhookDisabled(webhookID)
		}
		at := formatTime(now)
		if fromSpan {
			_, err = tx.ExecContext(ctx, `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at,
				retry_since, created_at, fanned) VALUES (?, ?, 'pending', ?, ?, ?, 1)`, webhookID, deliveryID, at, at, formatTime(d.CreatedAt))
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?,
				retry_since = ?, leased_until = NULL WHERE webhook_id = ? AND event_seq = ?`, at, at, webhookID, deliveryID)
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
		db.wakeDispatcher(true)
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

// The statements of claims and of recorded attempts, prepared once in Open
// (hotWrites): the dispatcher runs them for every delivery.
const (
	qFeedEnd    = `SELECT COALESCE(MAX(seq), 0) FROM events`
	qDueRetries = `SELECT event_seq FROM deliveries WHERE webhook_id = ?1 AND status = 'pending'
		AND next_attempt_at <= ?2 AND (leased_until IS NULL OR leased_until <= ?2) ORDER BY next_attempt_at LIMIT ?3`
	qFanOut = `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at,
		retry_since, leased_until, created_at, fanned) VALUES (?, ?, 'pending', ?, ?, ?, ?, 1)`
	qLease      = `UPDATE deliveries SET leased_until = ? WHERE webhook_id = ? AND event_seq = ?`
	qMoveCursor = `UPDATE webhooks SET fan_cursor = ?1, send_window = ?2 WHERE id = ?3 AND (fan_cursor != ?1 OR send_window != ?2)`
	qJob        = `SELECT ` + deliveryColumns + `, d.retry_since` + deliveryFrom + ` WHERE d.webhook_id = ? AND d.event_seq = ?`
	qEventBySeq = `SELECT ` + eventColumns + ` FROM events WHERE seq = ?`

	qPendingAttempt = `SELECT attempts, fanned FROM deliveries WHERE webhook_id = ? AND event_seq = ? AND status = 'pending'`
	qForget         = `DELETE FROM deliveries WHERE webhook_id = ? AND event_seq = ?`
	qRecordAttempt  = `UPDATE deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?,
		last_attempt_at = ?, response_status = ?, last_error = ?, leased_until = NULL,
		retry_since = CASE WHEN attempts = 0 THEN ? ELSE retry_since END
		WHERE webhook_id = ? AND event_seq = ?`
	qEndpointRun    = `SELECT send_window, failing_since, enabled, events_mask FROM webhooks WHERE id = ?`
	qSetEndpointRun = `UPDATE webhooks SET send_window = ?, failing_since = ? WHERE id = ?`
)

// qUnsent finds the events after an endpoint's cursor, up to the feed's end, of the
// types of a subscription mask: the mask is tested in SQL against each type's bit
// (typeBitSQL), so that one prepared statement serves every subscription.
var qUnsent = `SELECT seq, created_at FROM events WHERE seq > ?1 AND seq <= ?2 AND type <> 'webhook.test'
	AND (?3 & ` + typeBitSQL() + `) != 0 ORDER BY seq LIMIT ?4`

// typeBitSQL is an SQL expression of an event's subscription bit (petstore.EventType.Bit)
// from its type column.
func typeBitSQL() string {
	var b strings.Builder
	b.WriteString("CASE type")
	for _, t := range petstore.EventTypes {
		fmt.Fprintf(&b, " WHEN '%s' THEN %d", t, t.Bit())
	}
	b.WriteString(" ELSE 0 END")
	return b.String()
}

// webhookWrites are the statements above, for hotWrites.
var webhookWrites = []string{qClaimants, qFeedEnd, qDueRetries, qUnsent, qFanOut, qLease, qMoveCursor, qJob, qEventBySeq,
	qWebhook, qPendingAttempt, qForget, qRecordAttempt, qEndpointRun, qSetEndpointRun}

// claimant is an endpoint as a claim sees it.
type claimant struct {
	hook     petstore.Webhook
	id       int64
	mask     petstore.EventMask
	enabled  bool
	cursor   int64
	window   int
	inFlight int
	due      bool // it has a retry due
	// was is the cursor and window as read, to write back only what changed.
	was [2]int64
}

// qClaimants reads every endpoint with its deliveries in flight and whether one of
// its retries is due: endpoints are few (MaxWebhooks), and each count is a range of
// a partial index.
const qClaimants = `SELECT ` + webhookColumns + `, w.fan_cursor, w.send_window,
	(SELECT COUNT(*) FROM deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.leased_until > ?1),
	EXISTS (SELECT 1 FROM deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= ?1
		AND (d.leased_until IS NULL OR d.leased_until <= ?1))
	FROM webhooks w ORDER BY w.id`

// newJob is the job of a delivery a claim has just fanned out: its row holds nothing
// the claim does not know.
func newJob(c *claimant, e petstore.Event, now time.Time) petstore.DeliveryJob {
	at := now
	return petstore.DeliveryJob{
		Delivery: petstore.Delivery{ID: e.Seq, WebhookID: c.id, EventID: e.ID, EventType: e.Type,
			Status: petstore.DeliveryPending, NextAttemptAt: &at, CreatedAt: e.CreatedAt},
		Event: e, Webhook: c.hook, RetrySince: now,
	}
}

// ClaimDeliveries leases due deliveries, endpoint by endpoint, under the single
// writer (BEGIN IMMEDIATE keeps every other claim, in this process or another, out
// until the leases are written): first each endpoint's due retries, then the events
// after its cursor that it subscribes to, each given a row (fanned) and the cursor
// moved past them. An endpoint gets at most its window less what it has in flight; a
// first pass gives each a fair share of o.Max, starting from a different endpoint
// each claim, and a second pass the rest.
func (db *DB) ClaimDeliveries(ctx context.Context, o petstore.ClaimOptions) ([]petstore.DeliveryJob, error) {
	if o.Max <= 0 {
		return nil, nil
	}
	now, until := formatTime(o.Now), formatTime(o.Now.Add(o.Lease))
	window := min(max(o.Window, 1), petstore.MaxDeliveryWindow)
	var jobs []petstore.DeliveryJob
	err := db.update(ctx, func(tx *sql.Tx) error {
		jobs = jobs[:0]
		end, err := db.txStmt(ctx, tx, qFeedEnd)
		if err != nil {
			return err
		}
		var head int64
		if err := end.QueryRowContext(ctx).Scan(&head); err != nil {
			return err
		}
		all, err := db.claimants(ctx, tx, now)
		if err != nil {
			return err
		}
		var busy []*claimant
		for i := range all {
			c := &all[i]
			c.window = min(c.window, window)
			if c.due || (c.enabled && c.cursor < head) {
				busy = append(busy, c)
			}
		}
		if len(busy) == 0 {
			return nil
		}
		turn := int(db.claimTurn.Add(1) % uint64(len(busy)))
		busy = append(busy[turn:], busy[:turn]...)
		share := max(1, o.Max/len(busy))
		left := o.Max
		type claimed struct {
			c    *claimant
			seq  int64
			new  bool
			made string // the event's date, for a fanned delivery
		}
		var picks []claimed
		for pass := 0; pass < 2 && left > 0; pass++ {
			for _, c := range busy {
				free := min(c.window-c.inFlight, left)
				if pass == 0 {
					free = min(free, share)
				}
				if free <= 0 {
					continue
				}
				if c.due {
					seqs, err := db.dueRetries(ctx, tx, c.id, now, free)
					if err != nil {
						return err
					}
					for _, seq := range seqs {
						picks = append(picks, claimed{c: c, seq: seq})
					}
					c.due = len(seqs) == free
					c.inFlight += len(seqs)
					free -= len(seqs)
					left -= len(seqs)
				}
				if free <= 0 || !c.enabled || c.cursor >= head {
					continue
				}
				evs, err := db.unsent(ctx, tx, c, head, free)
				if err != nil {
					return err
				}
				for _, e := range evs {
					picks = append(picks, claimed{c: c, seq: e.seq, new: true, made: e.created})
				}
				c.inFlight += len(evs)
				left -= len(evs)
			}
		}
		fan, err := db.txStmt(ctx, tx, qFanOut)
		if err != nil {
			return err
		}
		lease, err := db.txStmt(ctx, tx, qLease)
		if err != nil {
			return err
		}
		for _, p := range picks {
			if p.new {
				_, err = fan.ExecContext(ctx, p.c.id, p.seq, now, now, until, p.made)
			} else {
				_, err = lease.ExecContext(ctx, until, p.c.id, p.seq)
			}
			if err != nil {
				return fmt.Errorf("lease delivery: %w", err)
			}
		}
		move, err := db.txStmt(ctx, tx, qMoveCursor)
		if err != nil {
			return err
		}
		for _, c := range busy {
			if c.was == [2]int64{c.cursor, int64(c.window)} {
				continue
			}
			if _, err := move.ExecContext(ctx, c.cursor, c.window, c.id); err != nil {
				return fmt.Errorf("move cursor: %w", err)
			}
		}
		// Each endpoint and event is read once per claim, however many deliveries
		// carry it.
		hooks := map[int64]petstore.Webhook{}
		events := map[int64]petstore.Event{}
		for _, p := range picks {
			if p.new {
				e, err := db.event(ctx, tx, p.seq, events)
				if err != nil {
					return err
				}
				jobs = append(jobs, newJob(p.c, e, o.Now))
				continue
			}
			job, err := db.loadJob(ctx, tx, p.c.id, p.seq, hooks, events)
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

func (db *DB) claimants(ctx context.Context, tx *sql.Tx, now string) ([]claimant, error) {
	s, err := db.txStmt(ctx, tx, qClaimants)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(ctx, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []claimant
	for rows.Next() {
		var c claimant
		w := &c.hook
		var (
			expires, failing sql.NullString
			created, updated string
		)
		if err := rows.Scan(&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.DisabledReason, &w.Secret,
			&w.PreviousSecret, &expires, &failing, &created, &updated,
			&c.cursor, &c.window, &c.inFlight, &c.due); err != nil {
			return nil, err
		}
		if err := parseWebhookTimes(w, expires, failing, created, updated); err != nil {
			return nil, err
		}
		c.id, c.mask, c.enabled, c.was = w.ID, w.Events, w.Enabled, [2]int64{c.cursor, int64(c.window)}
		out = append(out, c)
	}
	return out, rows.Err()
}

// dueRetries lists up to n of an endpoint's pending deliveries that are due and not
// leased, the longest due first.
func (db *DB) dueRetries(ctx context.Context, tx *sql.Tx, id int64, now string, n int) ([]int64, error) {
	s, err := db.txStmt(ctx, tx, qDueRetries)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(ctx, id, now, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, rows.Err()
}

type unsentEvent struct {
	seq     int64
	created string
}

// unsent takes up to n of the events after c's cursor (up to head) that c subscribes
// to, and moves the cursor past them: to the last one taken when n were, else to head,
// every event up to it having been looked at.
func (db *DB) unsent(ctx context.Context, tx *sql.Tx, c *claimant, head int64, n int) ([]unsentEvent, error) {
	s, err := db.txStmt(ctx, tx, qUnsent)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(ctx, c.cursor, head, int64(c.mask), n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []unsentEvent
	for rows.Next() {
		var e unsentEvent
		if err := rows.Scan(&e.seq, &e.created); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	c.cursor = head
	if len(out) == n {
		c.cursor = out[len(out)-1].seq
	}
	return out, nil
}

// loadJob reads a leased delivery with its event and endpoint, each read once per
// claim (hooks, events).
func (db *DB) loadJob(ctx context.Context, tx *sql.Tx, webhookID, seq int64, hooks map[int64]petstore.Webhook, events map[int64]petstore.Event) (petstore.DeliveryJob, error) {
	var (
		job        petstore.DeliveryJob
		retrySince string
	)
	get, err := db.txStmt(ctx, tx, qJob)
	if err != nil {
		return job, err
	}
	job.Delivery, err = scanDelivery(get.QueryRowContext(ctx, webhookID, seq), &retrySince)
	if err != nil {
		return job, fmt.Errorf("load delivery %d of webhook %d: %w", seq, webhookID, err)
	}
	if job.RetrySince, err = parseTime(retrySince); err != nil {
		return job, err
	}
	if job.Event, err = db.event(ctx, tx, seq, events); err != nil {
		return job, err
	}
	var ok bool
	if job.Webhook, ok = hooks[webhookID]; !ok {
		hook, err := db.txStmt(ctx, tx, qWebhook)
		if err != nil {
			return job, err
		}
		if job.Webhook, err = scanWebhook(hook.QueryRowContext(ctx, webhookID)); err != nil {
			return job, fmt.Errorf("load webhook %d: %w", webhookID, err)
		}
		hooks[webhookID] = job.Webhook
	}
	return job, nil
}

// event reads the event at seq, once per claim (events).
func (db *DB) event(ctx context.Context, tx *sql.Tx, seq int64, events map[int64]petstore.Event) (petstore.Event, error) {
	if e, ok := events[seq]; ok {
		return e, nil
	}
	s, err := db.txStmt(ctx, tx, qEventBySeq)
	if err != nil {
		return petstore.Event{}, err
	}
	e, err := scanEvent(s.QueryRowContext(ctx, seq))
	if err != nil {
		return petstore.Event{}, fmt.Errorf("load event %d: %w", seq, err)
	}
	events[seq] = e
	return e, nil
}

// FinishAttempts records attempts in one write transaction, and then each endpoint's
// run of failures and window; see petstore.WebhookStore.
func (db *DB) FinishAttempts(ctx context.Context, results []petstore.AttemptResult) error {
	if len(results) == 0 {
		return nil
	}
	err := db.update(ctx, func(tx *sql.Tx) error {
		get, err := db.txStmt(ctx, tx, qPendingAttempt)
		if err != nil {
			return err
		}
		del, err := db.txStmt(ctx, tx, qForget)
		if err != nil {
			return err
		}
		set, err := db.txStmt(ctx, tx, qRecordAttempt)
		if err != nil {
			return err
		}
		var recorded []petstore.AttemptResult
		for _, r := range results {
			var attempts int
			var fanned bool
			err := get.QueryRowContext(ctx, r.WebhookID, r.DeliveryID).Scan(&attempts, &fanned)
			if errors.Is(err, sql.ErrNoRows) {
				continue // deleted with its endpoint, or failed by its disabling
			}
			if err != nil {
				return err
			}
			if r.Status == petstore.DeliverySucceeded && attempts == 0 && fanned {
				_, err = del.ExecContext(ctx, r.WebhookID, r.DeliveryID)
			} else {
				var next sql.NullString
				if r.Status == petstore.DeliveryPending {
					next = nullTime(&r.NextAttemptAt)
				}
				_, err = set.ExecContext(ctx, string(r.Status), next, formatTime(r.At), r.ResponseStatus, r.Error,
					formatTime(r.At), r.WebhookID, r.DeliveryID)
			}
			if err != nil {
				return err
			}
			recorded = append(recorded, r)
		}
		return db.endpointsAfter(ctx, tx, recorded)
	})
	if err != nil {
		return fmt.Errorf("finish attempts: %w", err)
	}
	return nil
}

// endpointsAfter updates each endpoint of recorded results: its run of failures,
// its window, and its disabling past the results' DisableIfFailingBefore.
func (db *DB) endpointsAfter(ctx context.Context, tx *sql.Tx, recorded []petstore.AttemptResult) error {
	get, err := db.txStmt(ctx, tx, qEndpointRun)
	if err != nil {
		return err
	}
	set, err := db.txStmt(ctx, tx, qSetEndpointRun)
	if err != nil {
		return err
	}
	for id, rs := range petstore.ByWebhook(recorded) {
		var (
			w       int
			failing sql.NullString
			enabled bool
			mask    petstore.EventMask
		)
		err := get.QueryRowContext(ctx, id).Scan(&w, &failing, &enabled, &mask)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		since, err := parseNullTime(failing)
		if err != nil {
			return err
		}
		run := petstore.RunAfter(since, w, rs)
		if _, err := set.ExecContext(ctx, run.Window, nullTime(run.FailingSince), id); err != nil {
			return err
		}
		// An endpoint already disabled (by an admin, who then sent it a test event)
		// is left as it is: its reason says the service disabled it, which it did not.
		if run.Disable == nil || !enabled {
			continue
		}
		why := petstore.DisabledReason(*run.FailingSince, run.Disable.At, run.Disable.Error)
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ?`,
			why, formatTime(run.Disable.At), id); err != nil {
			return err
		}
		if err := disable(ctx, tx, id, mask, petstore.FailedByDisabling(why)); err != nil {
			return err
		}
	}
	return nil
}

// QueueStats counts the pending deliveries and the events after each enabled
// endpoint's cursor (seqs are consecutive here, so that is a subtraction, whatever
// the backlog), and dates the oldest event among them.
func (db *DB) QueueStats(ctx context.Context) (petstore.QueueStats, error) {
	s, err := db.readStmt(ctx, `SELECT
		(SELECT COUNT(*) FROM deliveries WHERE status = 'pending')
		+ COALESCE((SELECT SUM(MAX(m.seq - w.fan_cursor, 0)) FROM webhooks w, (SELECT COALESCE(MAX(seq), 0) AS seq FROM events) m
			WHERE w.enabled = 1), 0),
		(SELECT MIN(c) FROM (
			SELECT MIN(e.created_at) AS c FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.status = 'pending'
			UNION ALL
			SELECT (SELECT e.created_at FROM events e WHERE e.seq > w.fan_cursor AND e.type <> 'webhook.test' ORDER BY e.seq LIMIT 1)
			FROM webhooks w WHERE w.enabled = 1))`)
	if err != nil {
		return petstore.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	var (
		st     petstore.QueueStats
		oldest sql.NullString
	)
	if err := s.QueryRowContext(uncancelled(ctx)).Scan(&st.Pending, &oldest); err != nil {
		return petstore.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	if t, err := parseNullTime(oldest); err != nil {
		return petstore.QueueStats{}, err
	} else if t != nil {
		st.Oldest = *t
	}
	return st, nil
}
