package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The Staff and Customers screens (console/src/staff.ts, customers.ts, accounts.ts).

type accountJSON struct {
	ID       int64  `json:"id"`
	Email    string `json:"email"`
	Role     string `json:"role"`
	Disabled bool   `json:"disabled"`
}

// accountRow is the row of the account with this email on the Staff or Customers screen.
func accountRow(email string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('tr[data-account-id]')].find(r => r.querySelector('.name')?.textContent === %q)`, email)
}

// accountButton is the button of an account's row whose text starts with label.
func accountButton(email, label string) string {
	return fmt.Sprintf(`[...(%s)?.querySelectorAll('button') ?? []].find(b => b.textContent.startsWith(%q))`, accountRow(email), label)
}

// staffChangeRolesUnderTheLastAdminRule runs on a server of its own, whose admins are
// only those the scenario makes: it demotes one, disables another, and is then the
// last enabled admin, whose own demotion the service refuses (409 last_admin) and the
// screen says so, changing nothing; it enables the other again, by the keyboard.
func staffChangeRolesUnderTheLastAdminRule(sc *scene) {
	t := sc.t
	srv := startServer(t) // admin@example.com and customer@example.com
	// second@ accepted an invitation: its password came from it, so it is made admin
	// again after being made a customer. signedup@ signed up: a customer the screens
	// never offer to make admin.
	inviteAndAccept(t, srv, "second@example.com")
	srv.call(t, "", "POST", "/accounts", map[string]any{"email": "signedup@example.com", "password": "correct horse battery"}, http.StatusCreated, nil)
	own := (&consoleSuite{srv: srv, browser: sc.browser, axe: sc.axe}).scene(t)
	b := own.b
	own.signInAsStaff()
	b.openScreen("staff")
	b.wait(accountRow("second@example.com")+` !== undefined && `+accountRow(own.email)+`?.textContent.includes('You')`, "the staff list, with the console's own account marked")
	if got := evalAs[int](b, `document.querySelectorAll('tr[data-account-id]').length`); got != 3 {
		t.Errorf("the staff list has %d rows, want the 3 admins", got)
	}
	if evalAs[bool](b, accountRow("customer@example.com")+` !== undefined`) {
		t.Error("the staff list shows a customer")
	}
	b.checkAccessibility(own.axe, "staff")

	// Demote the second admin, after the confirmation.
	b.do(chromedp.Click(chromedp.CSS(b.mark(accountButton("second@example.com", "Make customer"), "demote"))))
	b.wait(`document.querySelector('dialog.confirm[open]') !== null`, "the confirmation")
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(accountRow("second@example.com")+`?.querySelector('.role')?.textContent === 'customer'`, "the demoted role in the row")
	b.wait(`document.querySelector('.notices [role=status]').textContent.includes('second@example.com is now a customer')`, "the confirmation of the change")

	// Disable the first admin.
	b.do(chromedp.Click(chromedp.CSS(b.mark(accountButton("admin@example.com", "Disable"), "disable"))))
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(accountRow("admin@example.com")+`?.textContent.includes('Disabled')`, "the disabled account")
	if status := keyStatus(t, srv, srv.AdminKey); status != http.StatusUnauthorized {
		t.Errorf("the disabled admin's key answers %d, want 401", status)
	}

	// The console's own account is the last enabled admin now: demoting it is refused,
	// by the keyboard (Enter on the button, Tab to the dialog's confirm, Enter).
	evalAs[bool](b, `(`+accountButton(own.email, "Make customer")+`.focus(), true)`)
	press(b, kb.Enter)
	b.wait(`document.querySelector('dialog.confirm[open]') !== null`, "the confirmation")
	press(b, kb.Tab)
	press(b, kb.Enter)
	b.wait(`document.querySelector('.notices [role=alert]').textContent.includes('last enabled admin')`, "the last-admin refusal")
	alert := evalAs[string](b, `document.querySelector('.notices [role=alert]').textContent`)
	if !strings.Contains(alert, own.email) || !strings.Contains(alert, "Make another person admin first") {
		t.Errorf("the refusal reads %q: want the account's email and what to do", alert)
	}
	if got := evalAs[string](b, accountRow(own.email)+`.querySelector('.role').textContent`); got != "admin" {
		t.Errorf("after the refusal the row shows the role %q, want admin", got)
	}
	if got := evalAs[string](b, `document.activeElement?.textContent ?? ''`); !strings.HasPrefix(got, "Make customer") {
		t.Errorf("focus went to %q after the refusal, want the button pressed", got)
	}
	var admins []accountJSON
	srv.call(t, own.key, "GET", "/accounts?role=admin", nil, http.StatusOK, &admins)
	enabled := 0
	for _, a := range admins {
		if !a.Disabled {
			enabled++
		}
	}
	if len(admins) != 2 || enabled != 1 {
		t.Errorf("admins now %+v, want admin@ (disabled) and the console's own (enabled)", admins)
	}

	// Enable the first admin again, by the keyboard: no confirmation for that.
	evalAs[bool](b, `(`+accountButton("admin@example.com", "Enable")+`.focus(), true)`)
	press(b, kb.Enter)
	b.wait(accountRow("admin@example.com")+`?.textContent.includes('Enabled')`, "the enabled account")
	srv.call(t, srv.AdminKey, "GET", "/accounts/me", nil, http.StatusOK, nil)

	// The demoted invited staff member is made admin again (PATCH refused that with 409
	// before accounts knew where their password came from).
	makeAdminAgain(b, "second@example.com")

	staffOnAPhone(own)
	customersOfferMakeAdminWhereAllowed(t, b)
	own.checkTabStayedHome()
}

// staffOnAPhone: the Staff screen at 375 px, light and dark, fits and passes axe-core.
func staffOnAPhone(sc *scene) {
	b := sc.b
	b.do(chromedp.EmulateViewport(375, 812))
	b.settle()
	fitsPhone(b, "staff")
	b.screenshot("console-staff-phone.png")
	b.checkAccessibility(sc.axe, "staff, phone")
	setColorScheme(b, "dark")
	b.screenshot("console-staff-phone-dark.png")
	b.checkAccessibility(sc.axe, "staff, phone, dark")
	setColorScheme(b, "")
}

// inviteAndAccept makes email an admin through an invitation, accepted: its password
// comes from the invitation.
func inviteAndAccept(t *testing.T, srv *server, email string) {
	var inv struct {
		URL string `json:"url"`
	}
	srv.call(t, srv.AdminKey, "POST", "/invitations", map[string]any{"email": email, "role": "admin"}, http.StatusCreated, &inv)
	_, token, _ := strings.Cut(inv.URL, "?token=")
	srv.call(t, "", "POST", "/invitations/accept", map[string]any{"token": token, "password": "correct horse battery"}, http.StatusCreated, nil)
}

// makeAdminAgain presses "Make admin" on the Staff screen's row of email (a customer
// now), confirms, and waits for the row and the notice to say so.
func makeAdminAgain(b *browser, email string) {
	b.do(chromedp.Click(chromedp.CSS(b.mark(accountButton(email, "Make admin"), "promote"))))
	b.wait(`document.querySelector('dialog.confirm[open]') !== null`, "the confirmation")
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(accountRow(email)+`?.querySelector('.role')?.textContent === 'admin'`, "the role back to admin in the row")
	b.wait(`document.querySelector('.notices [role=status]').textContent.includes('`+email+` is now an admin')`, "the confirmation of the change")
}

// customersOfferMakeAdminWhereAllowed: the Customers screen offers "Make admin" where
// the service would, for a key-only customer, and never for a sign-up.
func customersOfferMakeAdminWhereAllowed(t *testing.T, b *browser) {
	b.openScreen("customers")
	b.wait(accountRow("signedup@example.com")+` !== undefined && `+accountRow("customer@example.com")+` !== undefined`, "the customers")
	if evalAs[bool](b, accountButton("signedup@example.com", "Make admin")+` !== undefined`) {
		t.Error("the Customers screen offers to make a sign-up admin")
	}
	if !evalAs[bool](b, accountButton("customer@example.com", "Make admin")+` !== undefined`) {
		t.Error("the Customers screen does not offer to make the key-only customer admin")
	}
}

// customersShowTheirOrders: the Customers screen lists customer@example.com (and no
// staff); its Orders button opens the customer's orders beneath the row.
func customersShowTheirOrders(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	crumpet := sc.pet("Crumpet", 3)
	var order orderJSON
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": crumpet.ID, "quantity": 2}, http.StatusCreated, &order)
	sc.signInAsStaff()
	b.openScreen("customers")
	b.wait(accountRow("customer@example.com")+` !== undefined`, "the customer in the list")
	if evalAs[bool](b, accountRow(sc.email)+` !== undefined`) {
		t.Error("the customers list shows the console's own admin account")
	}
	// Keyboard: focus the customer's Orders button and press Enter.
	evalAs[bool](b, `(`+accountButton("customer@example.com", "Orders")+`.focus(), true)`)
	press(b, kb.Enter)
	orderRow := fmt.Sprintf(`document.querySelector('.customer-orders tr[data-order-id="%d"]')`, order.ID)
	b.wait(orderRow+`?.textContent.includes('Crumpet')`, "the customer's order beneath the row")
	if got := evalAs[string](b, accountButton("customer@example.com", "Orders")+`.getAttribute('aria-expanded')`); got != "true" {
		t.Errorf("the Orders button's aria-expanded = %q once open", got)
	}
	if text := evalAs[string](b, orderRow+`.textContent`); !strings.Contains(text, "placed") {
		t.Errorf("the order's row reads %q, want its status", text)
	}
	b.checkAccessibility(sc.axe, "customers")
	b.do(chromedp.EmulateViewport(375, 812))
	b.settle()
	fitsPhone(b, "customers")
	b.screenshot("console-customers-phone.png")
	b.checkAccessibility(sc.axe, "customers, phone")
	press(b, kb.Enter) // the button still has the focus: it closes the orders
	b.wait(`document.querySelector('.customer-orders') === null`, "the orders to close")
	srv.call(t, srv.CustomerKey, "DELETE", fmt.Sprintf("/store/orders/%d", order.ID), nil, http.StatusNoContent, nil)
}

// keyStatus is the status of GET /v1/accounts/me with key.
func keyStatus(t *testing.T, srv *server, key string) int {
	t.Helper()
	req, err := http.NewRequest("GET", srv.URL+"/v1/accounts/me", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
