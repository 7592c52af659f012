package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The queue's claims and finishes: the store loads what petstore.PlanClaim and
// petstore.PlanFinish decide on and writes what they decide, in one write
// transaction each (BEGIN IMMEDIATE keeps every other claim, in this process or
// another, out until the leases are written).

// The statements of claims and of recorded attempts, prepared once in Open
// (hotWrites): the dispatcher runs them for every delivery.
const (
	qFeedEnd = `SELECT COALESCE(MAX(seq), 0) FROM events`
	// qClaimants reads every endpoint with its deliveries in flight and whether one
	// of its retries is due: endpoints are few (MaxWebhooks), and each count is a
	// range of a partial index.
	qClaimants = `SELECT ` + webhookColumns + `, w.fan_cursor, w.send_window,
	(SELECT COUNT(*) FROM deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.leased_until > ?1),
	EXISTS (SELECT 1 FROM deliveries d WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= ?1
		AND (d.leased_until IS NULL OR d.leased_until <= ?1))
	FROM webhooks w ORDER BY w.id`
	qDueRetries = `SELECT event_seq FROM deliveries WHERE webhook_id = ?1 AND status = 'pending'
		AND next_attempt_at <= ?2 AND (leased_until IS NULL OR leased_until <= ?2) ORDER BY next_attempt_at LIMIT ?3`
	// qFanOut writes a claim's new deliveries in one statement: ?1 is a JSON array of
	// [webhook id, event seq, event date] (deliveryKeys), so that one prepared
	// statement serves any claim, and a claim of 512 costs one call, not 512.
	qFanOut = `INSERT INTO deliveries (webhook_id, event_seq, status, next_attempt_at,
		retry_since, leased_until, created_at, fanned)
		SELECT value ->> 0, value ->> 1, 'pending', ?2, ?2, ?3, value ->> 2, 1 FROM json_each(?1)`
	qLease      = `UPDATE deliveries SET leased_until = ? WHERE webhook_id = ? AND event_seq = ?`
	qMoveCursor = `UPDATE webhooks SET fan_cursor = ?, send_window = ? WHERE id = ?`
	qJob        = `SELECT ` + deliveryColumns + `, d.retry_since` + deliveryFrom + ` WHERE d.webhook_id = ? AND d.event_seq = ?`
	qEventBySeq = `SELECT ` + eventColumns + ` FROM events WHERE seq = ?`

	// qPendingAttempts reads the pending rows of a batch of results, ?1 a JSON array of
	// [webhook id, event seq]: one statement per record, each row found by its key.
	qPendingAttempts = `SELECT d.webhook_id, d.event_seq, d.attempts, d.fanned FROM json_each(?1)
		CROSS JOIN deliveries d ON d.webhook_id = value ->> 0 AND d.event_seq = value ->> 1
		WHERE d.status = 'pending'`
	qEndpointRun = `SELECT send_window, failing_since, enabled, events FROM webhooks WHERE id = ?`
	// qForget deletes the rows of a batch of first attempts that succeeded, ?1 a JSON
	// array of [webhook id, event seq].
	qForget = `DELETE FROM deliveries WHERE (webhook_id, event_seq) IN
		(SELECT value ->> 0, value ->> 1 FROM json_each(?1))`
	// qRecordAttempt records an attempt; the run's first starts its retry horizon.
	qRecordAttempt = `UPDATE deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?,
		last_attempt_at = ?, response_status = ?, last_error = ?, leased_until = NULL,
		retry_since = CASE WHEN attempts = 0 THEN ? ELSE retry_since END
		WHERE webhook_id = ? AND event_seq = ?`
	qSetEndpointRun  = `UPDATE webhooks SET send_window = ?, failing_since = ? WHERE id = ?`
	qDisableEndpoint = `UPDATE webhooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ?`
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
	qWebhook, qPendingAttempts, qForget, qRecordAttempt, qEndpointRun, qSetEndpointRun}

// ClaimDeliveries leases due deliveries as petstore.PlanClaim decides: it loads the
// endpoints (claimants) and the candidates the plan asks for (loadCandidates), then
// writes the leases and cursors (saveClaim) and reads the jobs (claimedJobs).
func (db *DB) ClaimDeliveries(ctx context.Context, o petstore.ClaimOptions) ([]petstore.DeliveryJob, error) {
	if o.Max <= 0 {
		return nil, nil
	}
	var jobs []petstore.DeliveryJob
	err := db.update(ctx, func(tx *sql.Tx) error {
		head, eps, hooks, err := db.claimants(ctx, tx, o.Now)
		if err != nil {
			return err
		}
		c := petstore.PlanClaim(o, head, eps, int(db.claimTurn.Add(1)))
		for asks := c.Asks(); len(asks) > 0; asks = c.Asks() {
			loads, err := db.loadCandidates(ctx, tx, asks, o.Now)
			if err != nil {
				return err
			}
			c.Offer(loads)
		}
		plan := c.Plan()
		if err := db.saveClaim(ctx, tx, plan, o.Now); err != nil {
			return err
		}
		jobs, err = db.claimedJobs(ctx, tx, plan, hooks, o.Now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return jobs, nil
}

// claimants reads the end of the feed and every endpoint as a claim sees it, with
// the endpoints themselves for the jobs.
func (db *DB) claimants(ctx context.Context, tx *sql.Tx, now time.Time) (int64, []petstore.ClaimEndpoint, map[int64]petstore.Webhook, error) {
	var head int64
	end, err := db.txStmt(ctx, tx, qFeedEnd)
	if err != nil {
		return 0, nil, nil, err
	}
	if err := end.QueryRowContext(ctx).Scan(&head); err != nil {
		return 0, nil, nil, err
	}
	s, err := db.txStmt(ctx, tx, qClaimants)
	if err != nil {
		return 0, nil, nil, err
	}
	rows, err := s.QueryContext(ctx, formatTime(now))
	if err != nil {
		return 0, nil, nil, err
	}
	defer rows.Close()
	var eps []petstore.ClaimEndpoint
	hooks := map[int64]petstore.Webhook{}
	for rows.Next() {
		var (
			e                petstore.ClaimEndpoint
			w                petstore.Webhook
			expires, failing sql.NullString
			created, updated string
		)
		if err := rows.Scan(&w.ID, &w.URL, &w.Description, &w.Events, &w.Enabled, &w.DisabledReason, &w.Secret,
			&w.PreviousSecret, &expires, &failing, &created, &updated, &e.Cursor, &e.Window, &e.InFlight, &e.Due); err != nil {
			return 0, nil, nil, err
		}
		if err := parseWebhookTimes(&w, expires, failing, created, updated); err != nil {
			return 0, nil, nil, err
		}
		e.ID, e.Events, e.Enabled = w.ID, w.Events, w.Enabled
		eps, hooks[w.ID] = append(eps, e), w
	}
	return head, eps, hooks, rows.Err()
}

// loadCandidates answers a claim's asks: each endpoint's due retries and events
// after its cursor.
func (db *DB) loadCandidates(ctx context.Context, tx *sql.Tx, asks []petstore.ClaimAsk, now time.Time) ([]petstore.ClaimLoad, error) {
	retries, err := db.txStmt(ctx, tx, qDueRetries)
	if err != nil {
		return nil, err
	}
	unsent, err := db.txStmt(ctx, tx, qUnsent)
	if err != nil {
		return nil, err
	}
	loads := make([]petstore.ClaimLoad, len(asks))
	// Endpoints that keep pace stand at the same cursor with the same subscription:
	// their events are read once per round, not once per endpoint (with 100 of them,
	// 100 reads of the same rows every claim).
	read := map[unsentKey]unsentRead{}
	for i, a := range asks {
		loads[i].Ask = a
		if a.Retries > 0 {
			if loads[i].Retries, err = queueItems(ctx, retries, a.WebhookID, formatTime(now), a.Retries); err != nil {
				return nil, err
			}
		}
		if a.Unsent > 0 {
			if loads[i].Unsent, err = unsentItems(ctx, unsent, a, read); err != nil {
				return nil, err
			}
		}
	}
	return loads, nil
}

// unsentKey names a read of the events after a cursor, whatever its limit.
type unsentKey struct {
	after, head int64
	events      petstore.EventMask
}

// unsentRead is a read of unsentKey's events: the first of them, or (all) every one.
type unsentRead struct {
	items []petstore.QueueItem
	all   bool
}

// unsentItems reads the first a.Unsent events after a.After of a's types, or takes
// them from a read of the same events in read: the query is in feed order with a
// limit, so the first n of a longer read, or all of a read that found every event
// there is, are what it would return. The slice returned is capped, so that an
// append to it copies.
func unsentItems(ctx context.Context, unsent *sql.Stmt, a petstore.ClaimAsk, read map[unsentKey]unsentRead) ([]petstore.QueueItem, error) {
	k := unsentKey{a.After, a.Head, a.Events}
	r, ok := read[k]
	if !ok || (!r.all && len(r.items) < a.Unsent) {
		items, err := queueItems(ctx, unsent, a.After, a.Head, int64(a.Events), a.Unsent)
		if err != nil {
			return nil, err
		}
		r = unsentRead{items: items, all: len(items) < a.Unsent}
		read[k] = r
	}
	n := min(len(r.items), a.Unsent)
	return r.items[:n:n], nil
}

// queueItems reads the candidates of statement s: a seq, and for an event its date.
func queueItems(ctx context.Context, s *sql.Stmt, args ...any) ([]petstore.QueueItem, error) {
	rows, err := s.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []petstore.QueueItem
	for rows.Next() {
		var (
			it      petstore.QueueItem
			created string
		)
		dest := []any{&it.Seq, &created}[:len(cols)]
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if created != "" {
			if it.CreatedAt, err = parseTime(created); err != nil {
				return nil, err
			}
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// saveClaim writes a claim's plan: a row per event fanned out, the leases of the
// retries, and the cursors and windows that moved.
func (db *DB) saveClaim(ctx context.Context, tx *sql.Tx, p petstore.ClaimPlan, now time.Time) error {
	fan, err := db.txStmt(ctx, tx, qFanOut)
	if err != nil {
		return err
	}
	lease, err := db.txStmt(ctx, tx, qLease)
	if err != nil {
		return err
	}
	at, until := formatTime(now), formatTime(p.Until)
	var fanned deliveryKeys
	for _, l := range p.Leases {
		if l.New {
			fanned.add(l.WebhookID, l.Item.Seq, formatTime(l.Item.CreatedAt))
			continue
		}
		if _, err := lease.ExecContext(ctx, until, l.WebhookID, l.Item.Seq); err != nil {
			return fmt.Errorf("lease delivery: %w", err)
		}
	}
	if fanned.n > 0 {
		if _, err := fan.ExecContext(ctx, fanned.json(), at, until); err != nil {
			return fmt.Errorf("fan out deliveries: %w", err)
		}
	}
	move, err := db.txStmt(ctx, tx, qMoveCursor)
	if err != nil {
		return err
	}
	for _, m := range p.Moves {
		if _, err := move.ExecContext(ctx, m.Cursor, m.Window, m.WebhookID); err != nil {
			return fmt.Errorf("move cursor: %w", err)
		}
	}
	return nil
}

// claimedJobs reads the jobs of a claim's leases. Each endpoint and event is read
// once per claim, however many deliveries carry it; a delivery fanned out now holds
// nothing the claim does not know.
func (db *DB) claimedJobs(ctx context.Context, tx *sql.Tx, p petstore.ClaimPlan, hooks map[int64]petstore.Webhook, now time.Time) ([]petstore.DeliveryJob, error) {
	events := map[int64]petstore.Event{}
	jobs := make([]petstore.DeliveryJob, 0, len(p.Leases))
	for _, l := range p.Leases {
		if !l.New {
			job, err := db.loadJob(ctx, tx, l.WebhookID, l.Item.Seq, hooks, events)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, job)
			continue
		}
		e, err := db.event(ctx, tx, l.Item.Seq, events)
		if err != nil {
			return nil, err
		}
		at := now
		jobs = append(jobs, petstore.DeliveryJob{
			Delivery: petstore.Delivery{ID: e.Seq, WebhookID: l.WebhookID, EventID: e.ID, EventType: e.Type,
				Status: petstore.DeliveryPending, NextAttemptAt: &at, CreatedAt: e.CreatedAt},
			Event: e, Webhook: hooks[l.WebhookID], RetrySince: now,
		})
	}
	return jobs, nil
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
	job.Webhook = hooks[webhookID]
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

// FinishAttempts records attempts as petstore.PlanFinish decides: it loads the
// results' pending deliveries and endpoints (loadFinish), then writes the plan
// (saveFinish).
func (db *DB) FinishAttempts(ctx context.Context, results []petstore.AttemptResult) error {
	if len(results) == 0 {
		return nil
	}
	err := db.update(ctx, func(tx *sql.Tx) error {
		pending, endpoints, err := db.loadFinish(ctx, tx, results)
		if err != nil {
			return err
		}
		return db.saveFinish(ctx, tx, petstore.PlanFinish(results, pending, endpoints))
	})
	if err != nil {
		return fmt.Errorf("finish attempts: %w", err)
	}
	return nil
}

// loadFinish reads the pending rows of the results' deliveries and their endpoints.
func (db *DB) loadFinish(ctx context.Context, tx *sql.Tx, results []petstore.AttemptResult) (map[petstore.DeliveryKey]petstore.PendingAttempt, map[int64]petstore.FinishEndpoint, error) {
	pending, err := db.pendingAttempts(ctx, tx, results)
	if err != nil {
		return nil, nil, err
	}
	hook, err := db.txStmt(ctx, tx, qEndpointRun)
	if err != nil {
		return nil, nil, err
	}
	endpoints := map[int64]petstore.FinishEndpoint{}
	for _, r := range results {
		// A result without a pending row was deleted with its endpoint, or failed by
		// its disabling: nothing of it is recorded.
		if _, ok := pending[petstore.DeliveryKey{WebhookID: r.WebhookID, DeliveryID: r.DeliveryID}]; !ok {
			continue
		}
		if _, ok := endpoints[r.WebhookID]; ok {
			continue
		}
		var (
			e       petstore.FinishEndpoint
			failing sql.NullString
		)
		if err := hook.QueryRowContext(ctx, r.WebhookID).Scan(&e.Window, &failing, &e.Enabled, &e.Events); err != nil {
			return nil, nil, err
		}
		if e.FailingSince, err = parseNullTime(failing); err != nil {
			return nil, nil, err
		}
		endpoints[r.WebhookID] = e
	}
	return pending, endpoints, nil
}

// pendingAttempts reads the pending rows of the results' deliveries, in one
// statement; a delivery without one is missing from the map.
func (db *DB) pendingAttempts(ctx context.Context, tx *sql.Tx, results []petstore.AttemptResult) (map[petstore.DeliveryKey]petstore.PendingAttempt, error) {
	var keys deliveryKeys
	for _, r := range results {
		keys.add(r.WebhookID, r.DeliveryID, "")
	}
	get, err := db.txStmt(ctx, tx, qPendingAttempts)
	if err != nil {
		return nil, err
	}
	rows, err := get.QueryContext(ctx, keys.json())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	pending := make(map[petstore.DeliveryKey]petstore.PendingAttempt, len(results))
	for rows.Next() {
		var (
			k petstore.DeliveryKey
			a petstore.PendingAttempt
		)
		if err := rows.Scan(&k.WebhookID, &k.DeliveryID, &a.Attempts, &a.Fanned); err != nil {
			return nil, err
		}
		pending[k] = a
	}
	return pending, rows.Err()
}

// deliveryKeys builds the JSON array of deliveries that the batch statements read
// with json_each: [[webhook id, event seq], …], or with a date, [[id, seq, "date"], …].
// The dates are formatTime's, which need no escaping.
type deliveryKeys struct {
	b []byte
	n int
}

func (k *deliveryKeys) add(webhookID, seq int64, date string) {
	if k.n == 0 {
		k.b = append(k.b, '[')
	} else {
		k.b = append(k.b, ',')
	}
	k.n++
	k.b = append(k.b, '[')
	k.b = strconv.AppendInt(k.b, webhookID, 10)
	k.b = append(k.b, ',')
	k.b = strconv.AppendInt(k.b, seq, 10)
	if date != "" {
		k.b = append(k.b, ',', '"')
		k.b = append(k.b, date...)
		k.b = append(k.b, '"')
	}
	k.b = append(k.b, ']')
}

// json is the array, as text (SQLite's JSON functions read text).
func (k *deliveryKeys) json() string {
	if k.n == 0 {
		return "[]"
	}
	return string(k.b) + "]"
}

// saveFinish writes a finish's plan: the rows forgotten, the attempts recorded, the
// endpoints' runs, and the disablings.
func (db *DB) saveFinish(ctx context.Context, tx *sql.Tx, p petstore.FinishPlan) error {
	del, err := db.txStmt(ctx, tx, qForget)
	if err != nil {
		return err
	}
	if len(p.Forget) > 0 {
		var keys deliveryKeys
		for _, k := range p.Forget {
			keys.add(k.WebhookID, k.DeliveryID, "")
		}
		if _, err := del.ExecContext(ctx, keys.json()); err != nil {
			return fmt.Errorf("forget deliveries: %w", err)
		}
	}
	set, err := db.txStmt(ctx, tx, qRecordAttempt)
	if err != nil {
		return err
	}
	for _, r := range p.Record {
		at := formatTime(r.At)
		if _, err := set.ExecContext(ctx, string(r.Status), nullTime(r.NextAttemptAt), at, r.ResponseStatus, r.Error,
			at, r.Key.WebhookID, r.Key.DeliveryID); err != nil {
			return err
		}
	}
	run, err := db.txStmt(ctx, tx, qSetEndpointRun)
	if err != nil {
		return err
	}
	for _, r := range p.Runs {
		if _, err := run.ExecContext(ctx, r.Window, nullTime(r.FailingSince), r.WebhookID); err != nil {
			return err
		}
	}
	for _, d := range p.Disables {
		if err := disableEndpoint(ctx, tx, d); err != nil {
			return err
		}
	}
	return nil
}

// disableEndpoint disables an endpoint as the service does, with a reason, and
// fails its deliveries.
func disableEndpoint(ctx context.Context, tx *sql.Tx, d petstore.Disabling) error {
	if _, err := tx.ExecContext(ctx, qDisableEndpoint, d.Reason, formatTime(d.At), d.WebhookID); err != nil {
		return err
	}
	return disable(ctx, tx, d.WebhookID, d.Events, d.FailError())
}
