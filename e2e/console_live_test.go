package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// The live screens (GET /events/stream, read by the TypeScript SDK's events.stream):
// a scenario of TestConsole.

// signInWithoutStream signs the console in with a key of the scenario's account that
// has every scope but events:read: its screens do not follow the event stream.
func (sc *scene) signInWithoutStream() {
	sc.t.Helper()
	var me struct {
		Key struct{ Scopes []string } `json:"key"`
	}
	sc.srv.call(sc.t, sc.key, "GET", "/accounts/me", nil, http.StatusOK, &me)
	scopes := slices.DeleteFunc(me.Key.Scopes, func(s string) bool { return s == "events:read" })
	var made struct{ Key string }
	sc.srv.call(sc.t, sc.key, "POST", "/api-keys", map[string]any{"name": "no stream", "scopes": scopes}, http.StatusCreated, &made)
	sc.b.signIn(made.Key)
	sc.b.wait(fmt.Sprintf(`document.querySelector('header .who')?.textContent.includes(%q)`, sc.email), "the console to open")
}

// liveOrdersAndStock: an order placed through the API shows on an open Orders screen
// within 2 seconds, without pressing anything; the Stock screen follows the stock it
// took.
func liveOrdersAndStock(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	biscuit := sc.pet("Biscuit", 5)
	sc.signInAsStaff()
	b.openScreen("orders")
	live := `__e2e.visible(document.querySelector('#orders-title .live'))`
	b.wait(live+` && !document.querySelector('.pager .count')?.textContent.startsWith('Loading')`, "the orders screen, live")
	var order orderJSON
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": biscuit.ID, "quantity": 2}, http.StatusCreated, &order)
	placed := time.Now()
	row := fmt.Sprintf(`document.querySelector('tr[data-order-id="%d"]')`, order.ID)
	if !b.holds(row+`?.textContent.includes('Biscuit') === true`, 2*time.Second) {
		t.Fatalf("the order placed through the API is not on the open Orders screen 2 s later")
	}
	t.Logf("the order showed %s after it was placed", time.Since(placed).Round(10*time.Millisecond))
	if evalAs[string](b, `document.querySelector('tbody tr')?.dataset.orderId ?? ''`) != fmt.Sprint(order.ID) {
		t.Errorf("the new order is not the first row (newest first)")
	}
	b.checkAccessibility(sc.axe, "orders, live")
	// Cancelled elsewhere: the row leaves the open orders.
	srv.call(t, srv.CustomerKey, "DELETE", fmt.Sprintf("/store/orders/%d", order.ID), nil, http.StatusNoContent, nil)
	b.wait(row+` === null`, "the cancelled order to leave the open orders")

	b.openScreen("stock")
	// Other scenarios' pets may push it off the first page: found by name.
	b.do(sendKeys(`form.filters input[name=name]`, biscuit.Name))
	petRow := fmt.Sprintf(`document.querySelector('tr[data-pet-id="%d"]')`, biscuit.ID)
	b.wait(`__e2e.visible(document.querySelector('#stock-title .live')) && `+petRow+` !== null`, "the stock screen, live")
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": biscuit.ID, "quantity": 5}, http.StatusCreated, &order)
	if !b.holds(petRow+`?.querySelector('input[name=quantity]')?.value === '0' && `+petRow+`.classList.contains('sold-out')`, 2*time.Second) {
		t.Fatalf("the stock screen does not show Biscuit sold out 2 s after the order took its stock: %s", evalAs[string](b, petRow+`?.textContent ?? ''`))
	}
	b.checkAccessibility(sc.axe, "stock, live")
}
