package postgres

import (
	"context"
	"fmt"
	"strings"
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
	deliveryColumns = `d.event_seq, d.webhook_id, e.id, e.type, d.status, d.attempts, d.next_attempt_at,
		d.last_attempt_at, d.response_status, d.last_error, d.created_at`
	qDelivery = `SELECT ` + deliveryColumns + ` FROM deliveries d JOIN events e ON e.seq = d.event_seq
		WHERE d.webhook_id = $1 AND d.event_seq = $2`

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

// CreateWebhook adds an enabled endpoint, dated by the store's clock, sent the events
// that commit from now on: its cursor starts at the feed's end. The MaxWebhooks+1st is
// EConflict; a lock on the table makes the count exact across processes.
func (db *DB) CreateWebhook(ctx context.Context, w petstore.Webhook) (petstore.Webhook, error) {
	if err := w.CheckText(petstore.Webhook{}); err != nil {
		return petstore.Webhook{}, err
	}
	now := timestamp(db.now())
	w.Enabled, w.DisabledReason, w.FailingSince = true, "", nil
	w.CreatedAt, w.UpdatedAt = now, now
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
		if n >= petstore.MaxWebhooks {
			return petstore.TooManyWebhooks()
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

// The lists of endpoints and of an endpoint's deliveries.
const (
	qWebhooks = `SELECT ` + webhookColumns + ` FROM webhooks WHERE id > $1 ORDER BY id LIMIT $2`
	// qDeliveryRows pages an endpoint's delivery rows; the others are what its spans
	// tell of (spanQuery).
	qDeliveryRows = `SELECT ` + deliveryColumns + ` FROM deliveries d JOIN events e ON e.seq = d.event_seq
		WHERE d.webhook_id = $1 AND d.event_seq > $2 ORDER BY d.event_seq LIMIT $3`
)

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
		w.ID, w.CreatedAt, w.UpdatedAt = cur.ID, cur.CreatedAt, timestamp(db.now())
		w.PreviousSecretExpiresAt = optionalTimestamp(w.PreviousSecretExpiresAt)
		w.FailingSince = optionalTimestamp(w.FailingSince)
		if w.Enabled {
			w.DisabledReason = ""
			if !cur.Enabled {
				w.FailingSince = nil
			}
		}
		switch {
		case w.Enabled && !cur.Enabled:
			err = restartSpan(ctx, tx, id)
		case !w.Enabled && cur.Enabled:
			err = disable(ctx, tx, id, cur.Events, petstore.DisabledByAdmin)
		case w.Enabled && w.Events != cur.Events:
			err = closeSpan(ctx, tx, id, cur.Events)
		}
		if err != nil {
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
		if pending >= petstore.MaxPendingTests {
			return petstore.TooManyTests(id)
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
		if err := may(d); err != nil || d.Status == petstore.DeliveryPending {
			return err
		}
		if !enabled {
			return petstore.WebhookDisabled(webhookID)
		}
		if fromSpan {
			_, err = tx.Exec(ctx, `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at, retry_since,
				created_at, fanned) VALUES ($1, $2, 'pending', $3, $3, $4, true)`, webhookID, deliveryID, now, d.CreatedAt)
		} else {
			_, err = tx.Exec(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $3,
				retry_since = $3, leased_until = NULL WHERE webhook_id = $1 AND event_seq = $2`, webhookID, deliveryID, now)
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

// claimant is an endpoint as a claim sees it.
type claimant struct {
	id       int64
	mask     petstore.EventMask
	enabled  bool
	cursor   int64
	window   int
	inFlight int
	due      bool // a retry is due
	head     int64
	// picks are its deliveries this claim may take, due retries first; news counts
	// the events after its cursor among them, fetched up to the limit asked.
	picks []pick
	// fetched says whether the events after its cursor were asked for; news counts
	// those found, capped when as many were found as were asked for.
	fetched    bool
	news       int
	newsCapped bool
}

type pick struct {
	seq     int64
	new     bool
	created time.Time
}

// qClaimants locks, SKIP LOCKED, every endpoint that has a retry due or events
// after its cursor, with what it has in flight; endpoints are few (MaxWebhooks), and
// each test is a probe of an index. The row lock makes claims of one endpoint take
// turns across processes, so that no two share a delivery or move its cursor at once.
const qClaimants = `SELECT w.id, w.events, w.enabled, w.fan_cursor, w.send_window,
	(SELECT count(*) FROM deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.leased_until > $1),
	EXISTS (SELECT 1 FROM deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= $1
		AND (d.leased_until IS NULL OR d.leased_until <= $1)) AS due,
	h.head
	FROM webhooks w, ` + qHead + ` h(head)
	WHERE EXISTS (SELECT 1 FROM deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= $1
		AND (d.leased_until IS NULL OR d.leased_until <= $1))
	OR (w.enabled AND EXISTS (SELECT 1 FROM events e WHERE e.seq > w.fan_cursor AND e.seq <= h.head))
	ORDER BY w.id FOR UPDATE OF w SKIP LOCKED`

const (
	qDueRetries = `SELECT event_seq, created_at FROM deliveries WHERE webhook_id = $1 AND status = 'pending'
		AND next_attempt_at <= $2 AND (leased_until IS NULL OR leased_until <= $2) ORDER BY next_attempt_at LIMIT $3`
	qUnsent = `SELECT seq, created_at FROM events WHERE seq > $1 AND seq <= $2 AND type = ANY($3)
		ORDER BY seq LIMIT $4`
	qFanOut = `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at, retry_since, leased_until,
		created_at, fanned)
		SELECT v.w, v.s, 'pending', $3, $3, $4, v.c, true FROM unnest($1::bigint[], $2::bigint[], $5::timestamptz[]) v(w, s, c)`
	qLeaseRetries = `UPDATE deliveries d SET leased_until = $3 FROM unnest($1::bigint[], $2::bigint[]) v(w, s)
		WHERE d.webhook_id = v.w AND d.event_seq = v.s`
	qMoveCursors = `UPDATE webhooks w SET fan_cursor = v.c, send_window = v.n
		FROM unnest($1::bigint[], $2::bigint[], $3::int[]) v(id, c, n) WHERE w.id = v.id`
	qJobs = `SELECT ` + deliveryColumns + `, d.retry_since, e.created_at, e.data,
		w.id, w.url, w.description, w.events, w.enabled, w.disabled_reason, w.secret, w.previous_secret,
		w.previous_secret_expires_at, w.failing_since, w.created_at, w.updated_at
		FROM unnest($1::bigint[], $2::bigint[]) v(w, s)
		JOIN deliveries d ON d.webhook_id = v.w AND d.event_seq = v.s
		JOIN events e ON e.seq = d.event_seq JOIN webhooks w ON w.id = d.webhook_id`
)

// ClaimDeliveries leases due deliveries in one transaction of three round trips:
// it locks the endpoints that have work (qClaimants); asks, in one batch, for each
// one's due retries and the events after its cursor that it subscribes to, up to its
// window less what it has in flight; takes them in turns, one endpoint after another
// from a different first endpoint each claim, until o.Max; and in a second batch
// writes the leases, a row (fanned) per event taken and the cursors, and reads the
// jobs back.
func (db *DB) ClaimDeliveries(ctx context.Context, o petstore.ClaimOptions) ([]petstore.DeliveryJob, error) {
	if o.Max <= 0 {
		return nil, nil
	}
	now := timestamp(o.Now)
	until := timestamp(o.Now.Add(o.Lease))
	window := min(max(o.Window, 1), petstore.MaxDeliveryWindow)
	var jobs []petstore.DeliveryJob
	err := db.update(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, qClaimants, now)
		if err != nil {
			return err
		}
		cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*claimant, error) {
			c := &claimant{}
			err := r.Scan(&c.id, &c.mask, &c.enabled, &c.cursor, &c.window, &c.inFlight, &c.due, &c.head)
			c.window = min(c.window, window)
			return c, err
		})
		if err != nil || len(cs) == 0 {
			return err
		}
		var b pgx.Batch
		for _, c := range cs {
			free := min(c.window-c.inFlight, o.Max)
			if free <= 0 {
				continue
			}
			if c.due {
				b.Queue(qDueRetries, c.id, now, free).Query(func(rows pgx.Rows) error {
					for rows.Next() {
						var p pick
						if err := rows.Scan(&p.seq, &p.created); err != nil {
							return err
						}
						c.picks = append(c.picks, p)
					}
					return rows.Err()
				})
			}
			if c.enabled && c.cursor < c.head {
				c.fetched = true
				b.Queue(qUnsent, c.cursor, c.head, maskTypes(c.mask), free).Query(func(rows pgx.Rows) error {
					n := 0
					for rows.Next() {
						p := pick{new: true}
						if err := rows.Scan(&p.seq, &p.created); err != nil {
							return err
						}
						c.picks = append(c.picks, p)
						n++
					}
					c.news, c.newsCapped = n, n == free
					return rows.Err()
				})
			}
		}
		if b.Len() > 0 {
			queueInFlight(&b, cs, now)
			if err := tx.SendBatch(ctx, &b).Close(); err != nil {
				return err
			}
		}
		for _, c := range cs {
			c.keepFree(o.Max)
		}
		taken := takeTurns(cs, int(db.claimTurn.Add(1)), o.Max)

		var fan, retry claimRows
		var moved struct {
			ids, cursors []int64
			windows      []int32
		}
		for i, c := range cs {
			ps := c.picks[:taken[i]]
			var lastNew int64
			newTaken := 0
			for _, p := range ps {
				if p.new {
					fan.add(c.id, p.seq, p.created)
					lastNew, newTaken = p.seq, newTaken+1
				} else {
					retry.add(c.id, p.seq, p.created)
				}
			}
			cursor := c.cursor
			switch {
			case c.fetched && newTaken == c.news && !c.newsCapped:
				cursor = c.head // every event up to the head was looked at
			case newTaken > 0:
				cursor = lastNew
			}
			moved.ids = append(moved.ids, c.id)
			moved.cursors = append(moved.cursors, cursor)
			moved.windows = append(moved.windows, int32(c.window))
		}
		var w pgx.Batch
		if len(fan.webhooks) > 0 {
			w.Queue(qFanOut, fan.webhooks, fan.seqs, now, until, fan.created)
		}
		if len(retry.webhooks) > 0 {
			w.Queue(qLeaseRetries, retry.webhooks, retry.seqs, until)
		}
		w.Queue(qMoveCursors, moved.ids, moved.cursors, moved.windows)
		all := claimRows{webhooks: append(fan.webhooks, retry.webhooks...), seqs: append(fan.seqs, retry.seqs...)}
		if len(all.webhooks) > 0 {
			w.Queue(qJobs, all.webhooks, all.seqs).Query(func(rows pgx.Rows) error {
				jobs, err = pgx.CollectRows(rows, scanJob)
				return err
			})
		}
		return tx.SendBatch(ctx, &w).Close()
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return jobs, nil
}

// qInFlight counts the deliveries in flight of the endpoints a claim locked.
const qInFlight = `SELECT webhook_id, count(*) FROM deliveries
	WHERE webhook_id = ANY($1) AND status = 'pending' AND leased_until > $2 GROUP BY webhook_id`

// queueInFlight counts again, into each claimant's inFlight, what it has in flight.
// qClaimants counted as of its start (READ COMMITTED), so a claim of the same
// endpoint that committed while it ran, before it took the row lock, was missed;
// this statement begins after the locks are held, so nothing is.
func queueInFlight(b *pgx.Batch, cs []*claimant, now time.Time) {
	ids := make([]int64, len(cs))
	byID := make(map[int64]*claimant, len(cs))
	for i, c := range cs {
		ids[i], byID[c.id] = c.id, c
	}
	b.Queue(qInFlight, ids, now).Query(func(rows pgx.Rows) error {
		for _, c := range cs {
			c.inFlight = 0
		}
		for rows.Next() {
			var (
				id int64
				n  int
			)
			if err := rows.Scan(&id, &n); err != nil {
				return err
			}
			byID[id].inFlight = n
		}
		return rows.Err()
	})
}

// keepFree keeps of c's picks as many as its window less what it has in flight
// allows (and at most limit): due retries first, then new events. Each kind was
// fetched up to the room counted before the lock, so together they may hold twice
// the room, and the room may have shrunk since.
func (c *claimant) keepFree(limit int) {
	free := max(min(c.window-c.inFlight, limit), 0)
	c.picks = c.picks[:min(len(c.picks), free)]
}

// takeTurns decides how many of each claimant's picks a claim takes: one from each
// in turn, starting at turn, until max are taken or none is left.
func takeTurns(cs []*claimant, turn, max int) []int {
	taken := make([]int, len(cs))
	if len(cs) == 0 {
		return taken
	}
	start := turn % len(cs)
	for total := 0; total < max; {
		progress := false
		for k := range cs {
			i := (start + k) % len(cs)
			if total < max && taken[i] < len(cs[i].picks) {
				taken[i]++
				total++
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	return taken
}

// claimRows are the deliveries of a claim, as arrays for unnest.
type claimRows struct {
	webhooks, seqs []int64
	created        []time.Time
}

func (r *claimRows) add(webhookID, seq int64, created time.Time) {
	r.webhooks = append(r.webhooks, webhookID)
	r.seqs = append(r.seqs, seq)
	r.created = append(r.created, created)
}

// maskTypes lists the event types of mask m for qUnsent (every type for "*").
func maskTypes(m petstore.EventMask) []string {
	var out []string
	for i, t := range petstore.EventTypes {
		if m&(1<<i) != 0 {
			out = append(out, string(t))
		}
	}
	return out
}

func scanJob(r pgx.CollectableRow) (petstore.DeliveryJob, error) {
	var (
		j           petstore.DeliveryJob
		typ, status string
		data        []byte
	)
	d, w := &j.Delivery, &j.Webhook
	err := r.Scan(&d.ID, &d.WebhookID, &d.EventID, &typ, &status, &d.Attempts, &d.NextAttemptAt,
		&d.LastAttemptAt, &d.ResponseStatus, &d.LastError, &d.CreatedAt, &j.RetrySince,
		&j.Event.CreatedAt, &data,
		&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.DisabledReason, &w.Secret,
		&w.PreviousSecret, &w.PreviousSecretExpiresAt, &w.FailingSince, &w.CreatedAt, &w.UpdatedAt)
	if err != nil {
		return j, err
	}
	d.EventType, d.Status = petstore.EventType(typ), petstore.DeliveryStatus(status)
	j.Event.ID, j.Event.Type, j.Event.Seq = d.EventID, d.EventType, d.ID
	return j, petstore.UnmarshalEventData(&j.Event, data)
}

const (
	// qLockEndpoints locks the endpoints of a batch of results, in id order as every
	// transaction that locks several does, before their deliveries: claims lock an
	// endpoint, then its deliveries.
	qLockEndpoints = `SELECT id, send_window, failing_since, enabled, events FROM webhooks
		WHERE id = ANY($1) ORDER BY id FOR UPDATE`
	// qForgetSucceeded deletes the rows of fan-outs whose first attempt succeeded:
	// their spans tell of them.
	qForgetSucceeded = `DELETE FROM deliveries d USING unnest($1::bigint[], $2::bigint[]) v(w, s)
		WHERE d.webhook_id = v.w AND d.event_seq = v.s AND d.status = 'pending' AND d.attempts = 0 AND d.fanned
		RETURNING d.webhook_id, d.event_seq`
	// qRecordAttempts records the other attempts on pending deliveries; the run's first
	// attempt starts its retry horizon (retry_since).
	qRecordAttempts = `UPDATE deliveries d SET attempts = d.attempts + 1, last_attempt_at = v.at,
		response_status = v.rs, last_error = v.err, leased_until = NULL, status = v.st,
		next_attempt_at = CASE WHEN v.st = 'pending' THEN v.next END,
		retry_since = CASE WHEN d.attempts = 0 THEN v.at ELSE d.retry_since END
		FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::int[], $5::text[], $6::text[], $7::timestamptz[])
			v(w, s, at, rs, err, st, next)
		WHERE d.webhook_id = v.w AND d.event_seq = v.s AND d.status = 'pending'
		RETURNING d.webhook_id, d.event_seq`
	qEndpointRuns = `UPDATE webhooks w SET send_window = v.n, failing_since = v.f
		FROM unnest($1::bigint[], $2::int[], $3::timestamptz[]) v(id, n, f) WHERE w.id = v.id`
)

// FinishAttempts records the results of attempts in one transaction: it locks their
// endpoints, forgets the fan-outs that succeeded at once and records the rest (one
// batch), then sets each endpoint's run of failures and window, disabling those
// whose run lasted too long.
func (db *DB) FinishAttempts(ctx context.Context, results []petstore.AttemptResult) error {
	if len(results) == 0 {
		return nil
	}
	err := db.update(ctx, func(tx pgx.Tx) error {
		byHook := petstore.ByWebhook(results)
		ids := make([]int64, 0, len(byHook))
		for id := range byHook {
			ids = append(ids, id)
		}
		type endpoint struct {
			window  int
			failing *time.Time
			enabled bool
			mask    petstore.EventMask
		}
		hooks := map[int64]*endpoint{}
		rows, err := tx.Query(ctx, qLockEndpoints, ids)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				id int64
				e  endpoint
			)
			if err := rows.Scan(&id, &e.window, &e.failing, &e.enabled, &e.mask); err != nil {
				rows.Close()
				return err
			}
			hooks[id] = &e
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}

		var ok, all struct {
			webhooks, seqs []int64
		}
		var (
			at, next []time.Time
			rs       []int32
			errs, st []string
		)
		for _, r := range results {
			if r.Status == petstore.DeliverySucceeded {
				ok.webhooks, ok.seqs = append(ok.webhooks, r.WebhookID), append(ok.seqs, r.DeliveryID)
			}
			all.webhooks, all.seqs = append(all.webhooks, r.WebhookID), append(all.seqs, r.DeliveryID)
			at, next = append(at, timestamp(r.At)), append(next, timestamp(r.NextAttemptAt))
			rs, errs, st = append(rs, int32(r.ResponseStatus)), append(errs, r.Error), append(st, string(r.Status))
		}
		type key struct{ w, s int64 }
		recorded := map[key]bool{}
		collect := func(rows pgx.Rows) error {
			for rows.Next() {
				var k key
				if err := rows.Scan(&k.w, &k.s); err != nil {
					return err
				}
				recorded[k] = true
			}
			return rows.Err()
		}
		var b pgx.Batch
		if len(ok.webhooks) > 0 {
			b.Queue(qForgetSucceeded, ok.webhooks, ok.seqs).Query(collect)
		}
		b.Queue(qRecordAttempts, all.webhooks, all.seqs, at, rs, errs, st, next).Query(collect)
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}

		var runs struct {
			ids     []int64
			windows []int32
			failing []*time.Time
		}
		type disabling struct {
			id   int64
			why  string
			at   time.Time
			mask petstore.EventMask
		}
		var disables []disabling
		for id, rs := range byHook {
			h, found := hooks[id]
			if !found {
				continue // deleted
			}
			kept := rs[:0:0]
			for _, r := range rs {
				if recorded[key{id, r.DeliveryID}] {
					kept = append(kept, r)
				}
			}
			if len(kept) == 0 {
				continue
			}
			run := petstore.RunAfter(h.failing, h.window, kept)
			runs.ids = append(runs.ids, id)
			runs.windows = append(runs.windows, int32(run.Window))
			runs.failing = append(runs.failing, optionalTimestamp(run.FailingSince))
			// An endpoint already disabled (by an admin, who then sent it a test
			// event) is left as it is: its reason says the service disabled it,
			// which it did not.
			if run.Disable != nil && h.enabled {
				disables = append(disables, disabling{id: id, at: timestamp(run.Disable.At), mask: h.mask,
					why: petstore.DisabledReason(*run.FailingSince, run.Disable.At, run.Disable.Error)})
			}
		}
		if len(runs.ids) > 0 {
			if _, err := tx.Exec(ctx, qEndpointRuns, runs.ids, runs.windows, runs.failing); err != nil {
				return err
			}
		}
		for _, d := range disables {
			if _, err := tx.Exec(ctx, `UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE id = $1`,
				d.id, d.why, d.at); err != nil {
				return err
			}
			if err := disable(ctx, tx, d.id, d.mask, petstore.FailedByDisabling(d.why)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish attempts: %w", err)
	}
	return nil
}

// QueueStats counts the pending deliveries and the events not yet fanned out to
// enabled endpoints (counted up to 10,000 each: seqs are not consecutive here, and a
// scrape must not walk a long backlog), and dates the oldest event among them.
func (db *DB) QueueStats(ctx context.Context) (petstore.QueueStats, error) {
	var (
		st     petstore.QueueStats
		oldest *time.Time
	)
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM deliveries WHERE status = 'pending')
		+ coalesce((SELECT sum((SELECT count(*) FROM (SELECT 1 FROM events e WHERE e.seq > w.fan_cursor
			AND e.type <> 'webhook.test' LIMIT 10000) x)) FROM webhooks w WHERE w.enabled), 0),
		least(
			(SELECT min(e.created_at) FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.status = 'pending'),
			(SELECT min((SELECT e.created_at FROM events e WHERE e.seq > w.fan_cursor AND e.type <> 'webhook.test'
				ORDER BY e.seq LIMIT 1)) FROM webhooks w WHERE w.enabled))`).Scan(&st.Pending, &oldest)
	if err != nil {
		return petstore.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	if oldest != nil {
		st.Oldest = *oldest
	}
	return st, nil
}
