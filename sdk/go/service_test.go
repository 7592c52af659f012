package petstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

// These tests run against the real service that TestMain starts.

// recorder is a transport to the real service that notes every answer it carries.
type recorder struct {
	mu      sync.Mutex
	answers []answered
}

type answered struct {
	method, path string
	status       int
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.answers = append(r.answers, answered{req.Method, req.URL.Path, res.StatusCode})
		r.mu.Unlock()
	}
	return res, err
}

// succeeded reports whether the service answered op with a 2xx.
func (r *recorder) succeeded(op operation) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.answers {
		if a.status >= 200 && a.status <= 299 && op.answers(a.method, a.path) {
			return true
		}
	}
	return false
}

// service returns a client of the real service whose requests go through rec; key ""
// makes calls without credentials.
func service(t *testing.T, rec *recorder, key string) *petstore.Client {
	t.Helper()
	opts := []petstore.Option{
		petstore.WithHTTPClient(&http.Client{Transport: rec, Timeout: 30 * time.Second}),
		petstore.WithDeprecationHandler(func(petstore.Deprecation) {}),
	}
	if key != "" {
		opts = append(opts, petstore.WithAPIKey(key))
	}
	c, err := petstore.NewClient(os.Getenv("PETSTORE_URL"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// must returns v, or fails the test on err: must(client.CreatePet(ctx, pet))(t).
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// receiver is a webhook endpoint for the service to deliver to: it answers 204 and keeps
// every delivery as it arrived.
type receiver struct {
	URL        string
	mu         sync.Mutex
	deliveries []delivery
}

// delivery is one POST the receiver took.
type delivery struct {
	eventID   string // Petstore-Event-Id
	signature string // Petstore-Signature
	body      []byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.deliveries = append(r.deliveries, delivery{req.Header.Get(petstore.EventIDHeader), req.Header.Get(petstore.SignatureHeader), body})
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hooks"
	return r
}

// wait returns the n-th delivery (from 1) of the event eventID, waiting for it up to 30 s.
func (r *receiver) wait(t *testing.T, eventID string, n int) delivery {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r.mu.Lock()
		seen := 0
		for _, d := range r.deliveries {
			if d.eventID == eventID {
				if seen++; seen == n {
					r.mu.Unlock()
					return d
				}
			}
		}
		r.mu.Unlock()
	}
	t.Fatalf("delivery %d of event %s did not arrive in 30 s", n, eventID)
	return delivery{}
}

// waitForType returns the first delivery of an event of type typ.
func (r *receiver) waitForType(t *testing.T, typ petstore.EventType) delivery {
	t.Helper()
	return r.waitForData(t, typ, 0)
}

// waitForData returns the first delivery of an event of type typ whose resource has
// the id dataID (any resource for 0). Deliveries go out concurrently: the events of
// two orders may arrive in either order.
func (r *receiver) waitForData(t *testing.T, typ petstore.EventType, dataID int64) delivery {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r.mu.Lock()
		for _, d := range r.deliveries {
			var e struct {
				Type string
				Data struct{ ID int64 }
			}
			if json.Unmarshal(d.body, &e) == nil && e.Type == string(typ) && (dataID == 0 || e.Data.ID == dataID) {
				r.mu.Unlock()
				return d
			}
		}
		r.mu.Unlock()
	}
	t.Fatalf("no %s event of %d arrived in 30 s", typ, dataID)
	return delivery{}
}

// Every operation of the document is made against the real service, and answered with
// success: a story of an account, its keys, a category and a pet, stock and orders, a
// webhook endpoint and the feed. An operation the document adds fails the check at the
// end until this story makes it.
func TestEveryOperationAgainstTheService(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	admin := service(t, rec, os.Getenv("PETSTORE_ADMIN_KEY"))
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)

	// An account, its keys (made with the password) and a message.
	email, password := "every-operation+"+suffix+"@example.com", "correct horse battery staple"
	account := must(service(t, rec, "").CreateAccount(ctx, petstore.NewAccount{Email: email, Password: password}))(t)
	keys := service(t, rec, "").WithPassword(email, password)
	created := must(keys.CreateAPIKey(ctx, petstore.NewAPIKey{Name: "every operation"}))(t)
	customer := service(t, rec, created.Key)
	if me := must(customer.GetCurrentAccount(ctx))(t); me.ID != account.ID || me.Role != petstore.RoleCustomer {
		t.Errorf("current account = %+v, want %d, a customer", me, account.ID)
	}
	msg := must(customer.SendMessage(ctx, petstore.NewMessage{Message: "Hello, pet store!"}))(t)
	if got := must(customer.GetMessage(ctx, msg.ID))(t); got.Message != "Hello, pet store!" {
		t.Errorf("message = %+v", got)
	}
	spare := must(keys.CreateAPIKey(ctx, petstore.NewAPIKey{Name: "spare"}))(t)
	if err := customer.RevokeAPIKey(ctx, spare.ID); err != nil {
		t.Fatal(err)
	}
	var keyIDs []int64
	for key, err := range keys.ListAPIKeys(ctx, nil) {
		keyIDs = append(keyIDs, must(key, err)(t).ID)
	}
	if !slices.Equal(keyIDs, []int64{created.ID}) {
		t.Errorf("keys = %v, want only %d (%d is revoked)", keyIDs, created.ID, spare.ID)
	}

	// Staff look up who is behind the account by its id; an id of no account is left out.
	var found []*petstore.Account
	for a, err := range admin.ListAccounts(ctx, &petstore.ListAccountsOptions{IDs: []int64{account.ID, 1 << 62}}) {
		found = append(found, must(a, err)(t))
	}
	if len(found) != 1 || found[0].ID != account.ID || found[0].Email != email || found[0].Role != petstore.RoleCustomer ||
		!found[0].CreatedAt.Equal(account.CreatedAt) {
		t.Errorf("accounts %d and 1<<62 = %+v, want only %+v", account.ID, found, account)
	}

	// Staff disable the account, which stops its key, and enable it again.
	off := must(admin.UpdateAccount(ctx, account.ID, petstore.AccountPatch{Disabled: petstore.Ptr(true)}))(t)
	if off.ID != account.ID || !off.Disabled || off.Role != petstore.RoleCustomer {
		t.Errorf("disabled = %+v", off)
	}
	var disabledErr *petstore.Error
	if _, err := customer.GetCurrentAccount(ctx); !errors.As(err, &disabledErr) || disabledErr.Code != petstore.CodeUnauthorized {
		t.Errorf("the disabled account's key: err = %v, want unauthorized", err)
	}
	if on := must(admin.UpdateAccount(ctx, account.ID, petstore.AccountPatch{Disabled: petstore.Ptr(false)}))(t); on.Disabled {
		t.Errorf("enabled = %+v", on)
	}

	// Staff invite a person, who accepts with a password and signs in with it.
	staffEmail := "staff+" + suffix + "@example.com"
	inv := must(admin.CreateInvitation(ctx, petstore.NewInvitation{Email: staffEmail, Role: petstore.RoleAdmin}))(t)
	token, ok := strings.CutPrefix(inv.URL[strings.Index(inv.URL, "?"):], "?token=")
	if inv.Role != petstore.RoleAdmin || !inv.Mailed || !ok || !strings.HasPrefix(token, "psi_") {
		t.Fatalf("invitation = %+v", inv)
	}
	anyone := service(t, rec, "")
	accepted := must(anyone.AcceptInvitation(ctx, token, "staff horse battery"))(t)
	if accepted.Account.Email != staffEmail || accepted.Account.Role != petstore.RoleAdmin || !strings.HasPrefix(accepted.Key.Key, "psk_") ||
		time.Until(accepted.Key.ExpiresAt) > 12*time.Hour {
		t.Errorf("accepted = %+v", accepted)
	}
	var invalid *petstore.Error
	if _, err := anyone.AcceptInvitation(ctx, token, "staff horse battery"); !errors.As(err, &invalid) || invalid.Code != petstore.CodeInvalidToken {
		t.Errorf("a used invitation: err = %v, want invalid_token", err)
	}
	signedIn := must(anyone.CreateSession(ctx, petstore.NewSession{Email: staffEmail, Password: "staff horse battery",
		Scopes: []petstore.Scope{petstore.ScopeOrdersRead}}))(t)
	if !slices.Equal(signedIn.Key.Scopes, []petstore.Scope{petstore.ScopeOrdersRead}) || signedIn.Account.ID != accepted.Account.ID {
		t.Errorf("signed in = %+v", signedIn)
	}

	// A forgotten password: the link comes by mail, sets a new one and signs in.
	if msg := must(anyone.RequestPasswordReset(ctx, staffEmail))(t); msg == "" {
		t.Error("the reset request answered no message")
	}
	reset := must(anyone.ResetPassword(ctx, mailedToken(t, staffEmail, "psr_"), "a new staff horse battery"))(t)
	if reset.Account.ID != accepted.Account.ID {
		t.Errorf("reset = %+v", reset)
	}
	if _, err := anyone.CreateSession(ctx, petstore.NewSession{Email: staffEmail, Password: "staff horse battery"}); err == nil {
		t.Error("the old password still signs in after a reset")
	}

	// A webhook endpoint, before the orders whose events it is sent.
	hooks := newReceiver(t)
	hook := must(admin.CreateWebhook(ctx, petstore.NewWebhook{
		URL: hooks.URL, Events: []petstore.EventType{petstore.EventTypeOrderPlaced}, Description: "every operation",
	}))(t)
	if !strings.HasPrefix(hook.Secret, "whsec_") || !hook.Enabled || hook.Description != "every operation" ||
		!slices.Equal(hook.Events, []petstore.EventType{petstore.EventTypeOrderPlaced}) {
		t.Errorf("created endpoint = %+v", hook)
	}

	// A category and a pet.
	cat := must(admin.CreateCategory(ctx, petstore.NewCategory{Name: "Every op " + suffix, Description: "For the test."}))(t)
	cat = must(admin.ReplaceCategory(ctx, cat.ID, petstore.NewCategory{Name: "Every operation " + suffix}))(t)
	if got := must(customer.GetCategory(ctx, cat.ID))(t); got.Name != "Every operation "+suffix || got.Description != "" {
		t.Errorf("category = %+v, want the replacement", got)
	}
	listed := false
	for c, err := range customer.ListCategories(ctx, &petstore.ListOptions{Limit: 100}) {
		listed = listed || must(c, err)(t).ID == cat.ID
	}
	if !listed {
		t.Errorf("category %d is not listed", cat.ID)
	}
	pet := must(admin.CreatePet(ctx, petstore.NewPet{Name: "Tester", CategoryID: cat.ID, Price: petstore.Ptr[int64](1500)}))(t)
	// A replacement without a price keeps it; a patch changes it.
	if got := must(admin.ReplacePet(ctx, pet.ID, petstore.NewPet{Name: "Tester II", CategoryID: cat.ID}))(t); got.Price == nil || *got.Price != 1500 {
		t.Errorf("replaced pet = %+v, want the price 1500 kept", got)
	}
	must(admin.UpdatePet(ctx, pet.ID, petstore.PetPatch{Name: petstore.Ptr("Tester III"), RemovePrice: true}))(t)
	if got := must(customer.GetPet(ctx, pet.ID))(t); got.Price != nil {
		t.Errorf("pet = %+v, want its price removed", got)
	}
	must(admin.UpdatePet(ctx, pet.ID, petstore.PetPatch{Price: petstore.Ptr[int64](1999)}))(t)
	if got := must(customer.GetPet(ctx, pet.ID))(t); got.Name != "Tester III" || got.Status != petstore.PetStatusAvailable ||
		got.Price == nil || *got.Price != 1999 || got.Currency != "EUR" {
		t.Errorf("pet = %+v, want Tester III, available, 1999 EUR", got)
	}
	// A description and tags: kept by a replacement that leaves them out, found by
	// tag in any case, removed by a patch.
	tagged := must(admin.UpdatePet(ctx, pet.ID, petstore.PetPatch{Description: petstore.Ptr("Calm."), Tags: []string{"Calm", "tester-" + suffix}}))(t)
	if tagged.Description != "Calm." || !slices.Equal(tagged.Tags, []string{"Calm", "tester-" + suffix}) {
		t.Errorf("tagged pet = %+v", tagged)
	}
	if got := must(admin.ReplacePet(ctx, pet.ID, petstore.NewPet{Name: "Tester III", CategoryID: cat.ID}))(t); got.Description != "Calm." || len(got.Tags) != 2 {
		t.Errorf("replaced pet = %+v, want its description and tags kept", got)
	}
	var byTag []int64
	for p, err := range customer.ListPets(ctx, &petstore.ListPetsOptions{Tags: []string{"CALM", "Tester-" + suffix}}) {
		byTag = append(byTag, must(p, err)(t).ID)
	}
	if !slices.Equal(byTag, []int64{pet.ID}) {
		t.Errorf("pets by tag = %v, want %d", byTag, pet.ID)
	}
	if got := must(admin.UpdatePet(ctx, pet.ID, petstore.PetPatch{Description: petstore.Ptr(""), Tags: []string{}}))(t); got.Description != "" || len(got.Tags) != 0 || got.Tags == nil {
		t.Errorf("pet = %+v, want no description and an empty list of tags", got)
	}
	var names []string
	for p, err := range customer.ListPets(ctx, &petstore.ListPetsOptions{IDs: []int64{pet.ID}}) {
		names = append(names, must(p, err)(t).Name)
	}
	if !slices.Equal(names, []string{"Tester III"}) {
		t.Errorf("pets = %q", names)
	}

	// Photos: two uploaded, the thumb fetched without a key, swapped, one removed.
	photoStory(t, admin, anyone, pet.ID)

	// Stock, and orders: one completed, one cancelled.
	must(admin.SetInventory(ctx, pet.ID, petstore.InventoryUpdate{Quantity: 3}))(t)
	order := must(customer.PlaceOrder(ctx, petstore.NewOrder{PetID: pet.ID, Quantity: 1}))(t)
	second := must(customer.PlaceOrder(ctx, petstore.NewOrder{PetID: pet.ID, Quantity: 1}))(t)
	if got := must(customer.GetOrder(ctx, order.ID))(t); got.AccountID != account.ID || got.Quantity != 1 ||
		got.Status != petstore.OrderStatusPlaced || got.CreatedAt.IsZero() || got.PetName != "Tester III" ||
		got.UnitPrice == nil || *got.UnitPrice != 1999 || got.Total == nil || *got.Total != 1999 || got.Currency != "EUR" {
		t.Errorf("order = %+v, want the customer's placed order of 1 Tester III at 1999 EUR", got)
	}
	orderIDs := func(opts *petstore.ListOrdersOptions) []int64 {
		var ids []int64
		for o, err := range customer.ListOrders(ctx, opts) {
			ids = append(ids, must(o, err)(t).ID)
		}
		return ids
	}
	if got := orderIDs(nil); !slices.Equal(got, []int64{second.ID, order.ID}) {
		t.Errorf("the customer's orders = %v, want %d and %d, newest first", got, second.ID, order.ID)
	}
	if got := orderIDs(&petstore.ListOrdersOptions{Sort: petstore.OrderSortOldest}); !slices.Equal(got, []int64{order.ID, second.ID}) {
		t.Errorf("the customer's orders, oldest first = %v, want %d and %d", got, order.ID, second.ID)
	}
	if got := orderIDs(&petstore.ListOrdersOptions{CreatedAfter: time.Now().Add(time.Hour)}); len(got) != 0 {
		t.Errorf("the customer's orders placed after an hour from now = %v, want none", got)
	}
	// A new price applies to later orders only.
	must(admin.UpdatePet(ctx, pet.ID, petstore.PetPatch{Price: petstore.Ptr[int64](2500)}))(t)
	if got := must(admin.UpdateOrder(ctx, order.ID, petstore.OrderUpdate{Complete: petstore.Ptr(true)}))(t); !got.Complete ||
		got.Status != petstore.OrderStatusCompleted || got.CompletedAt.IsZero() || *got.UnitPrice != 1999 {
		t.Errorf("order = %+v, want it completed at its price of 1999", got)
	}
	// Cancelling keeps the order, and cancelling it again is no error.
	for range 2 {
		if err := customer.CancelOrder(ctx, second.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got := must(customer.GetOrder(ctx, second.ID))(t); got.Status != petstore.OrderStatusCancelled || got.CancelledAt.IsZero() {
		t.Errorf("cancelled order = %+v, want it readable, cancelled", got)
	}
	if got := orderIDs(&petstore.ListOrdersOptions{Status: petstore.OrderStatusCancelled}); !slices.Equal(got, []int64{second.ID}) {
		t.Errorf("the customer's cancelled orders = %v, want %d", got, second.ID)
	}

	// The sales of the day, by pet: the completed order counts, the cancelled one apart.
	today := time.Now().UTC()
	report := must(admin.GetSalesReport(ctx, &petstore.SalesReportOptions{From: today, To: today, GroupBy: petstore.SalesByPet, Limit: 1000}))(t)
	want := petstore.SalesGroup{PetID: pet.ID, PetName: "Tester III", SalesFigures: petstore.SalesFigures{
		Orders: 1, Units: 1, Revenue: 1999, CancelledOrders: 1, CancelledUnits: 1, CancelledRevenue: 1999,
	}}
	if report.Currency != "EUR" || report.GroupBy != petstore.SalesByPet || !slices.Contains(report.Groups, want) {
		t.Errorf("sales report = %+v, want a group %+v", report, want)
	}
	if item := must(customer.GetInventory(ctx, pet.ID))(t); item.Quantity != 2 {
		t.Errorf("stock = %d, want 2 (3, one sold, one cancelled)", item.Quantity)
	}
	for item, err := range customer.ListInventory(ctx, &petstore.ListInventoryOptions{IDs: []int64{pet.ID}}) {
		if must(item, err)(t).Quantity != 2 {
			t.Errorf("listed stock = %+v, want 2", item)
		}
	}

	// The endpoint: the order's event, a test event, its deliveries, a retry.
	placed := hooks.waitForData(t, petstore.EventTypeOrderPlaced, order.ID)
	event := must(petstore.ConstructEvent(placed.body, placed.signature, hook.Secret))(t)
	if event.Order == nil || !reflect.DeepEqual(event.Order, order) {
		t.Errorf("order.placed = %+v with %+v, want %+v", event, event.Order, order)
	}
	if got := must(admin.GetWebhook(ctx, hook.ID))(t); got.URL != hooks.URL || !got.Enabled {
		t.Errorf("endpoint = %+v", got)
	}
	listed = false
	for h, err := range admin.ListWebhooks(ctx, nil) {
		listed = listed || must(h, err)(t).ID == hook.ID
	}
	if !listed {
		t.Errorf("endpoint %d is not listed", hook.ID)
	}
	updated := must(admin.UpdateWebhook(ctx, hook.ID, petstore.WebhookPatch{
		Events: []petstore.EventType{petstore.EventTypeAll}, Description: petstore.Ptr(""),
	}))(t)
	if !slices.Equal(updated.Events, []petstore.EventType{petstore.EventTypeAll}) || updated.Description != "" {
		t.Errorf("updated endpoint = %+v, want every event and no description", updated)
	}
	test := must(admin.SendTestEvent(ctx, hook.ID))(t)
	if test.EventType != petstore.EventTypeWebhookTest || test.WebhookID != hook.ID {
		t.Errorf("test delivery = %+v", test)
	}
	tested := hooks.wait(t, test.EventID, 1)
	event = must(petstore.ConstructEvent(tested.body, tested.signature, hook.Secret))(t)
	if event.Type != petstore.EventTypeWebhookTest || event.Webhook == nil || event.Webhook.ID != hook.ID {
		t.Errorf("test event = %+v, want webhook.test of endpoint %d", event, hook.ID)
	}
	waitForStatus(t, admin, hook.ID, test.ID, petstore.DeliveryStatusSucceeded)
	if retried := must(admin.RetryDelivery(ctx, hook.ID, test.ID))(t); retried.Status != petstore.DeliveryStatusPending || retried.Attempts != 0 {
		t.Errorf("retried delivery = %+v, want pending, no attempts", retried)
	}
	hooks.wait(t, test.EventID, 2)
	rotated := must(admin.RotateWebhookSecret(ctx, hook.ID, petstore.SecretRotation{}))(t)
	if rotated.Secret == hook.Secret || rotated.PreviousSecretExpiresAt.Before(time.Now().Add(23*time.Hour)) {
		t.Errorf("rotated endpoint = %+v, want a new secret, the old one for 24 hours", rotated)
	}

	// The feed holds the order's event, as the endpoint was sent it.
	var fed *petstore.Event
	for deadline := time.Now().Add(10 * time.Second); fed == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for e, err := range admin.ListEvents(ctx, &petstore.ListEventsOptions{Type: petstore.EventTypeOrderPlaced, Limit: 100}) {
			if must(e, err)(t).Order.ID == order.ID {
				fed = e
			}
		}
	}
	if fed == nil {
		t.Fatalf("order %d's order.placed is not in the feed", order.ID)
	}
	if got := must(admin.GetEvent(ctx, fed.ID))(t); got.Type != petstore.EventTypeOrderPlaced || !reflect.DeepEqual(got.Order, fed.Order) {
		t.Errorf("event = %+v, want %+v", got, fed)
	}
	// The live stream, resumed after the first order's event: the second order's
	// comes next (of this story's orders; other tests may place theirs between).
	sctx, stopStream := context.WithTimeout(ctx, 20*time.Second)
	var streamed *petstore.Event
	for e, err := range admin.StreamEvents(sctx, &petstore.StreamEventsOptions{Type: petstore.EventTypeOrderPlaced, LastEventID: fed.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Order != nil && e.Order.ID == second.ID {
			streamed = e
			break
		}
		if e.Order != nil && e.Order.ID == order.ID {
			t.Errorf("the stream resumed after %s sent it again", fed.ID)
		}
	}
	stopStream()
	if streamed == nil {
		t.Errorf("the stream resumed after order %d's event did not send order %d's", order.ID, second.ID)
	}

	// Removing what the story made.
	if err := admin.DeleteWebhook(ctx, hook.ID); err != nil {
		t.Fatal(err)
	}
	var apiErr *petstore.Error
	if _, err := admin.GetWebhook(ctx, hook.ID); !errors.As(err, &apiErr) || apiErr.Code != petstore.CodeNotFound {
		t.Errorf("the deleted endpoint: err = %v, want not_found", err)
	}
	if err := admin.DeletePet(ctx, pet.ID); err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteCategory(ctx, cat.ID); err != nil {
		t.Fatal(err)
	}

	for _, op := range documentOperations(t) {
		if !rec.succeeded(op) {
			t.Errorf("%s (%s %s) was not answered 2xx here: make it in this story", op.ID, op.Method, op.Path)
		}
	}
}

// waitForStatus waits up to 30 s for the delivery to have status.
func waitForStatus(t *testing.T, c *petstore.Client, webhookID, deliveryID int64, status petstore.DeliveryStatus) {
	t.Helper()
	var last *petstore.Delivery
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for d, err := range c.ListDeliveries(context.Background(), webhookID, nil) {
			if must(d, err)(t).ID == deliveryID {
				last = d
			}
		}
		if last != nil && last.Status == status {
			return
		}
	}
	t.Fatalf("delivery %d of endpoint %d = %s, want %s", deliveryID, webhookID, fmt.Sprint(last), status)
}

// The real service's deliveries pass ConstructEvent with the endpoint's secret and with
// no other: a test event and a store event; during a rotation's overlap, with the old
// secret and with the new; after a rotation that revokes at once, only with the newest.
func TestConstructEventTakesTheServicesDeliveries(t *testing.T) {
	ctx := context.Background()
	admin := service(t, &recorder{}, os.Getenv("PETSTORE_ADMIN_KEY"))
	customer := service(t, &recorder{}, os.Getenv("PETSTORE_API_KEY"))
	hooks := newReceiver(t)
	hook := must(admin.CreateWebhook(ctx, petstore.NewWebhook{URL: hooks.URL, Events: []petstore.EventType{petstore.EventTypeAll}}))(t)
	t.Cleanup(func() { _ = admin.DeleteWebhook(ctx, hook.ID) })

	test := must(admin.SendTestEvent(ctx, hook.ID))(t)
	d := hooks.wait(t, test.EventID, 1)
	event := must(petstore.ConstructEvent(d.body, d.signature, hook.Secret))(t)
	if event.ID != test.EventID || event.Type != petstore.EventTypeWebhookTest || event.Webhook == nil || event.Webhook.ID != hook.ID {
		t.Errorf("test event = %+v, want %s, webhook.test of endpoint %d", event, test.EventID, hook.ID)
	}
	if _, err := petstore.ConstructEvent(d.body, d.signature, "whsec_someone_elses"); !errors.Is(err, petstore.ErrSignatureMismatch) {
		t.Errorf("another secret: err = %v, want ErrSignatureMismatch", err)
	}
	if _, err := petstore.ConstructEvent(append(d.body, ' '), d.signature, hook.Secret); !errors.Is(err, petstore.ErrSignatureMismatch) {
		t.Errorf("a body with a space added: err = %v, want ErrSignatureMismatch", err)
	}
	replay := petstore.WebhookVerifier{Secret: hook.Secret, Now: func() time.Time { return time.Now().Add(10 * time.Minute) }}
	if _, err := replay.ConstructEvent(d.body, d.signature); !errors.Is(err, petstore.ErrTimestampOutOfTolerance) {
		t.Errorf("replayed ten minutes later: err = %v, want ErrTimestampOutOfTolerance", err)
	}

	// An event of the store: an order of the last one in stock.
	cat := must(admin.CreateCategory(ctx, petstore.NewCategory{Name: "Deliveries " + strconv.FormatInt(time.Now().UnixNano(), 36)}))(t)
	pet := must(admin.CreatePet(ctx, petstore.NewPet{Name: "Signed", CategoryID: cat.ID, Price: petstore.Ptr[int64](500)}))(t)
	must(admin.SetInventory(ctx, pet.ID, petstore.InventoryUpdate{Quantity: 1}))(t)
	order := must(customer.PlaceOrder(ctx, petstore.NewOrder{PetID: pet.ID, Quantity: 1}))(t)
	t.Cleanup(func() {
		_ = customer.CancelOrder(ctx, order.ID)
		_ = admin.DeletePet(ctx, pet.ID)
		_ = admin.DeleteCategory(ctx, cat.ID)
	})
	d = hooks.waitForType(t, petstore.EventTypeOrderPlaced)
	event = must(petstore.ConstructEvent(d.body, d.signature, hook.Secret))(t)
	if event.Order == nil || !reflect.DeepEqual(event.Order, order) {
		t.Errorf("order.placed = %+v with %+v, want %+v", event, event.Order, order)
	}
	d = hooks.waitForType(t, petstore.EventTypePetSoldOut)
	event = must(petstore.ConstructEvent(d.body, d.signature, hook.Secret))(t)
	if event.Inventory == nil || event.Inventory.PetID != pet.ID || event.Inventory.Quantity != 0 {
		t.Errorf("pet.sold_out = %+v with %+v, want pet %d at 0", event, event.Inventory, pet.ID)
	}

	// A rotation with the default overlap: two v1, either secret verifies.
	rotated := must(admin.RotateWebhookSecret(ctx, hook.ID, petstore.SecretRotation{}))(t)
	test = must(admin.SendTestEvent(ctx, hook.ID))(t)
	d = hooks.wait(t, test.EventID, 1)
	if n := strings.Count(d.signature, "v1="); n != 2 {
		t.Errorf("during the overlap, %q has %d v1, want 2", d.signature, n)
	}
	for name, secret := range map[string]string{"old": hook.Secret, "new": rotated.Secret} {
		if _, err := petstore.ConstructEvent(d.body, d.signature, secret); err != nil {
			t.Errorf("during the overlap, the %s secret: %v", name, err)
		}
	}

	// A rotation that revokes at once: only the newest secret verifies.
	revoked := must(admin.RotateWebhookSecret(ctx, hook.ID, petstore.SecretRotation{Overlap: petstore.Ptr(time.Duration(0))}))(t)
	if !revoked.PreviousSecretExpiresAt.IsZero() {
		t.Errorf("PreviousSecretExpiresAt = %v after a rotation without overlap", revoked.PreviousSecretExpiresAt)
	}
	test = must(admin.SendTestEvent(ctx, hook.ID))(t)
	d = hooks.wait(t, test.EventID, 1)
	if _, err := petstore.ConstructEvent(d.body, d.signature, revoked.Secret); err != nil {
		t.Errorf("the newest secret: %v", err)
	}
	for name, secret := range map[string]string{"first": hook.Secret, "revoked": rotated.Secret} {
		if _, err := petstore.ConstructEvent(d.body, d.signature, secret); !errors.Is(err, petstore.ErrSignatureMismatch) {
			t.Errorf("the %s secret after the revocation: err = %v, want ErrSignatureMismatch", name, err)
		}
	}
}

// Against the real service: only an admin looks up accounts, a page at a time; a
// customer's key is refused with forbidden, an admin's key without accounts:read with
// insufficient_scope.
func TestOnlyAdminsLookUpAccounts(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	admin := service(t, rec, os.Getenv("PETSTORE_ADMIN_KEY"))
	customer := service(t, rec, os.Getenv("PETSTORE_API_KEY"))
	me := must(customer.GetCurrentAccount(ctx))(t)

	var pages [][]int64
	for page, err := range admin.ListAccountsPages(ctx, &petstore.ListAccountsOptions{Limit: 1}) {
		page = must(page, err)(t)
		var ids []int64
		for _, a := range page.Items {
			ids = append(ids, a.ID)
		}
		pages = append(pages, ids)
		if len(pages) == 2 {
			break
		}
	}
	if len(pages) != 2 || len(pages[0]) != 1 || len(pages[1]) != 1 || pages[0][0] >= pages[1][0] {
		t.Errorf("the first two pages of one account = %v, want one account each, by id", pages)
	}

	// By role: the staff are admins, and the customer's account is among the customers only.
	staff := must(collect(admin.ListAccounts(ctx, &petstore.ListAccountsOptions{Role: petstore.RoleAdmin})))(t)
	customers := must(collect(admin.ListAccounts(ctx, &petstore.ListAccountsOptions{Role: petstore.RoleCustomer, IDs: []int64{me.ID}})))(t)
	if len(staff) == 0 || slices.ContainsFunc(staff, func(a *petstore.Account) bool { return a.Role != petstore.RoleAdmin || a.ID == me.ID }) {
		t.Errorf("role=admin = %+v, want admins only, not %d", staff, me.ID)
	}
	if len(customers) != 1 || customers[0].ID != me.ID {
		t.Errorf("role=customer and ids=%d = %+v, want that account", me.ID, customers)
	}

	_, err := collect(customer.ListAccounts(ctx, &petstore.ListAccountsOptions{IDs: []int64{me.ID}}))
	var apiErr *petstore.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden || apiErr.Code != petstore.CodeForbidden {
		t.Errorf("a customer's key: err = %v, want 403 forbidden", err)
	}

	narrow := must(admin.CreateAPIKey(ctx, petstore.NewAPIKey{Name: "no accounts", Scopes: []petstore.Scope{petstore.ScopePetsRead}}))(t)
	t.Cleanup(func() { _ = admin.RevokeAPIKey(ctx, narrow.ID) })
	_, err = collect(service(t, rec, narrow.Key).ListAccounts(ctx, &petstore.ListAccountsOptions{IDs: []int64{me.ID}}))
	if !errors.As(err, &apiErr) || apiErr.Code != petstore.CodeInsufficientScope || apiErr.Scope != petstore.ScopeAccountsRead {
		t.Errorf("an admin's key with pets:read: err = %v, want insufficient_scope naming accounts:read", err)
	}
}
