package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
	whsend "github.com/acme-pets/petstore/internal/webhook"
)

// webhook is an endpoint as the API shows it.
type webhook struct {
	ID                      int64      `json:"id"`
	URL                     string     `json:"url"`
	Description             *string    `json:"description"`
	Events                  []string   `json:"events"`
	Enabled                 bool       `json:"enabled"`
	DisabledReason          *string    `json:"disabledReason"`
	FailingSince            *time.Time `json:"failingSince"`
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
	Secret                  *string    `json:"secret"`
	CreatedAt               time.Time  `json:"createdAt"`
}

type delivery struct {
	ID             int64      `json:"id"`
	WebhookID      int64      `json:"webhookId"`
	EventID        string     `json:"eventId"`
	EventType      string     `json:"eventType"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	ResponseStatus *int       `json:"responseStatus"`
	LastError      *string    `json:"lastError"`
}

type event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"createdAt"`
	Data      json.RawMessage `json:"data"`
}

var (
	secretShape  = regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`)
	eventIDShape = regexp.MustCompile(`^evt_[a-z2-7]{26}$`)
)

// webhook adds an endpoint as the admin.
func (a *testAPI) webhook(t testing.TB, url string, events ...string) webhook {
	t.Helper()
	var w webhook
	a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: a.Admin, Body: map[string]any{"url": url, "events": events}}).expect(201, "").JSON(&w)
	return w
}

// testDelivery sends a test event to endpoint id and returns its delivery.
func (a *testAPI) testDelivery(t testing.TB, id int64) delivery {
	t.Helper()
	var d delivery
	a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/test", id), Key: a.Admin}).expect(202, "").JSON(&d)
	return d
}

// events reads the whole feed as the admin (of one type, or all with ""), following
// its links.
func (a *testAPI) events(t *testing.T, typ string) []event {
	t.Helper()
	return a.feedAs(t, a.Admin, typ)
}

// webhookStore is the store under the API, as the delivery loop sees it.
func (a *testAPI) webhookStore(t testing.TB) petstore.WebhookStore {
	t.Helper()
	return a.Store
}

// fail makes the one attempt the store has due for the endpoint fail with an HTTP
// status, as the delivery loop would record it; disableBefore disables the endpoint
// when its failures began before it (zero: never).
func (a *testAPI) fail(t testing.TB, at time.Time, status int, final bool, disableBefore time.Time) int64 {
	t.Helper()
	ws := a.webhookStore(t)
	ctx := context.Background()
	a.settleFeed(t) // a claim, like the feed, takes the events every older transaction's end shows
	jobs, err := ws.ClaimDeliveries(ctx, claimAt(at))
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claimed %d deliveries (%v), want 1", len(jobs), err)
	}
	r := petstore.AttemptResult{WebhookID: jobs[0].Webhook.ID, DeliveryID: jobs[0].Delivery.ID, At: at, Status: petstore.DeliveryPending, NextAttemptAt: at.Add(time.Hour),
		ResponseStatus: status, Error: fmt.Sprintf("HTTP %d from the endpoint", status), DisableIfFailingBefore: disableBefore}
	if final {
		r.Status = petstore.DeliveryFailed
	}
	if err := ws.FinishAttempts(ctx, []petstore.AttemptResult{r}); err != nil {
		t.Fatal(err)
	}
	return jobs[0].Delivery.ID
}

// claimAt are the options of a claim at at, as the dispatcher makes it.
func claimAt(at time.Time) petstore.ClaimOptions {
	return petstore.ClaimOptions{Now: at, Lease: time.Minute, Max: 10, Window: petstore.DefaultDeliveryWindow}
}

// allowPrivate accepts endpoints on private and loopback addresses, as
// --webhooks-allow-private does.
func allowPrivate(c *httpapi.Config) {
	c.CheckWebhookURL = whsend.NewSender(whsend.SenderOptions{AllowPrivate: true}).CheckURL
}

// Every webhook and event operation is an admin's: a customer gets 403 and no key
// 401, before anything is read, and an admin gets the documented success.
func TestWebhookAndEventOperationsAreForAdmins(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	p := a.pet(t, "Rex", 3)
	a.order(t, a.Customer, p.ID, 1)
	evt := a.events(t, "order.placed")[0]
	w := a.webhook(t, "https://hooks.example.com/a", "*")
	d := a.testDelivery(t, w.ID)
	tests := []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"listWebhooks", "GET", "/v1/webhooks", nil, 200},
		{"createWebhook", "POST", "/v1/webhooks", `{"url":"https://hooks.example.com/b","events":["order.placed"]}`, 201},
		{"getWebhook", "GET", path("/v1/webhooks/%d", w.ID), nil, 200},
		{"updateWebhook", "PATCH", path("/v1/webhooks/%d", w.ID), `{"description":"Desk"}`, 200},
		{"rotateWebhookSecret", "POST", path("/v1/webhooks/%d/rotate-secret", w.ID), nil, 200},
		{"sendTestEvent", "POST", path("/v1/webhooks/%d/test", w.ID), nil, 202},
		{"listDeliveries", "GET", path("/v1/webhooks/%d/deliveries", w.ID), nil, 200},
		{"retryDelivery", "POST", path("/v1/webhooks/%d/deliveries/%d/retry", w.ID, d.ID), nil, 202},
		{"listEvents", "GET", "/v1/events", nil, 200},
		{"getEvent", "GET", "/v1/events/" + evt.ID, nil, 200},
		{"deleteWebhook", "DELETE", path("/v1/webhooks/%d", w.ID), nil, 204},
	}
	for _, tt := range tests {
		t.Run(tt.name+" refuses no key with 401 and a customer with 403, and serves an admin", func(t *testing.T) {
			a.do(t, req{Method: tt.method, Path: tt.path, Body: tt.body}).expect(401, "unauthorized")
			a.do(t, req{Method: tt.method, Path: tt.path, Body: tt.body, Key: a.Customer}).expect(403, "forbidden")
			a.do(t, req{Method: tt.method, Path: tt.path, Body: tt.body, Key: a.Admin}).expect(tt.status, "")
		})
	}
}

func TestCreateWebhook(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	var w webhook
	res := a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: a.Admin,
		Body: `{"url":"https://hooks.example.com/petstore","events":["order.placed","pet.sold_out"],"description":"Order desk"}`}).expect(201, "")
	res.JSON(&w)
	if got, want := res.Header.Get("Location"), path("/v1/webhooks/%d", w.ID); got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	if w.Secret == nil || !secretShape.MatchString(*w.Secret) {
		t.Fatalf("the secret is %v, want whsec_ and 43 base64url characters", w.Secret)
	}
	if !w.Enabled || !slices.Equal(w.Events, []string{"order.placed", "pet.sold_out"}) || w.Description == nil || *w.Description != "Order desk" ||
		w.PreviousSecretExpiresAt != nil || w.DisabledReason != nil || w.FailingSince != nil {
		t.Errorf("created %+v", w)
	}
	t.Run("the secret is the one the store signs with, and is never shown again", func(t *testing.T) {
		stored, err := a.webhookStore(t).Webhook(context.Background(), w.ID)
		if err != nil || stored.Secret != *w.Secret {
			t.Fatalf("the store holds %q (%v), the answer said %q", stored.Secret, err, *w.Secret)
		}
		for _, p := range []string{path("/v1/webhooks/%d", w.ID), "/v1/webhooks"} {
			if body := a.do(t, req{Method: "GET", Path: p, Key: a.Admin}).expect(200, "").Body; strings.Contains(string(body), "whsec_") {
				t.Errorf("GET %s shows the secret: %s", p, body)
			}
		}
	})
	t.Run("two endpoints get two secrets", func(t *testing.T) {
		other := a.webhook(t, "https://hooks.example.com/petstore", "*")
		if *other.Secret == *w.Secret {
			t.Fatal("two endpoints share a secret")
		}
	})
	t.Run("every type by name is accepted, and reads back in the document's order", func(t *testing.T) {
		want := []string{"order.placed", "order.completed", "order.cancelled", "pet.sold_out", "pet.restocked", "pet.status_changed",
			"inventory.updated", "api_key.created", "api_key.revoked"}
		shuffled := append([]string{want[8]}, want[:8]...)
		got := a.webhook(t, "https://hooks.example.com/every", shuffled...)
		if !slices.Equal(got.Events, want) {
			t.Fatalf("events %v, want %v", got.Events, want)
		}
	})
	t.Run("* is every type", func(t *testing.T) {
		all := a.webhook(t, "https://hooks.example.com/all", "*")
		if !slices.Equal(all.Events, []string{"*"}) {
			t.Fatalf("events %v, want [*]", all.Events)
		}
	})
}

// A URL deliveries may not go to is refused when it is set, with a problem that says
// why; --webhooks-allow-private admits private and loopback addresses, never
// link-local ones.
// allowHint ends the refusal of an address the operator could allow.
const allowHint = " (private and loopback addresses need the server's --webhooks-allow-private)"

func TestWebhookURLsAreChecked(t *testing.T) {
	strict := newTestAPI(t)
	strict.webhookStore(t)
	lenient := newTestAPI(t, allowPrivate)
	long := "https://hooks.example.com/" + strings.Repeat("a", 2048)
	tests := []struct {
		name, url         string
		strict, lenient   int
		problem           string // of the strict refusal
		lenientProblemToo bool
	}{
		{"a public https URL", "https://hooks.example.com/petstore", 201, 201, "", false},
		{"an https URL with a port and a query", "https://hooks.example.com:8443/in?shop=7", 201, 201, "", false},
		{"plain http", "http://hooks.example.com/petstore", 400, 201, "must be an https:// URL", false},
		{"a loopback address", "https://127.0.0.1:8443/hook", 400, 201, "must not be a private, loopback or link-local address" + allowHint, false},
		{"a loopback address over http", "http://127.0.0.1:8080/hook", 400, 201, "must be an https:// URL" + allowHint, false},
		{"a private address", "https://10.1.2.3/hook", 400, 201, "must not be a private, loopback or link-local address" + allowHint, false},
		{"IPv6 loopback", "https://[::1]/hook", 400, 201, "must not be a private, loopback or link-local address" + allowHint, false},
		{"the cloud metadata address", "https://169.254.169.254/latest/meta-data", 400, 400, "must not be a private, loopback or link-local address", true},
		{"a link-local address over http", "http://169.254.169.254/", 400, 400, "must be an https:// URL", false},
		{"a user name and password", "https://user:pass@hooks.example.com/", 400, 400, "must not hold a user name or password", true},
		{"a fragment", "https://hooks.example.com/#top", 400, 400, "must not have a fragment", true},
		{"a relative URL", "/webhooks", 400, 400, "must be an absolute URL", true},
		{"no host name", "https://:443/", 400, 400, "must be an absolute URL", true},
		{"an empty URL", "", 400, 400, "must be an absolute URL", true},
		{"another scheme", "ftp://hooks.example.com/", 400, 400, "must be an https:// URL", false},
		{"over 2048 characters", long, 400, 400, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"url": tt.url, "events": []string{"*"}}
			res := strict.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: strict.Admin, Body: body})
			if res.Status != tt.strict {
				t.Fatalf("answered %d %s, want %d", res.Status, res.Body, tt.strict)
			}
			if tt.strict == 400 {
				wantProblem(t, res, "url", tt.problem)
			}
			lres := lenient.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: lenient.Admin, Body: body})
			if lres.Status != tt.lenient {
				t.Fatalf("with private addresses allowed, answered %d %s, want %d", lres.Status, lres.Body, tt.lenient)
			}
			if tt.lenientProblemToo {
				wantProblem(t, lres, "url", tt.problem)
			}
		})
	}
	t.Run("a PATCH is checked as a creation is", func(t *testing.T) {
		w := strict.webhook(t, "https://hooks.example.com/petstore", "*")
		res := strict.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: strict.Admin, Body: `{"url":"https://192.168.1.10/hook"}`}).expect(400, "validation_failed")
		wantProblem(t, res, "url", "must not be a private, loopback or link-local address"+allowHint)
		var got webhook
		strict.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d", w.ID), Key: strict.Admin}).expect(200, "").JSON(&got)
		if got.URL != w.URL {
			t.Fatalf("the refused URL was kept: %s", got.URL)
		}
	})
}

// wantProblem fails the test unless the refusal names field (and, when problem is
// not empty, says problem about it).
func wantProblem(t *testing.T, res *response, field, problem string) {
	t.Helper()
	var e struct {
		Code    string
		Details []struct{ Field, Problem string }
	}
	res.JSON(&e)
	for _, d := range e.Details {
		if d.Field == field && (problem == "" || d.Problem == problem) {
			return
		}
	}
	t.Errorf("refusal %s does not say %q about %s", res.Body, problem, field)
}

func TestWebhookBodiesAreValidated(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	w := a.webhook(t, "https://hooks.example.com/petstore", "*")
	ten := `["order.placed","order.completed","order.cancelled","pet.sold_out","pet.restocked","pet.status_changed","inventory.updated",` +
		`"api_key.created","api_key.revoked","*"]`
	tests := []struct {
		name, body, field string
	}{
		// The generated decoder refuses a missing, null or mistyped member as a whole
		// body that does not match (no detail), as it does for every operation.
		{"no URL", `{"events":["*"]}`, ""},
		{"no events", `{"url":"https://hooks.example.com/"}`, ""},
		{"no event type", `{"url":"https://hooks.example.com/","events":[]}`, "events"},
		{"an unknown event type", `{"url":"https://hooks.example.com/","events":["order.shipped"]}`, "events"},
		{"the test event, which nobody subscribes to", `{"url":"https://hooks.example.com/","events":["webhook.test"]}`, "events"},
		{"a type twice", `{"url":"https://hooks.example.com/","events":["order.placed","order.placed"]}`, "events"},
		{"* beside a type", `{"url":"https://hooks.example.com/","events":["*","order.placed"]}`, "events"},
		{"ten types", `{"url":"https://hooks.example.com/","events":` + ten + `}`, "events"},
		{"events that are not a list", `{"url":"https://hooks.example.com/","events":"*"}`, ""},
		{"a description over 500 characters", `{"url":"https://hooks.example.com/","events":["*"],"description":"` + strings.Repeat("d", 501) + `"}`, "description"},
		{"a field the endpoint does not have", `{"url":"https://hooks.example.com/","events":["*"],"enabled":false}`, "enabled"},
	}
	for _, tt := range tests {
		t.Run("creating with "+tt.name+" is refused", func(t *testing.T) {
			res := a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: a.Admin, Body: tt.body}).expect(400, "validation_failed")
			if tt.field != "" && !strings.Contains(string(res.Body), `"field":"`+tt.field) {
				t.Errorf("the refusal does not name %s: %s", tt.field, res.Body)
			}
		})
	}
	patches := []struct{ name, body, field string }{
		{"no event type", `{"events":[]}`, "events"},
		{"an unknown event type", `{"events":["pet.adopted"]}`, "events"},
		{"a type twice", `{"events":["*","*"]}`, "events"},
		{"* beside a type", `{"events":["order.placed","*"]}`, "events"},
		{"a null URL", `{"url":null}`, ""},
		{"null events", `{"events":null}`, ""},
		{"a null enabled", `{"enabled":null}`, ""},
		{"a secret", `{"secret":"whsec_mine"}`, "secret"},
		{"a description over 500 characters", `{"description":"` + strings.Repeat("d", 501) + `"}`, "description"},
	}
	for _, tt := range patches {
		t.Run("a patch with "+tt.name+" is refused", func(t *testing.T) {
			res := a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin, Body: tt.body}).expect(400, "validation_failed")
			if tt.field != "" && !strings.Contains(string(res.Body), `"field":"`+tt.field) {
				t.Errorf("the refusal does not name %s: %s", tt.field, res.Body)
			}
		})
	}
	ids := []struct{ name, path string }{
		{"a webhook id that is not a number", "/v1/webhooks/abc"},
		{"a webhook id of 0", "/v1/webhooks/0"},
		{"a delivery id that is not a number", path("/v1/webhooks/%d/deliveries/x/retry", w.ID)},
		{"an event id of another shape", "/v1/events/evt_UPPER0000000000000000000000"},
		{"an event id too short", "/v1/events/evt_abc"},
		{"a message id for an event id", "/v1/events/msg_m9s346q3d25vt4f5v37e3s3e"},
	}
	for _, tt := range ids {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			method := "GET"
			if strings.HasSuffix(tt.path, "/retry") {
				method = "POST"
			}
			a.do(t, req{Method: method, Path: tt.path, Key: a.Admin}).expect(400, "validation_failed")
		})
	}
}

func TestWebhooksThatDoNotExist(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	w := a.webhook(t, "https://hooks.example.com/petstore", "*")
	d := a.testDelivery(t, w.ID)
	other := a.webhook(t, "https://hooks.example.com/other", "*")
	for _, r := range []req{
		{Method: "GET", Path: "/v1/webhooks/999999"},
		{Method: "PATCH", Path: "/v1/webhooks/999999", Body: `{"enabled":false}`},
		{Method: "DELETE", Path: "/v1/webhooks/999999"},
		{Method: "POST", Path: "/v1/webhooks/999999/rotate-secret"},
		{Method: "POST", Path: "/v1/webhooks/999999/test"},
		{Method: "GET", Path: "/v1/webhooks/999999/deliveries"},
		{Method: "POST", Path: path("/v1/webhooks/%d/deliveries/999999/retry", w.ID)},
		// A delivery of another endpoint is not this endpoint's.
		{Method: "POST", Path: path("/v1/webhooks/%d/deliveries/%d/retry", other.ID, d.ID)},
		{Method: "GET", Path: "/v1/events/evt_aaaaaaaaaaaaaaaaaaaaaaaaaa"},
		// A test event is not in the feed.
		{Method: "GET", Path: "/v1/events/" + d.EventID},
	} {
		r.Key = a.Admin
		t.Run(r.Method+" "+r.Path+" is 404", func(t *testing.T) {
			a.do(t, r).expect(404, "not_found")
		})
	}
}

func TestListWebhooksPage(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	var made []int64
	for i := range 5 {
		made = append(made, a.webhook(t, fmt.Sprintf("https://hooks.example.com/%d", i), "*").ID)
	}
	var seen []int64
	next := "/v1/webhooks?limit=2"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatal("more pages than 5 endpoints in twos")
		}
		res := a.do(t, req{Method: "GET", Path: next, Key: a.Admin}).expect(200, "")
		var page []webhook
		res.JSON(&page)
		for _, w := range page {
			seen = append(seen, w.ID)
		}
		next = nextPath(t, res.Header.Get("Link"))
	}
	if !slices.Equal(seen, made) {
		t.Fatalf("walked %v, want %v", seen, made)
	}
}

func TestUpdateWebhook(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	w := a.webhook(t, "https://hooks.example.com/petstore", "order.placed")
	patch := func(t *testing.T, body, contentType string) webhook {
		t.Helper()
		var out webhook
		a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin, Body: body,
			Header: map[string]string{"Content-Type": contentType}}).expect(200, "").JSON(&out)
		return out
	}
	t.Run("fields left out keep their value", func(t *testing.T) {
		got := patch(t, `{"description":"Order desk"}`, "application/merge-patch+json")
		if got.URL != w.URL || !slices.Equal(got.Events, w.Events) || !got.Enabled || got.Description == nil || *got.Description != "Order desk" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("url and events change, in either media type", func(t *testing.T) {
		got := patch(t, `{"url":"https://hooks.example.com/v2","events":["pet.restocked","pet.sold_out"]}`, "application/json")
		if got.URL != "https://hooks.example.com/v2" || !slices.Equal(got.Events, []string{"pet.sold_out", "pet.restocked"}) {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("a null description removes it", func(t *testing.T) {
		if got := patch(t, `{"description":null}`, "application/merge-patch+json"); got.Description != nil {
			t.Fatalf("description %q is still there", *got.Description)
		}
	})
	t.Run("an admin disables it without a reason, and enables it again", func(t *testing.T) {
		if got := patch(t, `{"enabled":false}`, "application/merge-patch+json"); got.Enabled || got.DisabledReason != nil {
			t.Fatalf("got %+v", got)
		}
		if got := patch(t, `{"enabled":true}`, "application/merge-patch+json"); !got.Enabled {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("the secret does not change", func(t *testing.T) {
		stored, err := a.webhookStore(t).Webhook(context.Background(), w.ID)
		if err != nil || stored.Secret != *w.Secret {
			t.Fatalf("the secret changed to %q (%v)", stored.Secret, err)
		}
	})
}

// An endpoint the service disabled says why and since when it failed; enabling it
// again clears both.
func TestReenablingAWebhookClearsWhyItWasDisabled(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	w := a.webhook(t, "https://hooks.example.com/petstore", "*")
	a.testDelivery(t, w.ID)
	now := time.Now().UTC().Truncate(time.Second)
	a.fail(t, now, 503, false, now.Add(time.Hour))
	var got webhook
	a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin}).expect(200, "").JSON(&got)
	if got.Enabled || got.DisabledReason == nil || !strings.Contains(*got.DisabledReason, "HTTP 503") || got.FailingSince == nil || !got.FailingSince.Equal(now) {
		t.Fatalf("after failing past the limit: %+v", got)
	}
	var enabled webhook // a fresh value: decoding leaves what the JSON lacks as it was
	a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin, Body: `{"enabled":true}`}).expect(200, "").JSON(&enabled)
	if !enabled.Enabled || enabled.DisabledReason != nil || enabled.FailingSince != nil {
		t.Fatalf("enabled again: %+v", enabled)
	}
}

func TestDeleteWebhook(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	w := a.webhook(t, "https://hooks.example.com/petstore", "*")
	a.testDelivery(t, w.ID)
	a.do(t, req{Method: "DELETE", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin}).expect(204, "")
	a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin}).expect(404, "not_found")
	a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d/deliveries", w.ID), Key: a.Admin}).expect(404, "not_found")
	a.do(t, req{Method: "DELETE", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin}).expect(404, "not_found")
}

// A rotation answers a new secret; the old one keeps signing for 24 hours, which the
// endpoint shows, and then stops.
func TestRotateWebhookSecret(t *testing.T) {
	var (
		mu  sync.Mutex
		now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a := newTestAPI(t, func(c *httpapi.Config) { c.Now = clock })
	ws := a.webhookStore(t)
	w := a.webhook(t, "https://hooks.example.com/petstore", "*")

	var rotated webhook
	a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/rotate-secret", w.ID), Key: a.Admin}).expect(200, "").JSON(&rotated)
	if rotated.Secret == nil || !secretShape.MatchString(*rotated.Secret) || *rotated.Secret == *w.Secret {
		t.Fatalf("rotated secret %v (was %q)", rotated.Secret, *w.Secret)
	}
	wantExpiry := now.Add(24 * time.Hour)
	if rotated.PreviousSecretExpiresAt == nil || !rotated.PreviousSecretExpiresAt.Equal(wantExpiry) {
		t.Fatalf("previousSecretExpiresAt %v, want %v", rotated.PreviousSecretExpiresAt, wantExpiry)
	}
	var shown webhook
	a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin}).expect(200, "").JSON(&shown)
	if shown.Secret != nil || shown.PreviousSecretExpiresAt == nil || !shown.PreviousSecretExpiresAt.Equal(wantExpiry) {
		t.Fatalf("the endpoint shows %+v", shown)
	}
	stored, err := ws.Webhook(context.Background(), w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.Secrets(now.Add(time.Hour)); !slices.Equal(got, []string{*rotated.Secret, *w.Secret}) {
		t.Errorf("an hour later the secrets that sign are %q, want the new and the old", got)
	}
	if got := stored.Secrets(wantExpiry); !slices.Equal(got, []string{*rotated.Secret}) {
		t.Errorf("24 hours later the secrets that sign are %q, want the new one only", got)
	}

	mu.Lock()
	now = wantExpiry
	mu.Unlock()
	var after webhook // a fresh value: decoding leaves what the JSON lacks as it was
	a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin}).expect(200, "").JSON(&after)
	if after.PreviousSecretExpiresAt != nil {
		t.Errorf("after the overlap the endpoint still shows previousSecretExpiresAt %v", after.PreviousSecretExpiresAt)
	}

	t.Run("a second rotation keeps only the secret it replaces", func(t *testing.T) {
		var again webhook
		a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/rotate-secret", w.ID), Key: a.Admin}).expect(200, "").JSON(&again)
		a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/rotate-secret", w.ID), Key: a.Admin}).expect(200, "").JSON(&again)
		stored, err := ws.Webhook(context.Background(), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := stored.Secrets(now); len(got) != 2 || got[0] != *again.Secret || got[1] == *rotated.Secret {
			t.Fatalf("secrets %q after two rotations", got)
		}
	})

	t.Run("a rotation with no overlap revokes every other secret at once", func(t *testing.T) {
		var leaked, revoked webhook
		a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/rotate-secret", w.ID), Key: a.Admin}).expect(200, "").JSON(&leaked)
		a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/rotate-secret", w.ID), Key: a.Admin, Body: map[string]any{"overlapSeconds": 0}}).expect(200, "").JSON(&revoked)
		if revoked.PreviousSecretExpiresAt != nil || revoked.Secret == nil || *revoked.Secret == *leaked.Secret {
			t.Fatalf("the revoking rotation answered %+v", revoked)
		}
		stored, err := ws.Webhook(context.Background(), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := stored.Secrets(now); !slices.Equal(got, []string{*revoked.Secret}) {
			t.Errorf("after a rotation with no overlap the secrets that sign are %q, want the new one only", got)
		}
		var shown webhook
		a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin}).expect(200, "").JSON(&shown)
		if shown.PreviousSecretExpiresAt != nil {
			t.Errorf("the endpoint shows previousSecretExpiresAt %v after a rotation with no overlap", shown.PreviousSecretExpiresAt)
		}
	})

	t.Run("an overlap of its own, and the bounds", func(t *testing.T) {
		var short webhook
		a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/rotate-secret", w.ID), Key: a.Admin, Body: map[string]any{"overlapSeconds": 600}}).expect(200, "").JSON(&short)
		if want := now.Add(10 * time.Minute); short.PreviousSecretExpiresAt == nil || !short.PreviousSecretExpiresAt.Equal(want) {
			t.Errorf("an overlap of 600 s expires at %v, want %v", short.PreviousSecretExpiresAt, want)
		}
		var empty webhook
		a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/rotate-secret", w.ID), Key: a.Admin, Body: map[string]any{}}).expect(200, "").JSON(&empty)
		if want := now.Add(24 * time.Hour); empty.PreviousSecretExpiresAt == nil || !empty.PreviousSecretExpiresAt.Equal(want) {
			t.Errorf("an empty body's overlap expires at %v, want %v", empty.PreviousSecretExpiresAt, want)
		}
		for _, body := range []any{map[string]any{"overlapSeconds": -1}, map[string]any{"overlapSeconds": 86401}, map[string]any{"overlapSeconds": "0s"}, map[string]any{"overlap": 0}} {
			before, err := ws.Webhook(context.Background(), w.ID)
			if err != nil {
				t.Fatal(err)
			}
			a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/rotate-secret", w.ID), Key: a.Admin, Body: body}).expect(400, "")
			after, err := ws.Webhook(context.Background(), w.ID)
			if err != nil {
				t.Fatal(err)
			}
			if after.Secret != before.Secret {
				t.Errorf("a refused rotation (%v) changed the secret", body)
			}
		}
	})
}

// A test event makes one pending delivery to the endpoint, listed with its others,
// and carries the endpoint without its secret; the feed does not show it.
func TestSendTestEvent(t *testing.T) {
	a := newTestAPI(t)
	ws := a.webhookStore(t)
	w := a.webhook(t, "https://hooks.example.com/petstore", "order.placed")
	a.webhook(t, "https://hooks.example.com/other", "*")
	d := a.testDelivery(t, w.ID)
	if d.WebhookID != w.ID || d.EventType != "webhook.test" || d.Status != "pending" || d.Attempts != 0 || d.NextAttemptAt == nil || !eventIDShape.MatchString(d.EventID) {
		t.Fatalf("the test delivery is %+v", d)
	}
	var listed []delivery
	a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d/deliveries", w.ID), Key: a.Admin}).expect(200, "").JSON(&listed)
	if len(listed) != 1 || listed[0].ID != d.ID {
		t.Fatalf("the endpoint's deliveries are %+v, want the test one", listed)
	}
	jobs, err := ws.ClaimDeliveries(context.Background(), claimAt(time.Now().Add(time.Second)))
	if err != nil || len(jobs) != 1 || jobs[0].Webhook.ID != w.ID {
		t.Fatalf("claimed %+v (%v), want the one test delivery to endpoint %d", jobs, err, w.ID)
	}
	body, err := httpapi.EventEncoder(petstore.DefaultCurrency)(jobs[0].Event)
	if err != nil {
		t.Fatal(err)
	}
	var e event
	if err := json.Unmarshal(body, &e); err != nil || e.ID != d.EventID || e.Type != "webhook.test" {
		t.Fatalf("the delivery's body is %s (%v)", body, err)
	}
	var shown webhook
	if err := json.Unmarshal(e.Data, &shown); err != nil || shown.ID != w.ID || shown.URL != w.URL || strings.Contains(string(body), "whsec_") {
		t.Fatalf("the test event's data is %s", e.Data)
	}
	for _, fe := range a.events(t, "") {
		if fe.ID == d.EventID {
			t.Fatal("the test event is in the feed")
		}
	}
}

func TestRetryDelivery(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	w := a.webhook(t, "https://hooks.example.com/petstore", "*")
	d := a.testDelivery(t, w.ID)
	retry := func(t *testing.T, id int64) *response {
		t.Helper()
		return a.do(t, req{Method: "POST", Path: path("/v1/webhooks/%d/deliveries/%d/retry", w.ID, id), Key: a.Admin})
	}
	t.Run("a pending delivery is left as it is", func(t *testing.T) {
		var got delivery
		retry(t, d.ID).expect(202, "").JSON(&got)
		if got.Status != "pending" || got.Attempts != 0 || got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(*d.NextAttemptAt) {
			t.Fatalf("got %+v, want %+v", got, d)
		}
	})
	now := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	a.fail(t, now, 500, true, time.Time{})
	var failed []delivery
	a.do(t, req{Method: "GET", Path: path("/v1/webhooks/%d/deliveries", w.ID), Key: a.Admin}).expect(200, "").JSON(&failed)
	if len(failed) != 1 || failed[0].Status != "failed" || failed[0].Attempts != 1 || failed[0].NextAttemptAt != nil ||
		failed[0].ResponseStatus == nil || *failed[0].ResponseStatus != 500 || failed[0].LastError == nil {
		t.Fatalf("after a final failure: %+v", failed)
	}
	t.Run("a failed delivery is pending again, due now", func(t *testing.T) {
		var got delivery
		retry(t, d.ID).expect(202, "").JSON(&got)
		if got.Status != "pending" || got.Attempts != 0 || got.NextAttemptAt == nil || time.Since(*got.NextAttemptAt) > time.Minute {
			t.Fatalf("got %+v", got)
		}
		jobs, err := a.webhookStore(t).ClaimDeliveries(context.Background(), claimAt(time.Now().Add(time.Second)))
		if err != nil || len(jobs) != 1 || jobs[0].Delivery.ID != d.ID {
			t.Fatalf("claimed %+v (%v), want the retried delivery", jobs, err)
		}
	})
	t.Run("a delivery of a disabled endpoint is a conflict", func(t *testing.T) {
		a.do(t, req{Method: "PATCH", Path: path("/v1/webhooks/%d", w.ID), Key: a.Admin, Body: `{"enabled":false}`}).expect(200, "")
		retry(t, d.ID).expect(409, "conflict")
	})
}

func TestListDeliveriesPage(t *testing.T) {
	a := newTestAPI(t)
	a.webhookStore(t)
	w := a.webhook(t, "https://hooks.example.com/petstore", "*")
	var made []int64
	for range 3 {
		made = append(made, a.testDelivery(t, w.ID).ID)
	}
	var seen []int64
	for next := path("/v1/webhooks/%d/deliveries?limit=2", w.ID); next != ""; {
		res := a.do(t, req{Method: "GET", Path: next, Key: a.Admin}).expect(200, "")
		var page []delivery
		res.JSON(&page)
		for _, d := range page {
			seen = append(seen, d.ID)
		}
		next = nextPath(t, res.Header.Get("Link"))
	}
	if !slices.Equal(seen, made) {
		t.Fatalf("walked %v, want %v", seen, made)
	}
}

// The feed shows what happened, oldest first, each event as GET /events/{id} shows it
// and as EncodeEvent writes the delivery; the type filter holds across pages.
func TestEventFeed(t *testing.T) {
	a := newTestAPI(t)
	ws := a.webhookStore(t)
	p := a.pet(t, "Rex", 2) // inventory.updated, pet.restocked
	o := a.order(t, a.Customer, p.ID, 2)
	var (
		types []string
		all   = a.events(t, "")
	)
	for _, e := range all {
		types = append(types, e.Type)
	}
	if len(all) < 4 || !slices.Contains(types, "order.placed") || !slices.Contains(types, "pet.sold_out") || !slices.Contains(types, "pet.restocked") {
		t.Fatalf("the feed has %v", types)
	}
	if slices.Index(types, "pet.restocked") > slices.Index(types, "order.placed") || slices.Index(types, "order.placed") > slices.Index(types, "pet.sold_out") {
		t.Errorf("the feed is not oldest first: %v", types)
	}
	for i := 1; i < len(all); i++ {
		if all[i].CreatedAt.Before(all[i-1].CreatedAt) {
			t.Errorf("event %d is older than the one before it", i)
		}
	}

	t.Run("an order event holds the order as the API shows it", func(t *testing.T) {
		placed := a.events(t, "order.placed")
		if len(placed) != 1 {
			t.Fatalf("%d order.placed events", len(placed))
		}
		var got order
		if err := json.Unmarshal(placed[0].Data, &got); err != nil || !reflect.DeepEqual(got, o) {
			t.Fatalf("data %s, want the order %+v", placed[0].Data, o)
		}
	})
	t.Run("an event reads the same alone, in the feed and as a delivery body", func(t *testing.T) {
		for _, e := range all {
			res := a.do(t, req{Method: "GET", Path: "/v1/events/" + e.ID, Key: a.Admin}).expect(200, "")
			stored, err := ws.Event(context.Background(), e.ID)
			if err != nil {
				t.Fatal(err)
			}
			body, err := httpapi.EventEncoder(petstore.DefaultCurrency)(stored)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != string(res.Body) {
				t.Errorf("EncodeEvent wrote\n%s\nGET /events/%s answered\n%s", body, e.ID, res.Body)
			}
		}
	})
	t.Run("the type filter holds on every page", func(t *testing.T) {
		for range 3 {
			a.setStock(t, p.ID, 5+len(types))
			types = append(types, "")
		}
		// On PostgreSQL the feed shows an event once every transaction begun before it
		// has ended: other packages' tests share the database.
		a.settleFeed(t)
		next, n := "/v1/events?type=inventory.updated&limit=2", 0
		for next != "" {
			res := a.do(t, req{Method: "GET", Path: next, Key: a.Admin}).expect(200, "")
			var page []event
			res.JSON(&page)
			for _, e := range page {
				if e.Type != "inventory.updated" {
					t.Fatalf("a %s event under type=inventory.updated", e.Type)
				}
				n++
			}
			next = nextPath(t, res.Header.Get("Link"))
			if next != "" && !strings.Contains(next, "type=inventory.updated") {
				t.Fatalf("the next link %q lost the filter", next)
			}
		}
		if n < 5 {
			t.Fatalf("walked %d inventory.updated events, want at least 5", n)
		}
	})
	t.Run("a poller keeps the last link it was given and gets each event once", func(t *testing.T) {
		// Read to the end: the last page with events links on; the page after it is
		// empty, without a link, and is where the poller reads again.
		next, last := "/v1/events?type=order.placed&limit=100", ""
		for next != "" {
			res := a.do(t, req{Method: "GET", Path: next, Key: a.Admin}).expect(200, "")
			var page []event
			res.JSON(&page)
			link := nextPath(t, res.Header.Get("Link"))
			if len(page) > 0 && link == "" {
				t.Fatalf("a feed page with %d events has no next link", len(page))
			}
			if len(page) == 0 && link != "" {
				t.Fatalf("an empty feed page links to %s", link)
			}
			last, next = next, link
		}
		again := a.order(t, a.Customer, a.pet(t, "Polly", 1).ID, 1)
		// PostgreSQL shows an event once every transaction begun before it has ended,
		// which other tests' transactions may delay.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			var page []event
			a.do(t, req{Method: "GET", Path: last, Key: a.Admin}).expect(200, "").JSON(&page)
			if len(page) == 0 && time.Now().Before(deadline) {
				continue
			}
			var got order
			if len(page) != 1 || json.Unmarshal(page[0].Data, &got) != nil || got.ID != again.ID {
				t.Fatalf("polling %s gave %+v, want the one order.placed of order %d", last, page, again.ID)
			}
			break
		}
	})
	t.Run("an unknown type is refused", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/events?type=webhook.test", Key: a.Admin}).expect(400, "validation_failed")
		a.do(t, req{Method: "GET", Path: "/v1/events?type=order.shipped", Key: a.Admin}).expect(400, "validation_failed")
	})
}

func TestEncodeEvent(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 30, 0, time.UTC)
	price := int64(1999)
	ship := time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		e    petstore.Event
		want string
	}{
		{"an order", petstore.Event{ID: "evt_aaaaaaaaaaaaaaaaaaaaaaaaaa", Type: petstore.OrderPlaced, CreatedAt: at,
			Order: &petstore.Order{ID: 10, PetID: 1, Quantity: 2, AccountID: 2, ShipDate: &ship, Status: petstore.Placed, CreatedAt: at,
				UnitPrice: &price, PetName: "Rex", CategoryID: 3, Currency: "EUR"}},
			`{"id":"evt_aaaaaaaaaaaaaaaaaaaaaaaaaa","type":"order.placed","createdAt":"2026-11-21T12:00:30Z","data":{"id":10,"petId":1,"quantity":2,"shipDate":"2026-12-24T10:00:00Z","complete":false,"accountId":2,"status":"placed","createdAt":"2026-11-21T12:00:30Z","unitPrice":1999,"total":3998,"currency":"EUR","petName":"Rex"}}`},
		{"an order cancelled, stored before orders kept their currency", petstore.Event{ID: "evt_aaaaaaaaaaaaaaaaaaaaaaaaab", Type: petstore.OrderCancelled, CreatedAt: at,
			Order: &petstore.Order{ID: 11, PetID: 1, Quantity: 1, AccountID: 2, Status: petstore.Cancelled, CreatedAt: at, CancelledAt: &at}},
			`{"id":"evt_aaaaaaaaaaaaaaaaaaaaaaaaab","type":"order.cancelled","createdAt":"2026-11-21T12:00:30Z","data":{"id":11,"petId":1,"quantity":1,"complete":false,"accountId":2,"status":"cancelled","createdAt":"2026-11-21T12:00:30Z","cancelledAt":"2026-11-21T12:00:30Z","currency":"EUR"}}`},
		{"a pet", petstore.Event{ID: "evt_bbbbbbbbbbbbbbbbbbbbbbbbbb", Type: petstore.PetStatusChanged, CreatedAt: at,
			Pet: &petstore.Pet{ID: 7, Name: "Rex", CategoryID: 3, Status: petstore.Sold, Stock: 0, Price: &price}},
			`{"id":"evt_bbbbbbbbbbbbbbbbbbbbbbbbbb","type":"pet.status_changed","createdAt":"2026-11-21T12:00:30Z","data":{"id":7,"name":"Rex","categoryId":3,"status":"sold","stock":0,"price":1999,"currency":"EUR","tags":[],"photos":[]}}`},
		{"a pet with a description and tags", petstore.Event{ID: "evt_bbbbbbbbbbbbbbbbbbbbbbbbbc", Type: petstore.PetStatusChanged, CreatedAt: at,
			Pet: &petstore.Pet{ID: 7, Name: "Rex", CategoryID: 3, Status: petstore.Pending, Description: "Calm.\nSmall.", Tags: []string{"calm", "Small"}}},
			`{"id":"evt_bbbbbbbbbbbbbbbbbbbbbbbbbc","type":"pet.status_changed","createdAt":"2026-11-21T12:00:30Z","data":{"id":7,"name":"Rex","categoryId":3,"status":"pending","stock":0,"description":"Calm.\nSmall.","tags":["calm","Small"],"photos":[]}}`},
		{"an inventory item", petstore.Event{ID: "evt_cccccccccccccccccccccccccc", Type: petstore.PetSoldOut, CreatedAt: at.In(time.FixedZone("CET", 3600)),
			Inventory: &petstore.InventoryItem{PetID: 7, Quantity: 0, Status: petstore.Pending}},
			`{"id":"evt_cccccccccccccccccccccccccc","type":"pet.sold_out","createdAt":"2026-11-21T12:00:30Z","data":{"petId":7,"quantity":0,"status":"pending"}}`},
		{"an endpoint, without its secrets", petstore.Event{ID: "evt_dddddddddddddddddddddddddd", Type: petstore.WebhookTest, CreatedAt: at,
			Webhook: &petstore.Webhook{ID: 4, URL: "https://hooks.example.com/", Events: petstore.MaskAll, Enabled: true, Secret: "whsec_x", CreatedAt: at, UpdatedAt: at}},
			`{"id":"evt_dddddddddddddddddddddddddd","type":"webhook.test","createdAt":"2026-11-21T12:00:30Z","data":{"id":4,"url":"https://hooks.example.com/","events":["*"],"enabled":true,"createdAt":"2026-11-21T12:00:30Z","updatedAt":"2026-11-21T12:00:30Z"}}`},
		{"a key made with a key", petstore.Event{ID: "evt_eeeeeeeeeeeeeeeeeeeeeeeeee", Type: petstore.APIKeyCreated, CreatedAt: at,
			Key: &petstore.KeyChange{Key: petstore.APIKey{ID: 3, AccountID: 2, Name: "shop", Prefix: "psk_k7hq2vqa", CreatedAt: at,
				Scopes: []string{"pets:read"}, ExpiresAt: &ship}, AccountEmail: "ada@example.com", By: petstore.Actor{AccountID: 2, KeyID: 1}}},
			`{"id":"evt_eeeeeeeeeeeeeeeeeeeeeeeeee","type":"api_key.created","createdAt":"2026-11-21T12:00:30Z","data":{"id":3,"name":"shop","prefix":"psk_k7hq2vqa","createdAt":"2026-11-21T12:00:30Z","scopes":["pets:read"],"expiresAt":"2026-12-24T10:00:00Z","accountId":2,"accountEmail":"ada@example.com","actor":{"type":"key","accountId":2,"keyId":1}}}`},
		{"a key revoked by the operator", petstore.Event{ID: "evt_ffffffffffffffffffffffffff", Type: petstore.APIKeyRevoked, CreatedAt: at,
			Key: &petstore.KeyChange{Key: petstore.APIKey{ID: 3, AccountID: 2, Name: "shop", Prefix: "psk_k7hq2vqa", CreatedAt: at, LastUsedAt: &at},
				AccountEmail: "ada@example.com"}},
			`{"id":"evt_ffffffffffffffffffffffffff","type":"api_key.revoked","createdAt":"2026-11-21T12:00:30Z","data":{"id":3,"name":"shop","prefix":"psk_k7hq2vqa","createdAt":"2026-11-21T12:00:30Z","lastUsedAt":"2026-11-21T12:00:30Z","accountId":2,"accountEmail":"ada@example.com","actor":{"type":"operator"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := httpapi.EventEncoder(petstore.DefaultCurrency)(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	t.Run("an event without a resource is an error", func(t *testing.T) {
		if _, err := httpapi.EventEncoder(petstore.DefaultCurrency)(petstore.Event{ID: "evt_x", Type: petstore.OrderPlaced}); err == nil {
			t.Fatal("encoded an event that holds nothing")
		}
	})
}
