package httpapi_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

// The OWASP scope group, for the data events carry (issue 30): a key never reads
// through the feed, a webhook or a delivery sent again what its scopes would refuse
// it directly.

// readScopes is the document's table of the scope each event type needs
// (components.schemas.EventType's x-read-scopes), and feedTypes the types the feed
// and subscriptions take (FeedEventType): the group attacks every type the document
// names, those added later included.
func (a *testAPI) readScopes(t testing.TB) (scopes map[string]string, feedTypes []string) {
	t.Helper()
	schemas := a.servedDocument(t).Components.Schemas
	listed, _ := schemas["EventType"].Value.Extensions["x-read-scopes"].(map[string]any)
	scopes = map[string]string{}
	for typ, s := range listed {
		scopes[typ], _ = s.(string)
	}
	for _, v := range schemas["FeedEventType"].Value.Enum {
		feedTypes = append(feedTypes, v.(string))
	}
	if len(feedTypes) < 9 {
		t.Fatalf("the document's feed has %d types: %v", len(feedTypes), feedTypes)
	}
	for _, typ := range feedTypes {
		if scopes[typ] == "" {
			t.Fatalf("the document names no scope for %s (EventType's x-read-scopes)", typ)
		}
	}
	return scopes, feedTypes
}

// feedAs reads the whole feed with key (of one type, or all with ""), following its
// links.
func (a *testAPI) feedAs(t *testing.T, key, typ string) []event {
	t.Helper()
	a.settleFeed(t)
	next := "/v1/events?limit=100"
	if typ != "" {
		next += "&type=" + typ
	}
	var all []event
	for next != "" {
		res := a.do(t, req{Method: "GET", Path: next, Key: key}).expect(200, "")
		var page []event
		res.JSON(&page)
		all = append(all, page...)
		next = nextPath(t, res.Header.Get("Link"))
	}
	return all
}

// eventWorld holds an event of every type of the feed, and an endpoint subscribed
// to every type with a failed delivery of each.
type eventWorld struct {
	// byType is an event of each type, sent to the endpoint.
	byType map[string]event
	hook   int64
}

// newEventWorld makes an event of every type of the feed, through the API, and
// fails the delivery of each to an endpoint subscribed to "*".
func newEventWorld(t *testing.T, a *testAPI, types []string) eventWorld {
	t.Helper()
	ctx := context.Background()
	ws := a.webhookStore(t)
	hook, err := ws.CreateWebhook(ctx, petstore.Webhook{URL: "https://hooks.example.com/all", Events: petstore.MaskAll, Secret: "whsec_all"})
	if err != nil {
		t.Fatal(err)
	}
	// inventory.updated and pet.restocked; order.placed twice, then order.cancelled;
	// pet.sold_out and pet.status_changed; order.completed; api_key.created and
	// api_key.revoked.
	p := a.pet(t, "Rex", 3)
	kept := a.order(t, a.Customer, p.ID, 1)
	gone := a.order(t, a.Customer, p.ID, 1)
	a.do(t, req{Method: "DELETE", Path: path("/v1/store/orders/%d", gone.ID), Key: a.Customer}).expect(204, "")
	a.order(t, a.Customer, p.ID, 2)
	a.do(t, req{Method: "PATCH", Path: path("/v1/store/orders/%d", kept.ID), Key: a.Admin, Body: `{"complete":true}`}).expect(200, "")
	var k struct{ ID int64 }
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: `{"name":"laptop"}`}).expect(201, "").JSON(&k)
	a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", k.ID), Key: a.Customer}).expect(204, "")

	w := eventWorld{byType: map[string]event{}, hook: hook.ID}
	// PostgreSQL shows an event once every transaction begun before it has ended.
	for deadline := time.Now().Add(10 * time.Second); len(w.byType) < len(types); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the feed shows events of %d types, want %d", len(w.byType), len(types))
		}
		for _, e := range a.feedAs(t, a.Admin, "") {
			w.byType[e.Type] = e // the last: the keys of the test's accounts came before the endpoint
		}
	}
	// Every event goes out to the endpoint, and fails for good; the receiver answers
	// with what it was sent, which the last error quotes.
	now := time.Now()
	a.settleFeed(t) // a claim, like the feed, takes the events every older transaction's end shows
	for {
		jobs, err := ws.ClaimDeliveries(ctx, claimAt(now))
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			break
		}
		var rs []petstore.AttemptResult
		for _, j := range jobs {
			body, err := httpapi.EventEncoder(petstore.DefaultCurrency)(j.Event)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, petstore.AttemptResult{WebhookID: j.Webhook.ID, DeliveryID: j.Delivery.ID, At: now,
				Status: petstore.DeliveryFailed, ResponseStatus: 500, Error: petstore.AnsweredError(500, string(body))})
		}
		if err := ws.FinishAttempts(ctx, rs); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// delivery finds the endpoint's delivery of event id, as key sees it.
func (w eventWorld) delivery(t *testing.T, a *testAPI, key, id string) delivery {
	t.Helper()
	var ds []delivery
	a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d/deliveries?limit=100", w.hook), Key: key}).expect(200, "").JSON(&ds)
	for _, d := range ds {
		if d.EventID == id {
			return d
		}
	}
	t.Fatalf("endpoint %d has no delivery of %s", w.hook, id)
	return delivery{}
}

// wantLacking checks a 403 insufficient_scope that names scope, in the body and in
// WWW-Authenticate (RFC 6750).
func wantLacking(t *testing.T, what string, res *response, scope string) {
	t.Helper()
	if res.Status != 403 || res.Code() != petstore.EInsufficientScope || !strings.Contains(string(res.Body), scope) {
		t.Errorf("%s: %d %s, want 403 insufficient_scope naming %s", what, res.Status, res.Body, scope)
		return
	}
	if got, want := res.Header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="`+scope+`"`; got != want {
		t.Errorf("%s: WWW-Authenticate %q, want %q", what, got, want)
	}
}

// For every event type: a key with every scope but the one that reads the type's data
// never sees an event of that type in the feed, nor by id, nor by asking the feed for
// the type; cannot subscribe an endpoint to it, alone or through "*", nor add it to an
// endpoint's subscription; and cannot have a delivery of it sent again. Nothing
// changes. A key with events:read, webhooks:manage and that scope does all of it; a
// key with every scope of its role reads every type, as before.
func TestOWASP_Scopes_NoKeyReadsAnEventTypeSideways(t *testing.T) {
	a := newTestAPI(t)
	scopes, types := a.readScopes(t)
	w := newEventWorld(t, a, types)
	catalogue := a.documentScopes(t)
	// The keys belong to a second admin: an account holds at most 25.
	second, _ := a.newKey("scoped-admin@example.com", petstore.Admin)
	lacking, only := map[string]string{}, map[string]string{}
	for _, s := range uniqueValues(scopes) {
		lacking[s] = a.scopedKey(t, second, slices.DeleteFunc(slices.Clone(catalogue), func(x string) bool { return x == s }), time.Time{})
		only[s] = a.scopedKey(t, second, []string{"events:read", "webhooks:manage", s}, time.Time{})
	}
	// For each scope, an endpoint subscribed to a type of another, to add types to.
	others := map[string]webhook{}
	for _, s := range uniqueValues(scopes) {
		i := slices.IndexFunc(types, func(typ string) bool { return scopes[typ] != s })
		var made webhook
		a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: a.Admin,
			Body: `{"url":"https://hooks.example.com/other","events":["` + types[i] + `"]}`}).expect(201, "").JSON(&made)
		others[s] = made
	}

	before := a.state(t)
	for _, typ := range types {
		scope, key := scopes[typ], lacking[scopes[typ]]
		t.Run(typ, func(t *testing.T) {
			e := w.byType[typ]
			feed := a.feedAs(t, key, "")
			if i := slices.IndexFunc(feed, func(x event) bool { return x.Type == typ }); i >= 0 {
				t.Errorf("without %s the feed shows %s", scope, feed[i].Data)
			}
			if len(feed) == 0 {
				t.Errorf("without %s the feed shows nothing of the other types", scope)
			}
			a.do(t, req{Method: "GET", Path: "/v1/events/" + e.ID, Key: key}).expect(404, petstore.ENotFound)
			wantLacking(t, "the feed of "+typ, a.do(t, req{Method: "GET", Path: "/v1/events?type=" + typ, Key: key}), scope)
			wantLacking(t, "an endpoint of "+typ, a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: key,
				Body: `{"url":"https://hooks.example.com/x","events":["` + typ + `"]}`}), scope)
			wantLacking(t, "an endpoint of *", a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: key,
				Body: `{"url":"https://hooks.example.com/x","events":["*"]}`}), scope)
			other := others[scope]
			wantLacking(t, "adding "+typ+" to an endpoint", a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", other.ID), Key: key,
				Body: `{"events":["` + other.Events[0] + `","` + typ + `"]}`}), scope)
			// The endpoint's deliveries name the event, and keep nothing of its data:
			// not even a receiver's echo of it.
			d := w.delivery(t, a, key, e.ID)
			if d.LastError == nil || *d.LastError != "the endpoint answered 500" {
				t.Errorf("without %s the delivery of %s failed with %q", scope, typ, deref(d.LastError))
			}
			wantLacking(t, "sending "+typ+" again", a.do(t, req{Method: "POST",
				Path: path("/v1/webhooks/%d/deliveries/%d/retry", w.hook, d.ID), Key: key}), scope)
		})
	}
	if after := a.state(t); !bytes.Equal(before, after) {
		t.Fatal("a key without an event type's scope changed something")
	}

	for _, typ := range types {
		key := only[scopes[typ]]
		t.Run(typ+" with its scope", func(t *testing.T) {
			e := w.byType[typ]
			if !slices.ContainsFunc(a.feedAs(t, key, ""), func(x event) bool { return x.ID == e.ID }) {
				t.Errorf("with %s the feed does not show %s", scopes[typ], e.ID)
			}
			if len(a.feedAs(t, key, typ)) == 0 {
				t.Errorf("with %s the feed of %s is empty", scopes[typ], typ)
			}
			a.do(t, req{Method: "GET", Path: "/v1/events/" + e.ID, Key: key}).expect(200, "")
			var made webhook
			a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: key,
				Body: `{"url":"https://hooks.example.com/x","events":["` + typ + `"]}`}).expect(201, "").JSON(&made)
			a.do(t, req{Method: "DELETE", Path: path("/v1/webhooks/%d", made.ID), Key: key}).expect(204, "")
			d := w.delivery(t, a, key, e.ID)
			if d.LastError == nil || !strings.Contains(*d.LastError, e.ID) {
				t.Errorf("with %s the delivery of %s failed with %q, want the receiver's answer", scopes[typ], typ, deref(d.LastError))
			}
			a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/deliveries/%d/retry", w.hook, d.ID), Key: key}).expect(202, "")
		})
	}

	// A key limited to scopes that read every type reads them all, and subscribes to
	// them by name; "*" would take the types added later, whose scopes it will never
	// hold.
	everyRead := a.scopedKey(t, second, append(uniqueValues(scopes), "events:read"), time.Time{})
	if got, want := len(a.feedAs(t, everyRead, "")), len(a.feedAs(t, a.Admin, "")); got != want {
		t.Errorf("a key with every read scope sees %d events, an admin key %d", got, want)
	}
	res := a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: everyRead, Body: `{"url":"https://hooks.example.com/x","events":["*"]}`})
	if res.Status != 403 || res.Code() != petstore.EInsufficientScope || !strings.Contains(string(res.Body), "added later") {
		t.Errorf("a limited key's *: %d %s, want 403 insufficient_scope", res.Status, res.Body)
	}
	if got := res.Header.Get("WWW-Authenticate"); got != `Bearer error="insufficient_scope"` {
		t.Errorf("a limited key's *: WWW-Authenticate %q", got)
	}
	var byName webhook
	a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: everyRead,
		Body: map[string]any{"url": "https://hooks.example.com/x", "events": types}}).expect(201, "").JSON(&byName)
	a.do(t, req{Method: "DELETE", Path: path("/v1/webhooks/%d", byName.ID), Key: everyRead}).expect(204, "")

	// A key with every scope of its role reads every type, as it always did.
	seen := map[string]bool{}
	for _, e := range a.feedAs(t, a.Admin, "") {
		seen[e.Type] = true
	}
	for _, typ := range types {
		if !seen[typ] {
			t.Errorf("an admin key with every scope does not see %s", typ)
		}
		a.do(t, req{Method: "GET", Path: "/v1/events/" + w.byType[typ].ID, Key: a.Admin}).expect(200, "")
	}
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

func uniqueValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// A new URL receives the endpoint's pending deliveries, whatever it subscribes to
// now: a key gives it one only when it may read them, or when it disables the
// endpoint in the same change (which fails them). A key with every scope changes it
// as before.
func TestAWebhooksNewURLNeedsTheScopesOfWhatItStillHasToSend(t *testing.T) {
	a := newTestAPI(t)
	ws := a.webhookStore(t)
	ctx := context.Background()
	w := a.webhook(t, "https://hooks.example.com/audit", "order.placed", "api_key.created")
	var k struct{ ID int64 }
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: `{"name":"laptop"}`}).expect(201, "").JSON(&k)
	p := a.pet(t, "Rex", 3)
	a.order(t, a.Customer, p.ID, 1)
	// Both events go out and fail once: pending, a retry due in an hour.
	pending := map[int64]string{} // by delivery id, its event's type
	for deadline := time.Now().Add(10 * time.Second); len(pending) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("claimed %d deliveries, want 2", len(pending))
		}
		jobs, err := ws.ClaimDeliveries(ctx, claimAt(time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			pending[j.Delivery.ID] = string(j.Event.Type)
			r := petstore.AttemptResult{WebhookID: w.ID, DeliveryID: j.Delivery.ID, At: time.Now(), Status: petstore.DeliveryPending,
				NextAttemptAt: time.Now().Add(time.Hour), ResponseStatus: 500, Error: "HTTP 500 from the endpoint"}
			if err := ws.FinishAttempts(ctx, []petstore.AttemptResult{r}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// An admin narrows it to orders: the key event's retry is still pending.
	a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin, Body: `{"events":["order.placed"]}`}).expect(200, "")
	orders := a.scopedKey(t, a.Admin, []string{"orders:read", "webhooks:manage"}, time.Time{})

	res := a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: orders, Body: `{"url":"https://elsewhere.example.com/h"}`})
	wantLacking(t, "a new URL with an api_key.created delivery pending", res, "accounts:read")
	if !strings.Contains(string(res.Body), "pending") {
		t.Errorf("the refusal does not say why: %s", res.Body)
	}
	var got webhook
	a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin}).expect(200, "").JSON(&got)
	if got.URL != w.URL {
		t.Fatalf("a refused change moved the endpoint to %s", got.URL)
	}
	// The same key may still change what sends nothing anywhere new.
	a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: orders, Body: `{"description":"orders"}`}).expect(200, "")
	// Disabled in the same change, the endpoint has nothing left to send.
	a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: orders,
		Body: `{"url":"https://elsewhere.example.com/h","enabled":false}`}).expect(200, "").JSON(&got)
	if got.URL != "https://elsewhere.example.com/h" || got.Enabled {
		t.Fatalf("after the change the endpoint is %+v", got)
	}
	a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: orders, Body: `{"enabled":true}`}).expect(200, "")
	// ...and what failed stays failed for it: the key event is not sent again.
	for id, typ := range pending {
		res := a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/deliveries/%d/retry", w.ID, id), Key: orders})
		if typ == "order.placed" {
			res.expect(202, "")
			continue
		}
		wantLacking(t, "sending the "+typ+" event again", res, "accounts:read")
	}
	// A key with every scope of its role moves it as before.
	a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin,
		Body: `{"url":"https://third.example.com/h","events":["*"]}`}).expect(200, "")
}
