package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// What the webhook and delivery tests build on: endpoints, claims, attempt results
// and how they compare.

// hook creates an endpoint subscribed to mask.
func (f *fixture) hook(mask petstore.EventMask) petstore.Webhook {
	f.t.Helper()
	n := unique.Add(1)
	w, err := f.webhookStore().CreateWebhook(f.ctx, petstore.Webhook{
		URL: fmt.Sprintf("https://example.com/hooks/%d", n), Description: fmt.Sprint("endpoint ", n),
		Events: mask, Secret: fmt.Sprint("whsec_", n),
	})
	must(f.t, err)
	return w
}

// anyone may have any delivery sent again (RetryDelivery's may).
func anyone(petstore.Delivery) error { return nil }

// disable disables an endpoint through UpdateWebhook, as an admin does.
func (f *fixture) disable(id int64) petstore.Webhook {
	f.t.Helper()
	w, err := f.webhookStore().UpdateWebhook(f.ctx, id, func(w petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
		w.Enabled = false
		return w, nil
	})
	must(f.t, err)
	return w
}

// deliveries lists all of an endpoint's deliveries, page by page.
func (f *fixture) deliveries(webhook int64) []petstore.Delivery {
	f.t.Helper()
	out := []petstore.Delivery{}
	for p := (petstore.Page{Limit: 2}); ; {
		page, err := f.webhookStore().Deliveries(f.ctx, webhook, p)
		must(f.t, err)
		out = append(out, page...)
		if len(page) < p.Limit {
			return out
		}
		p.After = page[len(page)-1].ID
	}
}

// delivery finds one of an endpoint's deliveries.
func (f *fixture) delivery(webhook, id int64) petstore.Delivery {
	f.t.Helper()
	for _, d := range f.deliveries(webhook) {
		if d.ID == id {
			return d
		}
	}
	f.t.Fatalf("endpoint %d has no delivery %d", webhook, id)
	return petstore.Delivery{}
}

// restock changes a pet's stock without crossing 0, which writes one event:
// inventory.updated.
func (f *fixture) restock(pet int64) {
	f.t.Helper()
	p := f.pet(pet)
	if p.Stock == 0 {
		f.t.Fatal("restock needs a pet in stock")
	}
	_, err := f.s.SetInventory(f.ctx, pet, p.Stock+1)
	must(f.t, err)
}

// window is the window the tests claim with unless they say otherwise.
const window = petstore.DefaultDeliveryWindow

// claimWith claims deliveries with options o (a lease of a minute and the default
// window unless o says).
func (f *fixture) claimWith(o petstore.ClaimOptions) []petstore.DeliveryJob {
	f.t.Helper()
	if o.Lease == 0 {
		o.Lease = time.Minute
	}
	if o.Window == 0 {
		o.Window = window
	}
	jobs, err := f.webhookStore().ClaimDeliveries(f.ctx, o)
	must(f.t, err)
	return jobs
}

// claim claims deliveries at now with a lease of a minute.
func (f *fixture) claim(now time.Time, max int) []petstore.DeliveryJob {
	f.t.Helper()
	return f.claimWith(petstore.ClaimOptions{Now: now, Max: max})
}

// claimed lists the keys of claimed deliveries.
func claimed(jobs []petstore.DeliveryJob) []key {
	out := make([]key, len(jobs))
	for i, j := range jobs {
		out[i] = key{j.Webhook.ID, j.Delivery.ID}
	}
	slices.SortFunc(out, func(a, b key) int {
		if a.webhook != b.webhook {
			return int(a.webhook - b.webhook)
		}
		return int(a.delivery - b.delivery)
	})
	return out
}

// key names a delivery: its endpoint and its id.
type key struct{ webhook, delivery int64 }

func keys(webhook int64, ds ...int64) []key {
	out := make([]key, len(ds))
	for i, d := range ds {
		out[i] = key{webhook, d}
	}
	return out
}

func deliveryIDs(list []petstore.Delivery) []int64 {
	return ids(list, func(d petstore.Delivery) int64 { return d.ID })
}

// finish records attempts.
func (f *fixture) finish(rs ...petstore.AttemptResult) {
	f.t.Helper()
	must(f.t, f.webhookStore().FinishAttempts(f.ctx, rs))
}

// succeeded is the result of an attempt answered 200.
func succeeded(webhook, id int64, at time.Time) petstore.AttemptResult {
	return petstore.AttemptResult{WebhookID: webhook, DeliveryID: id, At: at, Status: petstore.DeliverySucceeded, ResponseStatus: 200}
}

// retryAt is the result of an attempt answered 500, tried again at next.
func retryAt(webhook, id int64, at, next time.Time) petstore.AttemptResult {
	return petstore.AttemptResult{WebhookID: webhook, DeliveryID: id, At: at, Status: petstore.DeliveryPending, NextAttemptAt: next,
		ResponseStatus: 500, Error: "the endpoint answered 500"}
}

// fanOut claims, at now, the deliveries of the events the feed showed last (the test
// reads them first, so that PostgreSQL shows them to claims too), and checks that the
// claim took exactly want.
func (f *fixture) fanOut(now time.Time, want ...key) []petstore.DeliveryJob {
	f.t.Helper()
	jobs := f.claim(now, 100)
	slices.SortFunc(want, func(a, b key) int {
		if a.webhook != b.webhook {
			return int(a.webhook - b.webhook)
		}
		return int(a.delivery - b.delivery)
	})
	if got := claimed(jobs); !slices.Equal(got, want) {
		f.t.Fatalf("claimed %v, want %v", got, want)
	}
	return jobs
}

// sameTime compares optional times.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// describeWebhook shows an endpoint for comparing, times in UTC.
func describeWebhook(w petstore.Webhook) string {
	at := func(t *time.Time) string {
		if t == nil {
			return "none"
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("{id %d, url %s, %q, events %b, enabled %v, reason %q, secret %q, previous %q until %s, failing since %s, created %s, updated %s}",
		w.ID, w.URL, w.Description, w.Events, w.Enabled, w.DisabledReason, w.Secret, w.PreviousSecret,
		at(w.PreviousSecretExpiresAt), at(w.FailingSince), at(&w.CreatedAt), at(&w.UpdatedAt))
}

func wantWebhook(t *testing.T, got, want petstore.Webhook) {
	t.Helper()
	if g, w := describeWebhook(got), describeWebhook(want); g != w {
		t.Errorf("endpoint is\n\t%s\nwant\n\t%s", g, w)
	}
}
