package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The queue's claims and finishes: the store loads what petstore.PlanClaim and
// petstore.PlanFinish decide on and writes what they decide, in one transaction
// each, under the row locks of the endpoints concerned.

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
	qDueRetries = `SELECT event_seq FROM deliveries WHERE webhook_id = $1 AND status = 'pending'
		AND next_attempt_at <= $2 AND (leased_until IS NULL OR leased_until <= $2) ORDER BY next_attempt_at LIMIT $3`
	qUnsent = `SELECT seq, created_at FROM events WHERE seq > $1 AND seq <= $2 AND type = ANY($3)
		ORDER BY seq LIMIT $4`
	// qInFlight counts the deliveries in flight of the endpoints a claim locked.
	qInFlight = `SELECT webhook_id, count(*) FROM deliveries
		WHERE webhook_id = ANY($1) AND status = 'pending' AND leased_until > $2 GROUP BY webhook_id`
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

// ClaimDeliveries leases due deliveries as petstore.PlanClaim decides, in one
// transaction of three round trips for most claims: it locks the endpoints that have
// work (claimants); loads, a batch per round of the plan's asks (one mostly, more
// while endpoints turn out short of their share: petstore.Claim.Asks), their candidates,
// counting again in the first what they have in flight (loadCandidates); and in a
// last batch writes the leases and cursors and reads the jobs back (saveClaim).
func (db *DB) ClaimDeliveries(ctx context.Context, o petstore.ClaimOptions) ([]petstore.DeliveryJob, error) {
	if o.Max <= 0 {
		return nil, nil
	}
	now := timestamp(o.Now)
	var jobs []petstore.DeliveryJob
	err := db.update(ctx, func(tx pgx.Tx) error {
		head, eps, err := claimants(ctx, tx, now)
		if err != nil || len(eps) == 0 {
			return err
		}
		c := petstore.PlanClaim(o, head, eps, int(db.claimTurn.Add(1)))
		recount := true
		for asks := c.Asks(); len(asks) > 0; asks = c.Asks() {
			if err := loadCandidates(ctx, tx, c, asks, eps, now, recount); err != nil {
				return err
			}
			recount = false
		}
		jobs, err = saveClaim(ctx, tx, c.Plan(), now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return jobs, nil
}

// claimants locks the endpoints that have work and reads them as a claim sees them,
// with the end of the feed that their cursors may pass.
func claimants(ctx context.Context, tx pgx.Tx, now time.Time) (int64, []petstore.ClaimEndpoint, error) {
	var head int64
	rows, err := tx.Query(ctx, qClaimants, now)
	if err != nil {
		return 0, nil, err
	}
	eps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (petstore.ClaimEndpoint, error) {
		var e petstore.ClaimEndpoint
		err := r.Scan(&e.ID, &e.Events, &e.Enabled, &e.Cursor, &e.Window, &e.InFlight, &e.Due, &head)
		return e, err
	})
	return head, eps, err
}

// loadCandidates answers a round of a claim's asks in one batch: each endpoint's due
// retries and events after its cursor. With recount, the batch also counts again
// what each endpoint has in flight: qClaimants counted as of its start (READ
// COMMITTED), so a claim of the same endpoint that committed while it ran, before it
// took the row lock, was missed; this statement begins after the locks are held, so
// nothing is.
func loadCandidates(ctx context.Context, tx pgx.Tx, c *petstore.Claim, asks []petstore.ClaimAsk, eps []petstore.ClaimEndpoint, now time.Time, recount bool) error {
	var b pgx.Batch
	loads := make([]petstore.ClaimLoad, len(asks))
	for i, a := range asks {
		l := &loads[i]
		l.Ask = a
		if a.Retries > 0 {
			b.Queue(qDueRetries, a.WebhookID, now, a.Retries).Query(func(rows pgx.Rows) (err error) {
				l.Retries, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (petstore.QueueItem, error) {
					var it petstore.QueueItem
					return it, r.Scan(&it.Seq)
				})
				return err
			})
		}
		if a.Unsent > 0 {
			b.Queue(qUnsent, a.After, a.Head, maskTypes(a.Events), a.Unsent).Query(func(rows pgx.Rows) (err error) {
				l.Unsent, err = pgx.CollectRows(rows, pgx.RowToStructByPos[petstore.QueueItem])
				return err
			})
		}
	}
	if recount {
		queueInFlight(&b, c, eps, now)
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return err
	}
	c.Offer(loads)
	return nil
}

// queueInFlight queues the count of what the claim's endpoints have in flight.
func queueInFlight(b *pgx.Batch, c *petstore.Claim, eps []petstore.ClaimEndpoint, now time.Time) {
	ids := make([]int64, len(eps))
	for i, e := range eps {
		ids[i] = e.ID
	}
	b.Queue(qInFlight, ids, now).Query(func(rows pgx.Rows) error {
		n := map[int64]int{}
		for rows.Next() {
			var (
				id    int64
				count int
			)
			if err := rows.Scan(&id, &count); err != nil {
				return err
			}
			n[id] = count
		}
		c.Recount(n)
		return rows.Err()
	})
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

// saveClaim writes a claim's plan in one batch: a row per event fanned out, the
// leases of the retries, the cursors and windows that moved; and reads the jobs.
func saveClaim(ctx context.Context, tx pgx.Tx, p petstore.ClaimPlan, now time.Time) ([]petstore.DeliveryJob, error) {
	var fan, retry claimRows
	for _, l := range p.Leases {
		if l.New {
			fan.add(l.WebhookID, l.Item.Seq, l.Item.CreatedAt)
		} else {
			retry.add(l.WebhookID, l.Item.Seq, l.Item.CreatedAt)
		}
	}
	var moved struct {
		ids, cursors []int64
		windows      []int32
	}
	for _, m := range p.Moves {
		moved.ids, moved.cursors = append(moved.ids, m.WebhookID), append(moved.cursors, m.Cursor)
		moved.windows = append(moved.windows, int32(m.Window))
	}
	until := timestamp(p.Until)
	var b pgx.Batch
	if len(fan.webhooks) > 0 {
		b.Queue(qFanOut, fan.webhooks, fan.seqs, now, until, fan.created)
	}
	if len(retry.webhooks) > 0 {
		b.Queue(qLeaseRetries, retry.webhooks, retry.seqs, until)
	}
	if len(moved.ids) > 0 {
		b.Queue(qMoveCursors, moved.ids, moved.cursors, moved.windows)
	}
	var jobs []petstore.DeliveryJob
	if all := (claimRows{webhooks: append(fan.webhooks, retry.webhooks...), seqs: append(fan.seqs, retry.seqs...)}); len(all.webhooks) > 0 {
		b.Queue(qJobs, all.webhooks, all.seqs).Query(func(rows pgx.Rows) (err error) {
			jobs, err = pgx.CollectRows(rows, scanJob)
			return err
		})
	}
	if b.Len() == 0 {
		return nil, nil
	}
	return jobs, tx.SendBatch(ctx, &b).Close()
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
	// qPendingAttempts reads, and locks, the results' deliveries that are pending.
	qPendingAttempts = `SELECT d.webhook_id, d.event_seq, d.attempts, d.fanned
		FROM deliveries d JOIN unnest($1::bigint[], $2::bigint[]) v(w, s) ON d.webhook_id = v.w AND d.event_seq = v.s
		WHERE d.status = 'pending' ORDER BY d.webhook_id, d.event_seq FOR UPDATE OF d`
	qForget = `DELETE FROM deliveries d USING unnest($1::bigint[], $2::bigint[]) v(w, s)
		WHERE d.webhook_id = v.w AND d.event_seq = v.s`
	// qRecordAttempts records attempts; the run's first starts its retry horizon.
	qRecordAttempts = `UPDATE deliveries d SET attempts = d.attempts + 1, last_attempt_at = v.at,
		response_status = v.rs, last_error = v.err, leased_until = NULL, status = v.st, next_attempt_at = v.next,
		retry_since = CASE WHEN d.attempts = 0 THEN v.at ELSE d.retry_since END
		FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[], $4::int[], $5::text[], $6::text[], $7::timestamptz[])
			v(w, s, at, rs, err, st, next)
		WHERE d.webhook_id = v.w AND d.event_seq = v.s`
	qEndpointRuns = `UPDATE webhooks w SET send_window = v.n, failing_since = v.f
		FROM unnest($1::bigint[], $2::int[], $3::timestamptz[]) v(id, n, f) WHERE w.id = v.id`
	qDisableEndpoint = `UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE id = $1`
)

// FinishAttempts records attempts as petstore.PlanFinish decides, in one
// transaction: it locks and reads the results' endpoints and pending deliveries (one
// batch, loadFinish), then writes the plan (one batch, and a few statements per
// endpoint disabled; saveFinish).
func (db *DB) FinishAttempts(ctx context.Context, results []petstore.AttemptResult) error {
	if len(results) == 0 {
		return nil
	}
	err := db.update(ctx, func(tx pgx.Tx) error {
		pending, endpoints, err := loadFinish(ctx, tx, results)
		if err != nil {
			return err
		}
		return saveFinish(ctx, tx, petstore.PlanFinish(results, pending, endpoints))
	})
	if err != nil {
		return fmt.Errorf("finish attempts: %w", err)
	}
	return nil
}

// loadFinish locks the results' endpoints, then their pending deliveries, and reads
// them.
func loadFinish(ctx context.Context, tx pgx.Tx, results []petstore.AttemptResult) (map[petstore.DeliveryKey]petstore.PendingAttempt, map[int64]petstore.FinishEndpoint, error) {
	var ids, webhooks, seqs []int64
	for _, r := range results {
		if !slices.Contains(ids, r.WebhookID) {
			ids = append(ids, r.WebhookID)
		}
		webhooks, seqs = append(webhooks, r.WebhookID), append(seqs, r.DeliveryID)
	}
	pending := map[petstore.DeliveryKey]petstore.PendingAttempt{}
	endpoints := map[int64]petstore.FinishEndpoint{}
	var b pgx.Batch
	b.Queue(qLockEndpoints, ids).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var (
				id int64
				e  petstore.FinishEndpoint
			)
			if err := rows.Scan(&id, &e.Window, &e.FailingSince, &e.Enabled, &e.Events); err != nil {
				return err
			}
			endpoints[id] = e
		}
		return rows.Err()
	})
	b.Queue(qPendingAttempts, webhooks, seqs).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var (
				k petstore.DeliveryKey
				a petstore.PendingAttempt
			)
			if err := rows.Scan(&k.WebhookID, &k.DeliveryID, &a.Attempts, &a.Fanned); err != nil {
				return err
			}
			pending[k] = a
		}
		return rows.Err()
	})
	return pending, endpoints, tx.SendBatch(ctx, &b).Close()
}

// saveFinish writes a finish's plan: in one batch the rows forgotten, the attempts
// recorded and the endpoints' runs; then the disablings.
func saveFinish(ctx context.Context, tx pgx.Tx, p petstore.FinishPlan) error {
	var b pgx.Batch
	if len(p.Forget) > 0 {
		var webhooks, seqs []int64
		for _, k := range p.Forget {
			webhooks, seqs = append(webhooks, k.WebhookID), append(seqs, k.DeliveryID)
		}
		b.Queue(qForget, webhooks, seqs)
	}
	if len(p.Record) > 0 {
		queueRecords(&b, p.Record)
	}
	if len(p.Runs) > 0 {
		var (
			ids     []int64
			windows []int32
			failing []*time.Time
		)
		for _, r := range p.Runs {
			ids, windows = append(ids, r.WebhookID), append(windows, int32(r.Window))
			failing = append(failing, optionalTimestamp(r.FailingSince))
		}
		b.Queue(qEndpointRuns, ids, windows, failing)
	}
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
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

// queueRecords queues the attempts to record, as arrays for unnest.
func queueRecords(b *pgx.Batch, records []petstore.AttemptRecord) {
	var (
		webhooks, seqs []int64
		at             []time.Time
		next           []*time.Time
		rs             []int32
		errs, st       []string
	)
	for _, r := range records {
		webhooks, seqs = append(webhooks, r.Key.WebhookID), append(seqs, r.Key.DeliveryID)
		at, next = append(at, timestamp(r.At)), append(next, optionalTimestamp(r.NextAttemptAt))
		rs, errs, st = append(rs, int32(r.ResponseStatus)), append(errs, r.Error), append(st, string(r.Status))
	}
	b.Queue(qRecordAttempts, webhooks, seqs, at, rs, errs, st, next)
}

// disableEndpoint disables an endpoint as the service does, with a reason, and
// fails its deliveries.
func disableEndpoint(ctx context.Context, tx pgx.Tx, d petstore.Disabling) error {
	if _, err := tx.Exec(ctx, qDisableEndpoint, d.WebhookID, d.Reason, timestamp(d.At)); err != nil {
		return err
	}
	return disable(ctx, tx, d.WebhookID, d.Events, d.FailError())
}
