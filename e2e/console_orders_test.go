package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The Orders screen's actions, and the console at phone width and dark: scenarios of
// TestConsole (the Orders screen's list and filters, and Sales: console_sales_test.go).

func completeACustomersOrder(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	muffin := sc.pet("Muffin", 2)
	scone := sc.pet("Scone", 1)
	sc.signInAsStaff()
	var order orderJSON
	var customer, staff struct {
		ID    int64  `json:"id"`
		Email string `json:"email"`
	}
	srv.call(t, srv.CustomerKey, "GET", "/accounts/me", nil, http.StatusOK, &customer)
	srv.call(t, sc.key, "GET", "/accounts/me", nil, http.StatusOK, &staff)
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": muffin.ID, "quantity": 2}, http.StatusCreated, &order)
	// One placed with the console's own key, whose email the sign-in read
	// (GET /accounts/me); it is cancelled once seen.
	var own orderJSON
	srv.call(t, sc.key, "POST", "/store/orders", map[string]any{"petId": scone.ID, "quantity": 1}, http.StatusCreated, &own)
	lookupsBefore := len(accountLookups(b))
	b.openScreen("orders")
	row := fmt.Sprintf(`document.querySelector('tr[data-order-id="%d"]')`, order.ID)
	ownRow := fmt.Sprintf(`document.querySelector('tr[data-order-id="%d"]')`, own.ID)
	b.wait(row+`?.textContent.includes('Muffin') && `+ownRow+` !== null`, "the orders in the list")
	if !evalAs[bool](b, row+`.textContent.includes('pending, stock 0')`) {
		t.Errorf("the order's row does not show the pet pending with no stock: %s", evalAs[string](b, row+`.textContent`))
	}
	b.wait(row+`.querySelector('td .id').textContent.includes('@')`, "the customer's email")
	if got, want := evalAs[string](b, row+`.querySelector('td .id').textContent`), fmt.Sprintf("%s (account %d)", customer.Email, customer.ID); got != want {
		t.Errorf("the customer's order names %q, want %q", got, want)
	}
	// The page's accounts in one call (the console's own is known from the sign-in).
	lookups := accountLookups(b)[lookupsBefore:]
	if len(lookups) != 1 || !slices.Contains(queryIDs(t, lookups[0].URL), customer.ID) || slices.Contains(queryIDs(t, lookups[0].URL), staff.ID) {
		t.Errorf("the page of orders looked its accounts up with %+v, want one GET /accounts with the customer's id and not the console's own", lookups)
	}
	if evalAs[bool](b, `__e2e.visible(document.querySelector('.accounts-hint'))`) {
		t.Errorf("the orders screen says %q with a key that has accounts:read", evalAs[string](b, `document.querySelector('.accounts-hint').textContent`))
	}
	if got, want := evalAs[string](b, ownRow+`.querySelector('td .id').textContent`), fmt.Sprintf("%s (account %d, you)", sc.email, staff.ID); got != want {
		t.Errorf("the console's own order names %q, want %q", got, want)
	}
	srv.call(t, sc.key, "DELETE", fmt.Sprintf("/store/orders/%d", own.ID), nil, http.StatusNoContent, nil)
	b.screenshot("console-orders.png")
	b.checkAccessibility(sc.axe, "orders")
	b.do(chromedp.Click(chromedp.CSS(b.mark(row+`.querySelector('td.row-actions button')`, "complete"))))
	b.wait(row+` === null`, "the completed order to leave the open orders")
	b.wait(fmt.Sprintf(`document.querySelector('.notice[role=status]')?.textContent === 'Order %d is complete. Muffin is sold, stock 0.'`, order.ID), "the pet to show sold")
	var pets []petJSON
	srv.call(t, srv.AdminKey, "GET", fmt.Sprintf("/pets?ids=%d", muffin.ID), nil, http.StatusOK, &pets)
	if len(pets) != 1 || pets[0].Status != "sold" {
		t.Errorf("the API shows %+v, want Muffin sold", pets)
	}
}

// refreshOrders presses the Orders screen's Refresh and waits for the order's row.
func refreshOrders(b *browser, orderID int64) string {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.CSS(b.mark(`[...document.querySelectorAll('button')].find(e => e.textContent === 'Refresh')`, "refresh"))))
	row := fmt.Sprintf(`document.querySelector('tr[data-order-id="%d"]')`, orderID)
	b.wait(row+` !== null`, "the new order")
	return row
}

func shipDateAndCancel(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	toffee := sc.pet("Toffee", 5)
	sc.signInAsStaff()
	b.openScreen("orders")
	var placed orderJSON
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": toffee.ID, "quantity": 1}, http.StatusCreated, &placed)
	row := refreshOrders(b, placed.ID)

	date := b.mark(row+`.querySelector('input[type=datetime-local]')`, "date")
	evalAs[bool](b, `(el => { el.value = '2026-12-24T10:30'; return true; })(document.querySelector('`+date+`'))`)
	b.do(chromedp.Click(chromedp.CSS(b.mark(row+`.querySelector('form.inline button')`, "set-date"))))
	b.wait(fmt.Sprintf(`document.querySelector('.notice[role=status]')?.textContent.startsWith('Order %d ships')`, placed.ID), "the ship date to be set")
	var got orderJSON
	srv.call(t, srv.AdminKey, "GET", fmt.Sprintf("/store/orders/%d", placed.ID), nil, http.StatusOK, &got)
	if got.ShipDate == "" {
		t.Error("the API shows no ship date")
	}

	cancel := b.mark(row+`.querySelector('td.row-actions button.danger')`, "cancel")
	b.do(chromedp.Click(chromedp.CSS(cancel)))
	b.wait(`document.querySelector('dialog.confirm[open]') !== null`, "the confirmation")
	b.checkAccessibility(sc.axe, "confirmation")
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.secondary`))) // "Keep it"
	if b.holds(row+` === null`, 500*time.Millisecond) {
		t.Fatal("the order was cancelled although the confirmation was declined")
	}
	b.do(chromedp.Click(chromedp.CSS(cancel)))
	b.wait(`document.querySelector('dialog.confirm[open]') !== null`, "the confirmation")
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(row+` === null`, "the cancelled order to leave the list")
	if got := srv.stock(t, toffee.ID); got.Quantity != 5 {
		t.Errorf("Toffee's stock after the cancel: %d, want 5 again", got.Quantity)
	}
}

func orderCancelledMeanwhile(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	fudge := sc.pet("Fudge", 5)
	// A console that follows the event stream drops the row as soon as the customer
	// cancels (liveOrdersAndStock): this one's key may not read it, so the row stays
	// until the action finds the order changed.
	sc.signInWithoutStream()
	b.openScreen("orders")
	var gone orderJSON
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": fudge.ID, "quantity": 1}, http.StatusCreated, &gone)
	row := refreshOrders(b, gone.ID)
	srv.call(t, srv.CustomerKey, "DELETE", fmt.Sprintf("/store/orders/%d", gone.ID), nil, http.StatusNoContent, nil)
	var refusal struct{ Message string }
	// A cancelled order stays, and completing it is refused.
	srv.call(t, srv.AdminKey, "PATCH", fmt.Sprintf("/store/orders/%d", gone.ID), map[string]any{"complete": true}, http.StatusConflict, &refusal)
	b.do(chromedp.Click(chromedp.CSS(b.mark(row+`.querySelector('td.row-actions button')`, "complete-gone"))))
	b.wait(fmt.Sprintf(`document.querySelector('.notice.error')?.textContent === %q`, refusal.Message), "the API's refusal")
	b.wait(row+` === null`, "the cancelled order to leave the open orders")
}

func phoneWidthAndDark(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	sc.signInAsStaff()
	b.do(chromedp.EmulateViewport(375, 812)) // on Stock, the first screen
	b.wait(stockRow("Rex")+` !== undefined`, "the stock list")
	fitsPhone(b, "stock")
	b.screenshot("console-stock-phone.png")
	b.checkAccessibility(sc.axe, "stock, phone")
	kiwi := sc.pet("Kiwi", 1)
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": kiwi.ID, "quantity": 1, "shipDate": "2026-12-24T10:00:00Z"}, http.StatusCreated, nil)
	b.openScreen("orders")
	b.wait(`document.querySelector('tr[data-order-id]')?.textContent.includes('Kiwi')`, "the orders")
	fitsPhone(b, "orders")
	b.screenshot("console-orders-phone.png")
	b.openScreen("keys")
	b.wait(`document.querySelector('tr[data-key-id]') !== null`, "the keys")
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)))
	b.wait(`document.querySelectorAll('form.add input[name=scopes]').length > 0`, "the scopes")
	fitsPhone(b, "keys")
	b.screenshot("console-keys-phone.png")
	b.checkAccessibility(sc.axe, "keys, phone")

	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
	}); err != nil {
		t.Fatal(err)
	}
	b.openScreen("stock")
	b.wait(stockRow("Rex")+` !== undefined`, "the stock list")
	b.screenshot("console-stock-phone-dark.png")
	b.checkAccessibility(sc.axe, "stock, phone, dark")
	b.do(chromedp.EmulateViewport(1280, 900))
	b.screenshot("console-stock-dark.png")
	b.checkAccessibility(sc.axe, "stock, dark")
}
