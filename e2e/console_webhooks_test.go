package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/webhook"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The Webhooks and Event feed screens of the console (issue 33): scenarios of
// TestConsole. The suite's server is started with --webhooks-allow-private, so that its
// deliveries may go to a receiver of the test's on 127.0.0.1.

// receiver is a webhook endpoint of the test's: a real HTTP server that answers 500
// until it is made healthy, then 204, and keeps what it was sent, each delivery checked
// against the secret it holds (the one the console showed).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	healthy  bool
	secret   []byte
	received []received
}

type received struct {
	eventID, eventType string
	status             int
	verified           bool   // signed with the receiver's secret
	signature          string // Petstore-Signature
	body               []byte
}

func startTestReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var event struct{ ID, Type string }
		_ = json.Unmarshal(body, &event)
		r.mu.Lock()
		defer r.mu.Unlock()
		got := received{eventID: event.ID, eventType: event.Type, status: http.StatusInternalServerError, signature: req.Header.Get("Petstore-Signature"), body: body}
		got.verified = r.secret != nil && webhook.Verify(got.signature, body, r.secret, time.Now(), 5*time.Minute) == nil
		if r.healthy {
			got.status = http.StatusNoContent
		}
		r.received = append(r.received, got)
		w.WriteHeader(got.status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) set(healthy bool, secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.healthy, r.secret = healthy, []byte(secret)
}

// await waits until the receiver was sent an event that ok accepts, and returns it.
func (r *receiver) await(t *testing.T, what string, ok func(received) bool) received {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		r.mu.Lock()
		i := slices.IndexFunc(r.received, ok)
		var got received
		if i >= 0 {
			got = r.received[i]
		}
		r.mu.Unlock()
		if i >= 0 {
			return got
		}
	}
	t.Fatalf("the receiver was not sent %s", what)
	return received{}
}

type webhookJSON struct {
	ID                      int64      `json:"id"`
	URL                     string     `json:"url"`
	Events                  []string   `json:"events"`
	Enabled                 bool       `json:"enabled"`
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
}

type deliveryJSON struct {
	ID       int64  `json:"id"`
	EventID  string `json:"eventId"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
}

// webhookRow is the endpoints list's row of the endpoint at url (undefined when not shown).
func webhookRow(url string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('tr[data-webhook-id]')].find(r => r.querySelector('.url')?.textContent === %q)`, url)
}

// deliveryRow is the deliveries list's row of the event id (undefined when not shown).
func deliveryRow(eventID string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('tr[data-delivery-id]')].find(r => r.querySelector('.event-id')?.textContent === %q)`, eventID)
}

// rowButton is the button of a row (a JS expression) whose text starts with label.
func rowButton(row, label string) string {
	return fmt.Sprintf(`[...(%s)?.querySelectorAll('button') ?? []].find(b => b.textContent.startsWith(%q))`, row, label)
}

// click clicks the element a JS expression yields, as a mouse does.
func (sc *scene) click(js, name string) {
	sc.t.Helper()
	sc.b.do(chromedp.Click(chromedp.CSS(sc.b.mark(js, name))))
}

// refreshDeliveriesUntil presses the deliveries' Refresh until cond holds: deliveries
// change on the service's own time, and the page reads them when asked.
func (sc *scene) refreshDeliveriesUntil(cond, what string) {
	sc.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if sc.b.holds(cond, time.Second) {
			return
		}
		evalAs[bool](sc.b, `(document.querySelector('section.deliveries .title-row button')?.click(), true)`)
		sc.b.wait(`!document.querySelector('section.deliveries .pager .count')?.textContent.startsWith('Loading')`, "the deliveries")
	}
	sc.b.screenshot("failure.png")
	sc.t.Fatalf("the deliveries never showed %s (%s)", what, cond)
}

// webhookRetriesAFailedDelivery: an endpoint is added on the Webhooks screen (its secret
// shown once, and the deliveries signed with it); a test event it fails (HTTP 500) is
// listed with its error; disabling the endpoint fails the delivery, and once the
// receiver is fixed and the endpoint enabled, Retry sends it again and it succeeds. A
// rotation without overlap makes the next delivery signed with the new secret only; one
// with the default overlap is shown with the old secret's end. A delivery of an order's
// event opens that event. Delete removes the endpoint.
func webhookRetriesAFailedDelivery(sc *scene) {
	rcv := startTestReceiver(sc.t)
	hs := &hookScene{scene: sc, rcv: rcv, url: rcv.URL + "/hooks"}
	sc.signInAsStaff()
	hs.add()
	first := hs.failThenRetry()
	hs.rotateBothWays(first)
	hs.openDeliveredEvent(first)

	// Deleted: gone from the page, the deliveries' panel closed, and from the API.
	sc.click(rowButton(webhookRow(hs.url), "Delete"), "delete")
	sc.b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	sc.b.wait(webhookRow(hs.url)+` === undefined && document.querySelector('section.deliveries').hidden`, "the endpoint to leave the list")
	sc.srv.call(sc.t, sc.key, "GET", fmt.Sprintf("/webhooks/%d", hs.hook.ID), nil, http.StatusNotFound, nil)
}

// hookScene is webhookRetriesAFailedDelivery's endpoint, at its receiver, step by step.
type hookScene struct {
	*scene
	rcv    *receiver
	url    string
	secret string // as the console showed it
	hook   webhookJSON
}

// add adds the endpoint (order.placed and pet.sold_out) with the form, and keeps the
// secret the console shows once.
func (hs *hookScene) add() {
	t, b, url := hs.t, hs.b, hs.url
	b.openScreen("webhooks")
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)))
	b.do(sendKeys(`form.webhook-form input[name=url]`, url),
		sendKeys(`form.webhook-form input[name=description]`, "Order desk"),
		chromedp.Click(chromedp.CSS(`form.webhook-form input[name=events][value="order.placed"]`)),
		chromedp.Click(chromedp.CSS(`form.webhook-form input[name=events][value="pet.sold_out"]`)),
		chromedp.Click(chromedp.CSS(`form.webhook-form button[type=submit]`)))
	b.wait(`document.querySelector('.created input.secret')?.value.startsWith('whsec_')`, "the secret, shown once")
	hs.secret = evalAs[string](b, `document.querySelector('.created input.secret').value`)
	b.wait(webhookRow(url)+` !== undefined`, "the new endpoint in the list")
	if got := evalAs[[]string](b, `[...`+webhookRow(url)+`.querySelectorAll('.subscribed li')].map(e => e.textContent)`); !slices.Equal(got, []string{"order.placed", "pet.sold_out"}) {
		t.Errorf("the row shows the events %v", got)
	}
	var hooks []webhookJSON
	hs.srv.call(t, hs.key, "GET", "/webhooks?limit=100", nil, http.StatusOK, &hooks)
	i := slices.IndexFunc(hooks, func(h webhookJSON) bool { return h.URL == url })
	if i < 0 || !slices.Equal(hooks[i].Events, []string{"order.placed", "pet.sold_out"}) || !hooks[i].Enabled {
		t.Fatalf("the API lists %+v", hooks)
	}
	hs.hook = hooks[i]
	b.checkAccessibility(hs.axe, "webhooks, a new secret")
	b.do(chromedp.Click(chromedp.CSS(b.mark(`[...document.querySelectorAll('.created button')].find(e => e.textContent === 'I have saved it')`, "saved"))))
}

// failThenRetry sends a test event the receiver fails, disables the endpoint (the
// delivery fails), fixes the receiver, enables the endpoint and retries the delivery,
// which then succeeds. It returns that delivery.
func (hs *hookScene) failThenRetry() received {
	t, b, url := hs.t, hs.b, hs.url
	hs.rcv.set(false, hs.secret)
	// A test event the receiver fails: listed with the endpoint's answer, pending.
	hs.click(rowButton(webhookRow(url), "Send test"), "send-test")
	first := hs.rcv.await(t, "the test event", func(r received) bool { return r.eventType == "webhook.test" })
	if !first.verified {
		t.Errorf("the test delivery is not signed with the secret the console showed: %s", first.signature)
	}
	hs.click(rowButton(webhookRow(url), "Deliveries"), "deliveries")
	b.wait(`document.activeElement === document.querySelector('section.deliveries')`, "focus on the deliveries")
	row := deliveryRow(first.eventID)
	hs.refreshDeliveriesUntil(row+`?.querySelector('.last-error')?.textContent === 'the endpoint answered 500'`, "the failed attempt")
	if got := evalAs[string](b, row+`.querySelector('.delivery-status').textContent`); got != "pending" {
		t.Errorf("a delivery that will be retried shows %q", got)
	}
	b.checkAccessibility(hs.axe, "webhooks, deliveries")
	b.screenshot("console-webhooks-deliveries.png")

	// Disabled: the pending delivery fails, and says so with Retry.
	hs.click(rowButton(webhookRow(url), "Disable"), "disable")
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(webhookRow(url)+`?.querySelector('.state .badge').textContent === 'Disabled'`, "the endpoint, disabled")
	if got := evalAs[string](b, webhookRow(url)+`.querySelector('.state .reason').textContent`); got != "Disabled by an admin." {
		t.Errorf("an endpoint an admin disabled says %q", got)
	}
	hs.refreshDeliveriesUntil(row+`?.querySelector('.delivery-status').textContent === 'failed'`, "the delivery failed")
	if got := evalAs[string](b, row+`.querySelector('.row-actions').textContent`); got != "Enable the endpoint to retry" {
		t.Errorf("a failed delivery of a disabled endpoint offers %q", got)
	}

	// Fixed and enabled again: Retry sends it, and the receiver takes it.
	hs.rcv.set(true, hs.secret)
	hs.click(rowButton(webhookRow(url), "Enable"), "enable")
	b.wait(webhookRow(url)+`?.querySelector('.state .badge').textContent === 'Enabled'`, "the endpoint, enabled")
	if !evalAs[bool](b, `document.activeElement === `+rowButton(webhookRow(url), "Disable")) {
		t.Errorf("after Enable, focus is on %s, not the row's Disable", focused(b))
	}
	b.wait(rowButton(row, "Retry")+` !== undefined`, "Retry, the endpoint enabled")
	hs.click(rowButton(row, "Retry"), "retry")
	taken := hs.rcv.await(t, "the retried delivery, answered 204", func(r received) bool { return r.eventID == first.eventID && r.status == http.StatusNoContent })
	if !taken.verified {
		t.Error("the retried delivery is not signed with the endpoint's secret")
	}
	hs.refreshDeliveriesUntil(row+`?.querySelector('.delivery-status').textContent === 'succeeded'`, "the retried delivery, succeeded")
	if evalAs[bool](b, rowButton(row, "Retry")+` !== undefined || `+row+`.querySelector('.last-error') !== null`) {
		t.Error("a delivery that succeeded still offers Retry or shows an error")
	}
	var deliveries []deliveryJSON
	hs.srv.call(t, hs.key, "GET", fmt.Sprintf("/webhooks/%d/deliveries?limit=100", hs.hook.ID), nil, http.StatusOK, &deliveries)
	if len(deliveries) != 1 || deliveries[0].EventID != first.eventID || deliveries[0].Status != "succeeded" {
		t.Errorf("the API lists the deliveries %+v", deliveries)
	}
	return first
}

// rotateBothWays rotates the secret without overlap (the next delivery is signed with
// the new secret alone), then with the default one (the row says until when the old
// secret signs).
func (hs *hookScene) rotateBothWays(first received) {
	t, b, url := hs.t, hs.b, hs.url
	hs.rotate(url, "0")
	newSecret := evalAs[string](b, `document.querySelector('.created input.secret').value`)
	if newSecret == hs.secret || !strings.HasPrefix(newSecret, "whsec_") {
		t.Fatalf("the rotation showed %q", newSecret)
	}
	hs.srv.call(t, hs.key, "GET", fmt.Sprintf("/webhooks/%d", hs.hook.ID), nil, http.StatusOK, &hs.hook)
	if hs.hook.PreviousSecretExpiresAt != nil {
		t.Errorf("a rotation without overlap left the old secret signing until %v", hs.hook.PreviousSecretExpiresAt)
	}
	hs.rcv.set(true, newSecret)
	hs.click(rowButton(webhookRow(url), "Send test"), "send-test-2")
	second := hs.rcv.await(t, "a test event after the rotation", func(r received) bool { return r.eventType == "webhook.test" && r.eventID != first.eventID })
	if !second.verified || webhook.Verify(second.signature, second.body, []byte(hs.secret), time.Now(), 5*time.Minute) == nil {
		t.Errorf("after a rotation without overlap the delivery is signed %s: verified with the new secret %v, the old one should not verify", second.signature, second.verified)
	}

	before := time.Now()
	hs.rotate(url, "86400")
	b.wait(webhookRow(url)+`?.querySelector('.state').textContent.includes('The old secret signs too until')`, "the overlap in the row")
	hs.srv.call(t, hs.key, "GET", fmt.Sprintf("/webhooks/%d", hs.hook.ID), nil, http.StatusOK, &hs.hook)
	if at := hs.hook.PreviousSecretExpiresAt; at == nil || at.Before(before.Add(24*time.Hour-2*time.Second)) || at.After(time.Now().Add(24*time.Hour+2*time.Second)) {
		t.Errorf("after a rotation with the default overlap the old secret signs until %v", at)
	}
}

// openDeliveredEvent: a delivery of an event of the feed (an order's, which the
// endpoint subscribes to) opens that event from its row; a test event's row offers no
// Open event (a test event is not in the feed).
func (hs *hookScene) openDeliveredEvent(first received) {
	t, b, srv := hs.t, hs.b, hs.srv
	pet := hs.pet("Hooky", 1)
	var order struct {
		ID int64 `json:"id"`
	}
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": pet.ID, "quantity": 1}, http.StatusCreated, &order)
	placed := hs.rcv.await(t, "the order's event", func(r received) bool { return r.eventType == "order.placed" })
	hs.refreshDeliveriesUntil(deliveryRow(placed.eventID)+` !== undefined`, "the order's delivery")
	if evalAs[bool](b, rowButton(deliveryRow(first.eventID), "Open event")+` !== undefined`) {
		t.Error("a test event's delivery offers Open event: a test event is not in the feed")
	}
	hs.click(rowButton(deliveryRow(placed.eventID), "Open event"), "open-event")
	b.wait(`document.activeElement === document.querySelector('section.deliveries section.event-detail')`, "the delivery's event, focused")
	if got := evalAs[string](b, `document.querySelector('section.deliveries .event-detail dl div:last-child dd')?.textContent ?? ''`); !strings.HasPrefix(got, fmt.Sprintf("Order #%d: 1 × Hooky, placed", order.ID)) {
		t.Errorf("the delivery's event reads %q", got)
	}
	srv.call(t, srv.CustomerKey, "DELETE", fmt.Sprintf("/store/orders/%d", order.ID), nil, http.StatusNoContent, nil)
}

// rotate rotates the secret of the endpoint at url with the overlap (seconds) chosen
// in the dialog, and waits for the new secret.
func (sc *scene) rotate(url, overlap string) {
	sc.t.Helper()
	b := sc.b
	evalAs[bool](b, `(document.querySelector('.created').hidden = true, true)`)
	sc.click(rowButton(webhookRow(url), "Rotate secret"), "rotate")
	b.wait(`document.querySelector('dialog.rotate')?.open === true`, "the rotation's choice")
	if overlap == "86400" {
		b.checkAccessibility(sc.axe, "webhooks, rotation")
		b.screenshot("console-webhooks-rotate.png")
	}
	b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`dialog.rotate input[name=overlap][value="%s"]`, overlap))),
		chromedp.Click(chromedp.CSS(`dialog.rotate button[type=submit]`)))
	b.wait(`!document.querySelector('.created').hidden && document.querySelector('.created input.secret')?.value.startsWith('whsec_')`, "the new secret")
}

// eventFeedFiltersAndOpens: the feed filtered by a type lists what the API lists for
// it, page by page ("Load more"); an event opens with its data as the API has it, from
// its row and by its id; an id that is not there is the API's not_found.
func eventFeedFiltersAndOpens(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	// Events of one type, more than a page of them: inventory.updated, one per count.
	pet := sc.pet("Feedy", 0)
	for n := 1; n <= 27; n++ {
		srv.call(t, srv.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", pet.ID), map[string]any{"quantity": n}, http.StatusOK, nil)
	}
	sc.signInAsStaff()
	b.openScreen("events")
	b.wait(`document.querySelector('tr[data-event-id]') !== null`, "the feed")
	b.do(chromedp.SetValue(`form.filters select[name=type]`, "inventory.updated"))
	evalAs[bool](b, `(document.querySelector('form.filters select[name=type]').dispatchEvent(new Event('change')), true)`)
	b.wait(`[...document.querySelectorAll('tr[data-event-id]')].length > 0 && [...document.querySelectorAll('tr[data-event-id] .event-type')].every(e => e.textContent === 'inventory.updated') && !document.querySelector('.pager .count').textContent.startsWith('Loading')`, "the feed of inventory.updated")
	api := feedPages(t, srv, sc.key, "inventory.updated", 2)
	if got := evalAs[[]string](b, `[...document.querySelectorAll('tr[data-event-id]')].map(r => r.dataset.eventId)`); !slices.Equal(got, api[0]) {
		t.Errorf("the first page shows %v; the API's is %v", got, api[0])
	}
	if got := evalAs[string](b, `document.querySelector('.pager .count').textContent`); got != "25 events, more to load." {
		t.Errorf("the pager says %q", got)
	}
	b.do(chromedp.Click(chromedp.CSS(`.pager button`)))
	want := append(slices.Clone(api[0]), api[1]...)
	b.wait(fmt.Sprintf(`document.querySelectorAll('tr[data-event-id]').length === %d`, len(want)), "the second page")
	if got := evalAs[[]string](b, `[...document.querySelectorAll('tr[data-event-id]')].map(r => r.dataset.eventId)`); !slices.Equal(got, want) {
		t.Errorf("two pages show %v; the API's are %v", got, want)
	}

	// The last event shown opens with its data.
	last := want[len(want)-1]
	sc.click(rowButton(fmt.Sprintf(`document.querySelector('tr[data-event-id=%q]')`, last), "Open"), "open")
	b.wait(`!document.querySelector('section.event-detail').hidden && document.activeElement === document.querySelector('section.event-detail')`, "the event, focused")
	var event struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	srv.call(t, sc.key, "GET", "/events/"+last, nil, http.StatusOK, &event)
	shown := evalAs[string](b, `document.querySelector('pre.event-data').textContent`)
	if !jsonEqual(t, shown, string(event.Data)) {
		t.Errorf("the event shows the data %s; the API has %s", shown, event.Data)
	}
	if got := evalAs[string](b, `document.querySelector('#event-detail-title').textContent`); got != "inventory.updated "+last {
		t.Errorf("the event is titled %q", got)
	}
	b.checkAccessibility(sc.axe, "event feed, an event open")
	b.screenshot("console-events.png")

	// By id: the first event of the filter, and one that is not there.
	evalAs[bool](b, `(document.querySelector('section.event-detail button').click(), true)`)
	b.do(sendKeys(`form.open-event input[name=eventId]`, api[0][0]+"\r"))
	b.wait(fmt.Sprintf(`document.querySelector('#event-detail-title')?.textContent === 'inventory.updated %s'`, api[0][0]), "the event opened by id")
	evalAs[bool](b, `(document.querySelector('form.open-event input[name=eventId]').value = '', true)`)
	b.do(sendKeys(`form.open-event input[name=eventId]`, "evt_aaaaaaaaaaaaaaaaaaaaaaaaaa\r"))
	b.wait(`document.querySelector('.notice.error')?.textContent.length > 0`, "the refusal of an unknown event")
}

// feedPages reads n pages of the feed of one type through the API, following its links.
func feedPages(t *testing.T, srv *server, key, eventType string, n int) [][]string {
	t.Helper()
	next := srv.URL + "/v1/events?limit=25&type=" + eventType
	var out [][]string
	link := regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)
	for range n {
		req, _ := http.NewRequest("GET", next, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var events []struct{ ID string }
		err = json.NewDecoder(res.Body).Decode(&events)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", next, res.StatusCode, err)
		}
		ids := make([]string, len(events))
		for i, e := range events {
			ids[i] = e.ID
		}
		out = append(out, ids)
		m := link.FindStringSubmatch(res.Header.Get("Link"))
		if m == nil {
			break
		}
		next = m[1]
		if strings.HasPrefix(next, "/") {
			next = srv.URL + next
		}
	}
	return out
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// webhooksAndFeedByKeyboardOnPhone: at 375px wide and with the keyboard alone, an
// endpoint is added (every type), sent a test and its deliveries opened; the feed is
// filtered and an event opened and closed (Escape), focus going back to its row. Both
// screens fit the width and pass axe.
func webhooksAndFeedByKeyboardOnPhone(sc *scene) {
	t, b := sc.t, sc.b
	rcv := startTestReceiver(t)
	rcv.set(true, "")
	url := rcv.URL + "/phone"
	// An event of the first type the filter offers (order.placed): an order.
	phoney := sc.pet("Phoney", 1)
	sc.srv.call(t, sc.srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": phoney.ID, "quantity": 1}, http.StatusCreated, nil)
	sc.signInAsStaff()
	b.do(chromedp.EmulateViewport(375, 812))
	sc.tabTo(`document.activeElement?.matches('nav a[href="#webhooks"]')`, "the Webhooks link")
	press(b, kb.Enter)
	b.waitScreen("webhooks")
	sc.tabTo(`document.activeElement?.matches('details.add summary')`, "Add an endpoint")
	press(b, kb.Enter)
	press(b, kb.Tab)
	b.do(chromedp.KeyEvent(url))
	press(b, kb.Tab) // description
	press(b, kb.Tab) // the choice of events: "Only these", checked
	press(b, kb.ArrowUp)
	if !evalAs[bool](b, `document.activeElement?.matches('input[name=eventChoice][value=all]') && document.activeElement.checked`) {
		t.Fatalf("the arrow did not choose every type: focus on %s", focused(b))
	}
	press(b, kb.Tab) // the types are disabled: on to Add endpoint
	if !evalAs[bool](b, `document.activeElement?.matches('form.webhook-form button[type=submit]')`) {
		t.Fatalf("Tab from the choice went to %s, not Add endpoint", focused(b))
	}
	press(b, kb.Enter)
	b.wait(`document.activeElement === document.querySelector('.created') && document.querySelector('.created input.secret').value.startsWith('whsec_')`, "the secret, focused")
	b.wait(webhookRow(url)+` !== undefined`, "the endpoint")
	if got := evalAs[string](b, webhookRow(url)+`.querySelector('.subscribed').textContent`); got != "Every type" {
		t.Errorf("an endpoint for every type shows %q", got)
	}
	fitsPhone(b, "webhooks")
	b.checkAccessibility(sc.axe, "webhooks, phone")
	b.screenshot("console-webhooks-phone.png")

	sc.tabTo(`document.activeElement === `+rowButton(webhookRow(url), "Send test"), "Send test")
	press(b, kb.Enter)
	test := rcv.await(t, "the test event", func(r received) bool { return r.eventType == "webhook.test" })
	sc.tabBackTo(`document.activeElement === `+rowButton(webhookRow(url), "Deliveries"), "Deliveries")
	press(b, kb.Enter)
	b.wait(`document.activeElement === document.querySelector('section.deliveries')`, "focus on the deliveries")
	sc.refreshDeliveriesUntil(deliveryRow(test.eventID)+`?.querySelector('.delivery-status').textContent === 'succeeded'`, "the test delivery, succeeded")
	fitsPhone(b, "webhooks, deliveries")
	b.checkAccessibility(sc.axe, "webhooks, deliveries, phone")
	setColorScheme(b, "dark")
	b.checkAccessibility(sc.axe, "webhooks, deliveries, phone, dark")
	b.screenshot("console-webhooks-phone-dark.png")
	setColorScheme(b, "")

	// The feed: the Event feed link, the type filter (arrow keys), an event opened and closed.
	sc.tabBackTo(`document.activeElement?.matches('nav a[href="#events"]')`, "the Event feed link")
	press(b, kb.Enter)
	b.waitScreen("events")
	b.wait(`document.querySelector('tr[data-event-id]') !== null`, "the feed")
	sc.tabTo(`document.activeElement?.matches('select[name=type]')`, "the type filter")
	press(b, kb.ArrowDown) // the first type of the list
	if got := evalAs[string](b, `document.querySelector('select[name=type]').value`); got != "order.placed" {
		t.Fatalf("the arrow chose %q, want order.placed", got)
	}
	b.wait(`document.querySelector('tr[data-event-id]') !== null && [...document.querySelectorAll('tr[data-event-id] .event-type')].every(e => e.textContent === document.querySelector('select[name=type]').value) && !document.querySelector('.pager .count').textContent.startsWith('Loading')`, "the filtered feed")
	sc.tabTo(`document.activeElement?.closest('tr[data-event-id]') != null && document.activeElement.textContent.startsWith('Open')`, "an event's Open")
	opened := evalAs[string](b, `document.activeElement.closest('tr').dataset.eventId`)
	press(b, kb.Enter)
	b.wait(fmt.Sprintf(`document.activeElement === document.querySelector('section.event-detail') && document.querySelector('#event-detail-title').textContent.endsWith(%q)`, opened), "the event, focused")
	fitsPhone(b, "event feed, an event open")
	b.checkAccessibility(sc.axe, "event feed, phone")
	setColorScheme(b, "dark")
	b.checkAccessibility(sc.axe, "event feed, phone, dark")
	setColorScheme(b, "")
	b.screenshot("console-events-phone.png")
	press(b, kb.Escape)
	b.wait(fmt.Sprintf(`document.querySelector('section.event-detail').hidden && document.activeElement?.closest('tr')?.dataset.eventId === %q`, opened), "focus back on the event's row")
}

// tabTo presses Tab until cond holds (at most 80 times).
func (sc *scene) tabTo(cond, what string) {
	sc.t.Helper()
	sc.tabUntil(cond, what)
}

// tabBackTo presses Shift+Tab until cond holds (at most 80 times).
func (sc *scene) tabBackTo(cond, what string) {
	sc.t.Helper()
	sc.tabUntil(cond, what, chromedp.KeyModifiers(chromedp.ModifierShift))
}

func (sc *scene) tabUntil(cond, what string, opts ...chromedp.KeyOption) {
	sc.t.Helper()
	for range 80 {
		if evalAs[bool](sc.b, `!!(`+cond+`)`) {
			return
		}
		sc.b.do(chromedp.KeyEvent(kb.Tab, opts...))
	}
	sc.t.Fatalf("Tab never reached %s; focus on %s", what, focused(sc.b))
}

// feedAndWebhooksForANarrowerKey: a key with events:read, webhooks:manage and pets:read
// (account:read to sign in) is offered the two screens, and in them only the event types
// pets:read reads: the feed's filter and an endpoint's subscriptions. A key without
// those scopes is offered neither screen.
func feedAndWebhooksForANarrowerKey(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	var narrow struct{ Key string }
	srv.call(t, sc.key, "POST", "/api-keys", map[string]any{"name": "pets-feed", "scopes": []string{"account:read", "events:read", "webhooks:manage", "pets:read"}}, http.StatusCreated, &narrow)
	b.signIn(narrow.Key)
	b.wait(`document.querySelector('nav a[href="#stock"]') !== null`, "the console")
	if got := evalAs[[]string](b, `[...document.querySelectorAll('nav a')].map(a => a.hash)`); !slices.Equal(got, []string{"#stock", "#categories", "#webhooks", "#events"}) {
		t.Errorf("the menu offers %v, want the stock, categories, webhooks and the feed", got)
	}
	petTypes := []string{"pet.sold_out", "pet.restocked", "pet.status_changed", "inventory.updated"}
	b.openScreen("events")
	if got := evalAs[[]string](b, `[...document.querySelectorAll('select[name=type] option')].map(o => o.value).filter(v => v)`); !slices.Equal(got, petTypes) {
		t.Errorf("the feed's filter offers %v to a key with pets:read alone, want %v", got, petTypes)
	}
	if got := evalAs[[]string](b, `[...new Set([...document.querySelectorAll('tr[data-event-id] .event-type')].map(e => e.textContent))]`); slices.ContainsFunc(got, func(s string) bool { return !slices.Contains(petTypes, s) }) {
		t.Errorf("the feed shows the types %v to a key with pets:read alone", got)
	}
	b.openScreen("webhooks")
	if got := evalAs[[]string](b, `[...document.querySelectorAll('form.webhook-form input[name=events]')].map(e => e.value)`); !slices.Equal(got, petTypes) {
		t.Errorf("the endpoint form offers %v to a key with pets:read alone, want %v", got, petTypes)
	}
	b.checkAccessibility(sc.axe, "webhooks, a narrower key")

	var clerk struct{ Key string }
	srv.call(t, sc.key, "POST", "/api-keys", map[string]any{"name": "no-feed", "scopes": []string{"account:read", "orders:read", "pets:read"}}, http.StatusCreated, &clerk)
	sc.signOut()
	b.signIn(clerk.Key)
	b.wait(`document.querySelector('nav a[href="#stock"]') !== null`, "the console")
	if got := evalAs[[]string](b, `[...document.querySelectorAll('nav a')].map(a => a.hash)`); slices.Contains(got, "#webhooks") || slices.Contains(got, "#events") {
		t.Errorf("a key without webhooks:manage and events:read is offered %v", got)
	}
}
