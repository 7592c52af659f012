package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// The API keys screen, and the console with keys of fewer scopes: scenarios of
// TestConsole. Each scenario's staff account is its own, so the keys listed are the
// scenario's.

func keysWithScopesAndLifetimes(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	sc.signInAsStaff()
	// A key that lives three seconds, to be seen expired.
	oldSyncExpires := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second)
	srv.call(t, sc.key, "POST", "/api-keys", map[string]any{"name": "old-sync", "expiresAt": oldSyncExpires.Format(time.RFC3339)}, http.StatusCreated, nil)

	b.openScreen("keys")
	b.wait(`document.querySelector('tr[data-key-id]') !== null`, "the keys")
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)))
	b.wait(`document.querySelectorAll('form.add input[name=scopes]').length > 0`, "the scopes, from the served document")
	offered := evalAs[[]string](b, `[...document.querySelectorAll('form.add input[name=scopes]')].map(e => e.value)`)
	if want := roleScopes(t, "admin"); !slices.Equal(slices.Sorted(slices.Values(offered)), want) {
		t.Errorf("the form offers the scopes %v; the document's admin role allows %v", offered, want)
	}

	// inventory-sync: two scopes, one day.
	chooseLifetime := func(value string) {
		b.do(chromedp.SetValue(`form.add select[name=lifetime]`, value))
		evalAs[bool](b, `(document.querySelector('form.add select[name=lifetime]').dispatchEvent(new Event('change')), true)`)
	}
	b.do(sendKeys(`form.add input[name=name]`, "inventory-sync"),
		chromedp.Click(chromedp.CSS(`form.add input[name=scopes][value="pets:read"]`)),
		chromedp.Click(chromedp.CSS(`form.add input[name=scopes][value="inventory:write"]`)))
	chooseLifetime("1")
	before := time.Now()
	b.do(chromedp.Click(chromedp.CSS(`form.add button[type=submit]`)))
	b.wait(`document.querySelector('.created input.secret')?.value.startsWith('psk_')`, "the new key, shown once")
	after := time.Now()
	secret := evalAs[string](b, `document.querySelector('.created input.secret').value`)
	if got := evalAs[string](b, `document.querySelector('.created p.hint').textContent`); !strings.HasPrefix(got, "Scopes: inventory:write, pets:read. Expires: ") {
		t.Errorf("the new key is described as %q", got)
	}
	key := apiKeyNamed(t, srv, sc.key, "inventory-sync")
	if !slices.Equal(key.Scopes, []string{"inventory:write", "pets:read"}) {
		t.Errorf("the API shows the scopes %v, want inventory:write and pets:read", key.Scopes)
	}
	if key.ExpiresAt == nil || key.ExpiresAt.Before(before.Add(24*time.Hour-time.Second)) || key.ExpiresAt.After(after.Add(24*time.Hour+time.Second)) {
		t.Errorf("the API shows the expiry %v, want a day after %v", key.ExpiresAt, before)
	}
	// The key holds those scopes and no other.
	srv.call(t, secret, "GET", "/pets?limit=1", nil, http.StatusOK, nil)
	srv.call(t, secret, "POST", "/pets", map[string]any{"name": "Nope", "categoryId": sc.dogsID}, http.StatusForbidden, nil)

	row := keyRow("inventory-sync")
	b.wait(row+` !== undefined`, "the new key in the list")
	if got := evalAs[[]string](b, `[...`+row+`.querySelectorAll('.key-scopes li')].map(e => e.textContent)`); !slices.Equal(got, []string{"inventory:write", "pets:read"}) {
		t.Errorf("the row shows the scopes %v", got)
	}
	if got := evalAs[string](b, row+`.querySelector('.expires .badge')?.textContent ?? ''`); !strings.HasPrefix(got, "⚠ Expires in ") || !evalAs[bool](b, row+`.classList.contains('expiring')`) {
		t.Errorf("a key that expires in a day is not flagged: badge %q, row %q", got, evalAs[string](b, row+`.className`))
	}
	if got := evalAs[string](b, row+`.querySelector('.last-used').textContent`); got != "Never" {
		t.Errorf("a new key's last use reads %q, want Never", got)
	}
	b.wait(`/within 7 days: [^.]*\binventory-sync\b/.test(document.querySelector('.expiry-summary')?.textContent)`, "the summary of keys about to expire")

	// storefront: every scope of the role, until a day ten days on.
	b.do(sendKeys(`form.add input[name=name]`, "storefront"), chromedp.Click(chromedp.CSS(`form.add input[name=scopeChoice][value=all]`)))
	chooseLifetime("date")
	b.wait(`!document.querySelector('form.add input[name=expiresOn]').closest('label').hidden`, "the date field")
	wantEnd := evalAs[string](b, `(() => {
		const d = new Date(Date.now() + 10 * 86400000);
		document.querySelector('form.add input[name=expiresOn]').value = [d.getFullYear(), String(d.getMonth() + 1).padStart(2, '0'), String(d.getDate()).padStart(2, '0')].join('-');
		return new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1).toISOString();
	})()`)
	b.do(chromedp.Click(chromedp.CSS(`form.add button[type=submit]`)))
	b.wait(keyRow("storefront")+` !== undefined`, "the second key in the list")
	store := apiKeyNamed(t, srv, sc.key, "storefront")
	if want, _ := time.Parse(time.RFC3339, wantEnd); store.Scopes != nil || store.ExpiresAt == nil || !store.ExpiresAt.Equal(want) {
		t.Errorf("the API shows the scopes %v and the expiry %v, want every scope of the role and %s", store.Scopes, store.ExpiresAt, wantEnd)
	}
	if got := evalAs[string](b, keyRow("storefront")+`.querySelector('.key-scopes').textContent`); got != "All of the role's" {
		t.Errorf("a key with every scope of its role shows %q", got)
	}
	if evalAs[bool](b, keyRow("storefront")+`.querySelector('.expires .badge') !== null || `+keyRow("storefront")+`.classList.length > 0`) {
		t.Error("a key that expires in ten days is flagged")
	}

	// old-sync has expired by now: shown as expired when the list is read again. The two
	// clicks come quicker than a hashchange event is handled: each event must show its
	// own screen (read from the event, not from location, which already says #keys).
	time.Sleep(time.Until(oldSyncExpires.Add(200 * time.Millisecond)))
	b.do(chromedp.Click(chromedp.CSS(`nav a[href="#stock"]`)), chromedp.Click(chromedp.CSS(`nav a[href="#keys"]`)))
	b.wait(keyRow("old-sync")+`?.classList.contains('expired')`, "the expired key, shown as expired")
	if got := evalAs[string](b, keyRow("old-sync")+`.querySelector('.expires .badge').textContent`); got != "Expired" {
		t.Errorf("the expired key's badge reads %q", got)
	}
	b.wait(`document.querySelector('.expiry-summary')?.textContent.includes('1 key has expired: old-sync.')`, "the summary of expired keys")
	b.checkAccessibility(sc.axe, "keys, expiring and expired")
	b.screenshot("console-keys-expiry.png")
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)))
	b.wait(`document.querySelectorAll('form.add input[name=scopes]').length > 0`, "the scopes")
	b.checkAccessibility(sc.axe, "keys, the form")
	b.screenshot("console-keys-form.png")

	// Revoke the one that was flagged.
	b.do(chromedp.Click(chromedp.CSS(b.mark(keyRow("inventory-sync")+`.querySelector('button.danger')`, "revoke"))))
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(keyRow("inventory-sync")+` === undefined`, "the revoked key to leave the list")
	b.wait(`!document.querySelector('.expiry-summary').textContent.includes('inventory-sync')`, "the summary to forget it")
	srv.call(t, secret, "GET", "/pets?limit=1", nil, http.StatusUnauthorized, nil)
}

func keysCreateAndRevoke(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	sc.signInAsStaff()
	b.openScreen("keys")
	b.wait(`document.querySelector('tr[data-key-id]') !== null`, "the keys")
	if !evalAs[bool](b, `[...document.querySelectorAll('tr[data-key-id]')].some(r => r.textContent.includes("This console's key"))`) {
		t.Error("the console's own key is not marked")
	}
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)), chromedp.Click(chromedp.CSS(`form.add input[name=scopeChoice][value=all]`)),
		sendKeys(`form.add input[name=name]`, "till-2\r"))
	b.wait(`document.querySelector('.created input.secret')?.value.startsWith('psk_')`, "the new key, shown once")
	secret := evalAs[string](b, `document.querySelector('.created input.secret').value`)
	b.do(chromedp.Click(chromedp.CSS(b.mark(`[...document.querySelectorAll('.created button')].find(e => e.textContent === 'Copy key')`, "copy"))))
	// Headless Chromium may refuse the clipboard; then the key is selected for Ctrl+C.
	b.wait(`['Copied.', 'Selected: copy it with Ctrl+C (⌘C).'].includes(document.querySelector('.created [role=status]')?.textContent)`, "the copy to be confirmed")
	b.checkAccessibility(sc.axe, "keys")
	b.screenshot("console-keys.png")
	srv.call(t, secret, "GET", "/accounts/me", nil, http.StatusOK, nil)

	row := `[...document.querySelectorAll('tr[data-key-id]')].find(r => r.querySelector('.name')?.textContent === 'till-2')`
	b.do(chromedp.Click(chromedp.CSS(b.mark(row+`.querySelector('button.danger')`, "revoke"))))
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(row+` === undefined`, "the revoked key to leave the list")
	srv.call(t, secret, "GET", "/accounts/me", nil, http.StatusUnauthorized, nil)

	// The console's own key: its next call is refused, and the console says so.
	own := `[...document.querySelectorAll('tr[data-key-id]')].find(r => r.textContent.includes("This console's key"))`
	b.do(chromedp.Click(chromedp.CSS(b.mark(own+`.querySelector('button.danger')`, "revoke-own"))))
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(`document.querySelector('form.sign-in [role=alert]')?.textContent.startsWith('Signed out: the service refused the key.')`, "the console to be signed out")
	if got := evalAs[string](b, `sessionStorage.getItem('petstore.console.apiKey') ?? ''`); got != "" {
		t.Error("the refused key is still kept")
	}
}

func narrowerKey(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	var narrow struct{ Key string }
	srv.call(t, sc.key, "POST", "/api-keys", map[string]any{"name": "narrow", "scopes": []string{"account:read", "pets:read", "keys:manage"}}, http.StatusCreated, &narrow)
	b.signIn(narrow.Key)
	b.wait(`document.querySelector('nav a[href="#stock"]') !== null`, "the console")
	// Stock is the first screen: a click on its link would draw it again, under the wait.
	b.wait(stockRow("Rex")+` !== undefined`, "the stock list, which pets:read shows")

	// Only the screens whose lists the key may read are offered: no orders, no sales.
	if got := evalAs[[]string](b, `[...document.querySelectorAll('nav a')].map(a => a.hash)`); !slices.Equal(got, []string{"#stock", "#categories", "#keys"}) {
		t.Errorf("the menu offers %v, want the stock, categories and keys", got)
	}
	// Without inventory:write and pets:write the stock is shown, not edited.
	if got := evalAs[string](b, stockRow("Rex")+`.querySelector('td[data-label=Stock]').textContent`); got == "" {
		t.Error("the stock list does not show Rex's stock")
	}
	if evalAs[bool](b, stockRow("Rex")+`.querySelector('input, select, button') !== null || document.querySelector('details.add') !== null`) {
		t.Error("the stock screen offers a control this key may not use")
	}
	b.checkAccessibility(sc.axe, "stock, read only")
	b.openScreen("categories")
	b.wait(`document.querySelector('tr[data-category-id]') !== null`, "the categories")
	if evalAs[bool](b, `document.querySelector('main details.add, main tr[data-category-id] button') !== null`) {
		t.Error("the categories screen offers a change to a key without categories:write")
	}

	// Keys: a scope this key lacks cannot be given.
	b.openScreen("keys")
	b.wait(keyRow("narrow")+` !== undefined`, "the keys")
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)))
	b.wait(`document.querySelector('form.add input[name=scopes][value="pets:write"]')?.disabled === true`, "pets:write, which this key lacks, disabled")
	if !evalAs[bool](b, `!document.querySelector('form.add input[name=scopes][value="pets:read"]').disabled && __e2e.visible(document.querySelector('form.add input[name=scopes][value="pets:write"]').closest('label').querySelector('.lacking'))`) {
		t.Error("the form does not offer pets:read, or does not say the key lacks pets:write")
	}
	if got := evalAs[[]string](b, `[...`+keyRow("narrow")+`.querySelectorAll('.key-scopes li')].map(e => e.textContent)`); !slices.Equal(got, []string{"account:read", "keys:manage", "pets:read"}) {
		t.Errorf("the console's own key shows the scopes %v", got)
	}

	// A screen the key may not read, asked for by its address, is not shown: the first one is.
	evalAs[bool](b, `(location.hash = '#orders', true)`)
	b.wait(`document.querySelector('#stock-title') !== null && `+stockRow("Rex")+` !== undefined`, "the stock screen in place of the orders")

	// Without account:read the console cannot check the key: the sign-in says so.
	var blind struct{ Key string }
	srv.call(t, sc.key, "POST", "/api-keys", map[string]any{"name": "blind", "scopes": []string{"pets:read"}}, http.StatusCreated, &blind)
	sc.signOut()
	b.signIn(blind.Key)
	b.wait(`document.querySelector('form.sign-in [role=alert]')?.textContent.startsWith('This key lacks the scope account:read')`, "the sign-in to name account:read")
}

// clerkKey: a key for restocking (pets:read and inventory:write, with account:read to
// sign in) is offered only that: no "Add a pet", no "Remove", no status or edit, no
// categories' changes and no keys screen (so no "Create a key"); and it restocks.
func clerkKey(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	crouton := sc.pet("Crouton", 1)
	var clerk struct{ Key string }
	srv.call(t, sc.key, "POST", "/api-keys", map[string]any{"name": "clerk", "scopes": []string{"account:read", "pets:read", "inventory:write"}}, http.StatusCreated, &clerk)
	b.signIn(clerk.Key)
	b.wait(`document.querySelector('nav a[href="#stock"]') !== null`, "the console")
	if got := evalAs[[]string](b, `[...document.querySelectorAll('nav a')].map(a => a.hash)`); !slices.Equal(got, []string{"#stock", "#categories"}) {
		t.Errorf("the menu offers %v, want the stock and categories", got)
	}
	sc.findPet("Crouton")
	row := stockRow("Crouton")
	if got := evalAs[[]string](b, `[...document.querySelectorAll('main button, main summary')].map(e => e.textContent)`); slices.ContainsFunc(got, func(s string) bool {
		return strings.HasPrefix(s, "Remove") || strings.HasPrefix(s, "Edit") || s == "Add a pet" || strings.HasPrefix(s, "Set status")
	}) {
		t.Errorf("the stock screen offers %q to a clerk key", got)
	}
	if evalAs[bool](b, row+`.querySelector('select[name=status]') !== null`) {
		t.Error("the stock screen offers a change of status to a key without pets:write")
	}

	// The clerk's task: a restock.
	input := b.mark(row+`.querySelector('input[name=quantity]')`, "stock")
	evalAs[bool](b, `(document.querySelector('`+input+`').value = '', true)`)
	b.do(sendKeys(input, "6\r"))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent === 'Crouton: stock 6, available.'`, "the restock to be confirmed")
	if got := srv.stock(t, crouton.ID); got.Quantity != 6 {
		t.Errorf("stock in the API %d, want 6", got.Quantity)
	}
	b.checkAccessibility(sc.axe, "stock for a clerk key")

	b.openScreen("categories")
	b.wait(`document.querySelector('tr[data-category-id]') !== null`, "the categories")
	if got := evalAs[[]string](b, `[...document.querySelectorAll('main button, main summary')].map(e => e.textContent)`); slices.ContainsFunc(got, func(s string) bool {
		return strings.HasPrefix(s, "Remove") || strings.HasPrefix(s, "Edit") || s == "Add a category"
	}) {
		t.Errorf("the categories screen offers %q to a clerk key", got)
	}
	sc.signOut()
}

func keyWithoutAccountsRead(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	var clerk struct{ Key string }
	srv.call(t, sc.key, "POST", "/api-keys", map[string]any{"name": "clerk", "scopes": []string{"account:read", "orders:read", "orders:write", "pets:read"}}, http.StatusCreated, &clerk)
	var customer struct {
		ID int64 `json:"id"`
	}
	srv.call(t, srv.CustomerKey, "GET", "/accounts/me", nil, http.StatusOK, &customer)
	clover := sc.pet("Clover", 1)
	var placed orderJSON
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": clover.ID, "quantity": 1}, http.StatusCreated, &placed)
	b.signIn(clerk.Key)
	b.wait(`document.querySelector('nav a[href="#orders"]') !== null`, "the console")
	b.openScreen("orders")
	row := fmt.Sprintf(`document.querySelector('tr[data-order-id="%d"]')`, placed.ID)
	b.wait(`__e2e.visible(document.querySelector('.accounts-hint'))`, "the note that emails are not shown")
	if got, want := evalAs[string](b, `document.querySelector('.accounts-hint').textContent`), "this key lacks accounts:read: emails not shown"; got != want {
		t.Errorf("the orders screen says %q, want %q", got, want)
	}
	b.wait(row+` !== null`, "the customer's order, shown all the same")
	if got, want := evalAs[string](b, row+`.querySelector('td .id').textContent`), fmt.Sprintf("account %d", customer.ID); got != want {
		t.Errorf("the customer's order names %q, want %q", got, want)
	}
	if got := evalAs[string](b, `document.querySelector('.notice.error')?.textContent ?? ''`); got != "" {
		t.Errorf("the orders screen raised the alert %q for the emails it may not read", got)
	}
	b.checkAccessibility(sc.axe, "orders without accounts:read")
	srv.call(t, srv.CustomerKey, "DELETE", fmt.Sprintf("/store/orders/%d", placed.ID), nil, http.StatusNoContent, nil)
	sc.signOut()
}
