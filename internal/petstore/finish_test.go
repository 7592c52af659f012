package petstore

import (
	"reflect"
	"testing"
	"time"
)

func TestPlanFinish(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	ok := func(w, d int64, at time.Time) AttemptResult {
		return AttemptResult{WebhookID: w, DeliveryID: d, At: at, Status: DeliverySucceeded, ResponseStatus: 200}
	}
	retry := func(w, d int64, at, next time.Time) AttemptResult {
		return AttemptResult{WebhookID: w, DeliveryID: d, At: at, Status: DeliveryPending, NextAttemptAt: next, ResponseStatus: 500, Error: "e"}
	}
	failed := func(w, d int64, at, bound time.Time) AttemptResult {
		return AttemptResult{WebhookID: w, DeliveryID: d, At: at, Status: DeliveryFailed, ResponseStatus: 500, Error: "e",
			NextAttemptAt: t2, DisableIfFailingBefore: bound}
	}
	fanned := PendingAttempt{Fanned: true}
	enabled := FinishEndpoint{Window: 8, Enabled: true, Events: MaskAll}
	failingSince := func(e FinishEndpoint, at time.Time) FinishEndpoint { e.FailingSince = &at; return e }
	rec := func(r AttemptResult) AttemptRecord {
		a := AttemptRecord{Key: DeliveryKey{r.WebhookID, r.DeliveryID}, Status: r.Status, At: r.At, ResponseStatus: r.ResponseStatus, Error: r.Error}
		if r.Status == DeliveryPending {
			a.NextAttemptAt = &r.NextAttemptAt
		}
		return a
	}
	cases := []struct {
		name      string
		results   []AttemptResult
		pending   map[DeliveryKey]PendingAttempt
		endpoints map[int64]FinishEndpoint
		want      FinishPlan
	}{
		{name: "a fan-out's first attempt that succeeds leaves no row",
			results: []AttemptResult{ok(1, 10, t1)}, pending: map[DeliveryKey]PendingAttempt{{1, 10}: fanned},
			endpoints: map[int64]FinishEndpoint{1: enabled},
			want:      FinishPlan{Forget: []DeliveryKey{{1, 10}}, Runs: []EndpointRun{{1, 9, nil}}}},
		{name: "a test's success, and a success after a retry, are recorded",
			results:   []AttemptResult{ok(1, 10, t1), ok(1, 11, t1)},
			pending:   map[DeliveryKey]PendingAttempt{{1, 10}: {}, {1, 11}: {Attempts: 2, Fanned: true}},
			endpoints: map[int64]FinishEndpoint{1: enabled},
			want: FinishPlan{Record: []AttemptRecord{rec(ok(1, 10, t1)), rec(ok(1, 11, t1))},
				Runs: []EndpointRun{{1, 10, nil}}}},
		{name: "a failure records its retry and starts the endpoint's run of failures, halving its window",
			results: []AttemptResult{retry(1, 10, t1, t2)}, pending: map[DeliveryKey]PendingAttempt{{1, 10}: fanned},
			endpoints: map[int64]FinishEndpoint{1: enabled},
			want:      FinishPlan{Record: []AttemptRecord{rec(retry(1, 10, t1, t2))}, Runs: []EndpointRun{{1, 4, &t1}}}},
		{name: "a result whose delivery is no longer pending, or counted already, is left out",
			results:   []AttemptResult{ok(1, 10, t1), retry(2, 20, t1, t2), retry(2, 20, t2, t2)},
			pending:   map[DeliveryKey]PendingAttempt{{2, 20}: fanned},
			endpoints: map[int64]FinishEndpoint{1: enabled, 2: enabled},
			want:      FinishPlan{Record: []AttemptRecord{rec(retry(2, 20, t1, t2))}, Runs: []EndpointRun{{2, 4, &t1}}}},
		{name: "a deleted endpoint gets no run",
			results: []AttemptResult{ok(1, 10, t1)}, pending: map[DeliveryKey]PendingAttempt{{1, 10}: fanned},
			want: FinishPlan{Forget: []DeliveryKey{{1, 10}}}},
		{name: "an endpoint failing since before the bound is disabled with a reason",
			results: []AttemptResult{failed(1, 10, t2, t1)}, pending: map[DeliveryKey]PendingAttempt{{1, 10}: {Attempts: 3}},
			endpoints: map[int64]FinishEndpoint{1: failingSince(enabled, t0)},
			want: FinishPlan{Record: []AttemptRecord{rec(failed(1, 10, t2, t1))}, Runs: []EndpointRun{{1, 4, &t0}},
				Disables: []Disabling{{WebhookID: 1, At: t2, Events: MaskAll, Reason: DisabledReason(t0, t2, "e")}}}},
		{name: "an endpoint already disabled stays as it is",
			results: []AttemptResult{failed(1, 10, t2, t1)}, pending: map[DeliveryKey]PendingAttempt{{1, 10}: {}},
			endpoints: map[int64]FinishEndpoint{1: func() FinishEndpoint { e := failingSince(enabled, t0); e.Enabled = false; return e }()},
			want:      FinishPlan{Record: []AttemptRecord{rec(failed(1, 10, t2, t1))}, Runs: []EndpointRun{{1, 4, &t0}}}},
		{name: "a success in the same batch keeps the endpoint enabled",
			results:   []AttemptResult{failed(1, 10, t1, t1), ok(1, 11, t2)},
			pending:   map[DeliveryKey]PendingAttempt{{1, 10}: {Attempts: 3}, {1, 11}: fanned},
			endpoints: map[int64]FinishEndpoint{1: failingSince(enabled, t0)},
			want: FinishPlan{Forget: []DeliveryKey{{1, 11}}, Record: []AttemptRecord{rec(failed(1, 10, t1, t1))},
				Runs: []EndpointRun{{1, 5, nil}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanFinish(tc.results, tc.pending, tc.endpoints)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PlanFinish:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	d := Disabling{Reason: "why"}
	if got := d.FailError(); got != FailedByDisabling("why") {
		t.Errorf("FailError = %q", got)
	}
}

func TestWebhookChanged(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	cur := Webhook{ID: 7, URL: "https://a.example", Events: MaskAll, Enabled: true, CreatedAt: t0, UpdatedAt: t0}
	off := cur
	off.Enabled, off.DisabledReason, off.FailingSince = false, "failed", &t0
	sub := cur
	sub.Events = InventoryUpdated.Bit()
	cases := []struct {
		name      string
		cur, next Webhook
		want      Webhook
		change    SpanChange
	}{
		{"a new description keeps the span", cur, func() Webhook { w := cur; w.Description = "d"; return w }(),
			func() Webhook { w := cur; w.Description, w.UpdatedAt = "d", now; return w }(), SpanKept},
		{"enabled again, it forgets its failures and restarts", off, func() Webhook { w := off; w.Enabled = true; return w }(),
			func() Webhook { w := cur; w.UpdatedAt = now; return w }(), SpanRestarted},
		{"disabled, its deliveries fail", cur, func() Webhook { w := cur; w.Enabled = false; return w }(),
			func() Webhook { w := cur; w.Enabled, w.UpdatedAt = false, now; return w }(), SpanFailed},
		{"a new subscription closes the span", cur, sub, func() Webhook { w := sub; w.UpdatedAt = now; return w }(), SpanClosed},
		{"a disabled endpoint's new subscription waits", off, func() Webhook { w := off; w.Events = 1; return w }(),
			func() Webhook { w := off; w.Events, w.UpdatedAt = 1, now; return w }(), SpanKept},
		{"the id and creation stay", cur, func() Webhook { w := cur; w.ID, w.CreatedAt = 9, now; return w }(),
			func() Webhook { w := cur; w.UpdatedAt = now; return w }(), SpanKept},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, change := tc.next.Changed(tc.cur, now)
			if !reflect.DeepEqual(got, tc.want) || change != tc.change {
				t.Errorf("Changed = %+v, %d; want %+v, %d", got, change, tc.want, tc.change)
			}
		})
	}
	if w := (Webhook{DisabledReason: "x", FailingSince: &t0}).Created(now); !w.Enabled || w.DisabledReason != "" || w.FailingSince != nil ||
		!w.CreatedAt.Equal(now) || !w.UpdatedAt.Equal(now) {
		t.Errorf("Created = %+v", w)
	}
}

func TestQueueCaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"MaxWebhooks-1 endpoints take one more", CheckWebhookCount(MaxWebhooks - 1), false},
		{"MaxWebhooks endpoints take none", CheckWebhookCount(MaxWebhooks), true},
		{"MaxPendingTests-1 tests take one more", CheckPendingTests(1, MaxPendingTests-1), false},
		{"MaxPendingTests tests take none", CheckPendingTests(1, MaxPendingTests), true},
	} {
		if refused := tc.err != nil; refused != tc.want || refused && ErrorCode(tc.err) != EConflict {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
	}
	if KeysNeedRoom(MaxKeysPerAccount-1) || !KeysNeedRoom(MaxKeysPerAccount) {
		t.Errorf("KeysNeedRoom is wrong at the cap")
	}
}

func TestCheckRetry(t *testing.T) {
	refused := Errorf(EForbidden, "no")
	anyone := func(Delivery) error { return nil }
	failed := Delivery{WebhookID: 3, Status: DeliveryFailed}
	for _, tc := range []struct {
		name    string
		d       Delivery
		enabled bool
		may     func(Delivery) error
		retry   bool
		code    string
	}{
		{"a failed delivery of an enabled endpoint is retried", failed, true, anyone, true, ""},
		{"a pending one is left as it is", Delivery{Status: DeliveryPending}, true, anyone, false, ""},
		{"one of a disabled endpoint waits for nothing", failed, false, anyone, false, EConflict},
		{"may decides first", failed, false, func(Delivery) error { return refused }, false, EForbidden},
	} {
		retry, err := CheckRetry(tc.d, tc.enabled, tc.may)
		code := ""
		if err != nil {
			code = ErrorCode(err)
		}
		if retry != tc.retry || code != tc.code {
			t.Errorf("%s: CheckRetry = %v, %v", tc.name, retry, err)
		}
	}
}
