package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The Orders and Sales screens of the console (issue 31): scenarios of TestConsole.

// orderDetail is an order as GET /store/orders answers it, with its life and its price.
type orderDetail struct {
	ID          int64      `json:"id"`
	Status      string     `json:"status"`
	Quantity    int        `json:"quantity"`
	PetName     string     `json:"petName"`
	UnitPrice   int64      `json:"unitPrice"`
	Total       int64      `json:"total"`
	Currency    string     `json:"currency"`
	CreatedAt   time.Time  `json:"createdAt"`
	CompletedAt *time.Time `json:"completedAt"`
	CancelledAt *time.Time `json:"cancelledAt"`
}

type salesFigures struct {
	Orders           int64 `json:"orders"`
	Units            int64 `json:"units"`
	Revenue          int64 `json:"revenue"`
	CancelledOrders  int64 `json:"cancelledOrders"`
	CancelledRevenue int64 `json:"cancelledRevenue"`
}

type salesReport struct {
	From     string       `json:"from"`
	To       string       `json:"to"`
	Currency string       `json:"currency"`
	Totals   salesFigures `json:"totals"`
	Groups   []struct {
		salesFigures
		Day          string `json:"day"`
		PetID        *int64 `json:"petId"`
		PetName      string `json:"petName"`
		CategoryID   *int64 `json:"categoryId"`
		CategoryName string `json:"categoryName"`
	} `json:"groups"`
}

// euros is an amount in cents of EUR as en-US writes it ("€1,234.50"): the console
// formats money in the reader's locale, which these subtests set to en-US.
func euros(cents int64) string {
	whole := strconv.FormatInt(cents/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return fmt.Sprintf("€%s.%02d", whole, cents%100)
}

// inLocale makes the page's Intl use locale until the returned function is called.
func inLocale(b *browser, locale string) (restore func()) {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: locale}); err != nil {
		b.t.Fatal(err)
	}
	return func() {
		// An empty locale ends the override.
		if _, err := chromedp.Call(b.ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{}); err != nil {
			b.t.Error(err)
		}
	}
}

// onPhoneAndDark checks the page as it is at 375px wide (no horizontal scrolling, axe)
// and in dark mode (axe), with a screenshot of each, and puts the desktop view back.
func onPhoneAndDark(b *browser, axe, where, shot string) {
	b.t.Helper()
	b.do(chromedp.EmulateViewport(375, 812))
	fitsPhone(b, where)
	b.screenshot(shot + "-phone.png")
	b.checkAccessibility(axe, where+", phone")
	setColorScheme(b, "dark")
	b.checkAccessibility(axe, where+", phone, dark")
	b.screenshot(shot + "-phone-dark.png")
	setColorScheme(b, "")
	b.do(chromedp.EmulateViewport(1280, 900))
}

// fitsPhone checks that the page, 375px wide, needs no scrolling sideways.
func fitsPhone(b *browser, where string) {
	b.t.Helper()
	// Headless Chromium's scroll bar takes its width from the 375px (a phone's does not):
	// the page must fit in what is left, without scrolling sideways.
	if w, c := evalAs[int](b, `document.documentElement.scrollWidth`), evalAs[int](b, `document.documentElement.clientWidth`); w > 375 || w > c {
		wide := evalAs[[]string](b, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5 && ![...e.children].some(c => c.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)).slice(0, 8).map(e => e.outerHTML.slice(0, 100) + ' right ' + Math.round(e.getBoundingClientRect().right))`)
		b.t.Errorf("%s: the page is %dpx wide at 375px, %dpx of it in view; too wide:\n\t%s", where, w, c, strings.Join(wide, "\n\t"))
	}
}

// setColorScheme emulates prefers-color-scheme; "" ends the emulation.
func setColorScheme(b *browser, scheme string) {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		b.t.Fatal(err)
	}
}

// press sends keys to the element that has the focus, as a keyboard would.
func press(b *browser, keys string) {
	b.t.Helper()
	b.do(chromedp.KeyEvent(keys))
}

// focused is a short description of the element that has the focus.
func focused(b *browser) string {
	b.t.Helper()
	return evalAs[string](b, `(e => e ? e.tagName.toLowerCase() + (e.name ? '[name=' + e.name + ']' : '') + ' ' + (e.textContent ?? '').trim().slice(0, 40) : 'none')(document.activeElement)`)
}

// pageOrderIDs is the selector's rows' order ids, as the page shows them.
const pageOrderIDs = `JSON.stringify([...document.querySelectorAll('tr[data-order-id]')].map(r => Number(r.dataset.orderId)))`

// ordersCount is what the orders screen's pager says of n orders shown.
func ordersCount(n int, more bool) string {
	switch {
	case n == 0:
		return "No orders."
	case n == 1 && !more:
		return "1 order."
	case more:
		return fmt.Sprintf("%d orders, more to load.", n)
	default:
		return fmt.Sprintf("%d orders.", n)
	}
}

// testOrdersScreen: a customer's orders of each status are shown with their status,
// dates, total and unit price in the shop's currency, and the pet's name; the status
// filter (changed with the keyboard) lists the orders the API lists; a cancelled order
// is kept; the day filters narrow the list; a second page comes through the cursor;
// only placed orders offer Complete and Cancel.
func testOrdersScreen(sc *scene) {
	t, b, srv, axe, consoleKey, dogsID := sc.t, sc.b, sc.srv, sc.axe, sc.key, sc.dogsID
	sc.signInAsStaff()
	defer inLocale(b, "en-US")()

	// A customer of its own, so that filtering by account lists exactly these orders.
	buyerKey := srv.createKey(t, "buyer@example.com", "customer")
	var buyer struct {
		ID int64 `json:"id"`
	}
	srv.call(t, buyerKey, "GET", "/accounts/me", nil, http.StatusOK, &buyer)
	var juniper petJSON
	srv.call(t, srv.AdminKey, "POST", "/pets", map[string]any{"name": "Juniper", "categoryId": dogsID, "price": 1999}, http.StatusCreated, &juniper)
	srv.call(t, srv.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", juniper.ID), map[string]any{"quantity": 60}, http.StatusOK, nil)
	place := func(quantity int) orderDetail {
		var o orderDetail
		srv.call(t, buyerKey, "POST", "/store/orders", map[string]any{"petId": juniper.ID, "quantity": quantity}, http.StatusCreated, &o)
		return o
	}
	// More placed orders than a page holds (25), then one of each status, newest last.
	for range 25 {
		place(1)
	}
	completed := place(1)
	srv.call(t, consoleKey, "PATCH", fmt.Sprintf("/store/orders/%d", completed.ID), map[string]any{"complete": true}, http.StatusOK, nil)
	cancelled := place(1)
	srv.call(t, buyerKey, "DELETE", fmt.Sprintf("/store/orders/%d", cancelled.ID), nil, http.StatusNoContent, nil)
	placed := place(2)

	// apiOrders lists the buyer's orders as the API does, with the page's other filters.
	apiOrders := func(query string) []orderDetail {
		var all []orderDetail
		srv.call(t, consoleKey, "GET", fmt.Sprintf("/store/orders?accountId=%d&limit=100&%s", buyer.ID, query), nil, http.StatusOK, &all)
		return all
	}
	// listed waits for the page to show the first page of what the API lists.
	listed := func(query, what string) []orderDetail {
		t.Helper()
		all := apiOrders(query)
		first := all[:min(len(all), 25)]
		ids := make([]int64, len(first))
		for i, o := range first {
			ids[i] = o.ID
		}
		want, _ := json.Marshal(ids)
		b.wait(fmt.Sprintf(`%s === %q && document.querySelector('.pager .count')?.textContent === %q`, pageOrderIDs, want, ordersCount(len(first), len(all) > 25)), what)
		return all
	}

	// A fresh orders screen, with its filters as they start.
	b.openScreen("stock")
	b.openScreen("orders")
	b.wait(`document.querySelector('form.filters select[name=status]')?.value === 'placed'`, "the orders screen, open orders first")
	b.do(sendKeys(`form.filters input[name=accountId]`, strconv.FormatInt(buyer.ID, 10)))
	// The list is asked again a moment after the typing stops.
	waitRequestWith(b, "GET", "/v1/store/orders", "accountId="+strconv.FormatInt(buyer.ID, 10))
	listed("status=placed", "the buyer's placed orders, a page of them")

	// The placed order: its pet, status, the time it was placed, total and unit price.
	var got orderDetail
	srv.call(t, consoleKey, "GET", fmt.Sprintf("/store/orders/%d", placed.ID), nil, http.StatusOK, &got)
	if got.Currency != "EUR" || got.UnitPrice != 1999 || got.Total != 3998 {
		t.Fatalf("the API shows the order %+v, want 2 × 1999 EUR", got)
	}
	row := fmt.Sprintf(`document.querySelector('tr[data-order-id="%d"]')`, placed.ID)
	cell := func(label string) string {
		return evalAs[string](b, fmt.Sprintf(`%s.querySelector('td[data-label=%q]').innerText.replace(/\s+/g, ' ').trim()`, row, label))
	}
	if got := evalAs[string](b, row+`.querySelector('td[data-label=Pet] .name').textContent`); got != "Juniper" {
		t.Errorf("the order's pet reads %q, want Juniper", got)
	}
	if got, want := cell("Total"), euros(3998)+" 2 × "+euros(1999); got != want {
		t.Errorf("the order's total reads %q, want %q", got, want)
	}
	status := cell("Status")
	placedAt := got.CreatedAt.Local()
	if !strings.HasPrefix(status, "placed Placed "+placedAt.Format("Jan 2, 2006")) || !strings.Contains(status, placedAt.Format("3:04")) {
		t.Errorf("the order's status reads %q, want placed, and placed on %s", status, placedAt.Format("Jan 2, 2006, 3:04 PM"))
	}
	if n := evalAs[int](b, `[...document.querySelectorAll('tr[data-order-id]')].filter(r => [...r.querySelectorAll('td.row-actions button')].map(e => e.textContent.split(' ')[0]).join() !== 'Complete,Cancel').length`); n > 0 {
		t.Errorf("%d placed orders do not offer Complete and Cancel", n)
	}

	// The next page, asked with the API's cursor (and the filters kept in it): with the
	// keyboard, from the button's own focus.
	evalAs[bool](b, `(document.querySelector('.pager button:not([hidden])').focus(), true)`)
	press(b, kb.Enter)
	all := apiOrders("status=placed")
	if len(all) != 26 {
		t.Fatalf("the API lists %d placed orders of the buyer, want 26", len(all))
	}
	ids := make([]int64, len(all))
	for i, o := range all {
		ids[i] = o.ID
	}
	want, _ := json.Marshal(ids)
	b.wait(fmt.Sprintf(`%s === %q && document.querySelector('.pager .count').textContent === '26 orders.'`, pageOrderIDs, want), "the second page")
	if r, ok := b.request("GET", "/v1/store/orders"); !ok || !strings.Contains(r.URL, "cursor=") {
		t.Errorf("the second page was not asked with the API's cursor: %+v", r)
	}

	// The status filter with the keyboard: Tab from Refresh reaches it, the arrow keys
	// change it.
	evalAs[bool](b, `([...document.querySelectorAll('button')].find(e => e.textContent === 'Refresh').focus(), true)`)
	press(b, kb.Tab)
	if got := focused(b); !strings.HasPrefix(got, "select[name=status]") {
		t.Fatalf("Tab from Refresh went to %q, not the status filter", got)
	}
	press(b, kb.ArrowDown)
	listed("status=completed", "the buyer's completed orders")
	row = fmt.Sprintf(`document.querySelector('tr[data-order-id="%d"]')`, completed.ID)
	srv.call(t, consoleKey, "GET", fmt.Sprintf("/store/orders/%d", completed.ID), nil, http.StatusOK, &got)
	if status := cell("Status"); got.CompletedAt == nil || !strings.HasPrefix(status, "completed Placed ") || !strings.Contains(status, " Completed "+got.CompletedAt.Local().Format("Jan 2, 2006")) {
		t.Errorf("the completed order's status reads %q (the API: completed at %v)", status, got.CompletedAt)
	}
	if got := cell("Total"); got != euros(1999)+" 1 × "+euros(1999) {
		t.Errorf("the completed order's total reads %q", got)
	}
	b.checkAccessibility(axe, "orders, completed")

	press(b, kb.ArrowDown)
	listed("status=cancelled", "the buyer's cancelled order, kept")
	row = fmt.Sprintf(`document.querySelector('tr[data-order-id="%d"]')`, cancelled.ID)
	srv.call(t, consoleKey, "GET", fmt.Sprintf("/store/orders/%d", cancelled.ID), nil, http.StatusOK, &got)
	if status := cell("Status"); got.CancelledAt == nil || !strings.HasPrefix(status, "cancelled Placed ") || !strings.Contains(status, " Cancelled "+got.CancelledAt.Local().Format("Jan 2, 2006")) || !strings.Contains(status, got.CancelledAt.Local().Format("3:04")) {
		t.Errorf("the cancelled order's status reads %q (the API: cancelled at %v)", status, got.CancelledAt)
	}
	b.screenshot("console-orders-cancelled.png")
	b.checkAccessibility(axe, "orders, cancelled")

	press(b, kb.ArrowDown)
	if got := evalAs[string](b, `document.querySelector('form.filters select[name=status]').value`); got != "" {
		t.Fatalf("the status filter is %q after three arrows down, want any status", got)
	}
	everyOrder := listed("", "every order of the buyer")
	statuses := map[string]int{}
	for _, o := range everyOrder {
		statuses[o.Status]++
	}
	if statuses["placed"] != 26 || statuses["completed"] != 1 || statuses["cancelled"] != 1 {
		t.Errorf("the API lists the buyer's orders by status %v", statuses)
	}
	// Complete and Cancel on the placed orders only.
	offers := evalAs[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('tr[data-order-id]')].map(r => [r.dataset.status + ' ' + r.dataset.orderId, [...r.querySelectorAll('td.row-actions button')].map(e => e.textContent.split(' ')[0]).join()]))`)
	for k, v := range offers {
		if want := map[bool]string{true: "Complete,Cancel", false: ""}[strings.HasPrefix(k, "placed ")]; v != want {
			t.Errorf("order %s offers %q, want %q", k, v, want)
		}
	}
	onPhoneAndDark(b, axe, "orders of every status", "console-orders-all")

	// The days they were placed on: each is the reader's day, midnight to midnight.
	setDay := func(name string, day time.Time) {
		value := ""
		if !day.IsZero() {
			value = day.Format(time.DateOnly)
		}
		evalAs[bool](b, fmt.Sprintf(`(el => { el.value = %q; el.dispatchEvent(new Event('change')); return true; })(document.querySelector('form.filters input[name=%s]'))`, value, name))
	}
	now := time.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
	tomorrow, yesterday := today.AddDate(0, 0, 1), today.AddDate(0, 0, -1)
	setDay("createdAfter", tomorrow)
	listed("createdAfter="+url.QueryEscape(tomorrow.Format(time.RFC3339)), "no order placed from tomorrow on")
	if r, ok := b.request("GET", "/v1/store/orders"); !ok || !strings.Contains(r.URL, "createdAfter=") {
		t.Errorf("the page asked %+v, without createdAfter", r)
	}
	setDay("createdAfter", today)
	setDay("createdBefore", today)
	if n := len(listed("createdAfter="+url.QueryEscape(today.Format(time.RFC3339))+"&createdBefore="+url.QueryEscape(tomorrow.Format(time.RFC3339)), "the orders placed today")); n != 28 {
		t.Errorf("today the API lists %d orders of the buyer, want 28", n)
	}
	setDay("createdAfter", time.Time{})
	setDay("createdBefore", yesterday)
	listed("createdBefore="+url.QueryEscape(today.Format(time.RFC3339)), "no order placed by yesterday")
}

// testSalesScreen: the totals are the API's; the chart is an SVG of the page with a bar
// for each day of the range (0 for a day without orders); grouping by pet and by
// category (chosen with the keyboard) shows the API's groups.
func testSalesScreen(sc *scene) {
	t, b, srv, axe, consoleKey := sc.t, sc.b, sc.srv, sc.axe, sc.key
	// Today's orders (more than one: the summary counts them in the plural), a cancelled
	// one among them.
	treat := sc.pet("Treacle", 5)
	var cancelled orderJSON
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": treat.ID, "quantity": 2}, http.StatusCreated, nil)
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": treat.ID, "quantity": 1}, http.StatusCreated, nil)
	srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": treat.ID, "quantity": 1}, http.StatusCreated, &cancelled)
	srv.call(t, srv.CustomerKey, "DELETE", fmt.Sprintf("/store/orders/%d", cancelled.ID), nil, http.StatusNoContent, nil)
	sc.signInAsStaff()
	defer inLocale(b, "en-US")()
	b.openScreen("sales")
	b.wait(`document.querySelector('.sales dl.totals') !== null && document.querySelector('svg.chart') !== null`, "the sales report")

	report := func(from, to, groupBy string) salesReport {
		var r salesReport
		srv.call(t, consoleKey, "GET", fmt.Sprintf("/store/sales?from=%s&to=%s&groupBy=%s", from, to, groupBy), nil, http.StatusOK, &r)
		if r.Currency != "EUR" {
			t.Fatalf("the report is in %q, want EUR", r.Currency)
		}
		return r
	}
	from := evalAs[string](b, `document.querySelector('input[name=from]').value`)
	to := evalAs[string](b, `document.querySelector('input[name=to]').value`)
	r := report(from, to, "day")
	if r.Totals.Orders == 0 || r.Totals.CancelledOrders == 0 {
		t.Fatalf("the report has no orders, or none cancelled, to show: %+v", r.Totals)
	}
	checkTotals := func(r salesReport) {
		t.Helper()
		got := evalAs[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('dl.totals div')].map(d => [d.querySelector('dt').textContent, d.querySelector('dd').textContent]))`)
		want := map[string]string{
			"Revenue":   euros(r.Totals.Revenue),
			"Orders":    strconv.FormatInt(r.Totals.Orders, 10),
			"Units":     strconv.FormatInt(r.Totals.Units, 10),
			"Cancelled": fmt.Sprintf("%d (%s)", r.Totals.CancelledOrders, euros(r.Totals.CancelledRevenue)),
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("the totals show %s %q; the API says %q", k, got[k], v)
			}
		}
		if got, want := evalAs[string](b, `document.querySelector('.count[role=status]').textContent`), fmt.Sprintf(": %d orders, %s.", r.Totals.Orders, euros(r.Totals.Revenue)); !strings.HasSuffix(got, want) {
			t.Errorf("the summary reads %q, want it to end %q", got, want)
		}
	}
	// checkChart: one bar per day from..to, tall where the API has revenue, 0 elsewhere.
	checkChart := func(r salesReport) {
		t.Helper()
		revenue := map[string]int64{}
		for _, g := range r.Groups {
			revenue[g.Day] = g.Revenue
		}
		first, err := time.Parse(time.DateOnly, r.From)
		if err != nil {
			t.Fatal(err)
		}
		last, err := time.Parse(time.DateOnly, r.To)
		if err != nil {
			t.Fatal(err)
		}
		var bars []struct {
			Height float64
			Title  string
		}
		raw := evalAs[string](b, `(s => s instanceof SVGSVGElement && s.closest('main') !== null ? JSON.stringify([...s.querySelectorAll('rect.bar')].map(e => ({height: Number(e.getAttribute('height')), title: e.querySelector('title')?.textContent ?? ''}))) : 'null')(document.querySelector('svg.chart'))`)
		if err := json.Unmarshal([]byte(raw), &bars); err != nil || bars == nil {
			t.Fatalf("no inline SVG chart in the page: %s", raw)
		}
		days := int(last.Sub(first).Hours()/24) + 1
		if len(bars) != days {
			t.Fatalf("the chart has %d bars for the %d days from %s to %s", len(bars), days, r.From, r.To)
		}
		for i, bar := range bars {
			day := first.AddDate(0, 0, i)
			money := revenue[day.Format(time.DateOnly)]
			if (bar.Height > 0) != (money > 0) || !strings.HasPrefix(bar.Title, day.Format("Jan 2, 2006")+": ") || !strings.HasSuffix(bar.Title, ": "+euros(money)) {
				t.Errorf("the bar of %s is %vpx tall, titled %q; the API has %s that day", day.Format(time.DateOnly), bar.Height, bar.Title, euros(money))
			}
		}
	}
	checkTotals(r)
	checkChart(r)
	b.screenshot("console-sales.png")
	b.checkAccessibility(axe, "sales by day")
	onPhoneAndDark(b, axe, "sales by day", "console-sales")

	// A week: the From field changed, then the form sent with Enter from it.
	week := evalAs[string](b, `(el => { const d = new Date(document.querySelector('input[name=to]').value + 'T00:00:00Z'); d.setUTCDate(d.getUTCDate() - 6); el.value = d.toISOString().slice(0, 10); el.focus(); return el.value; })(document.querySelector('input[name=from]'))`)
	press(b, kb.Enter)
	b.wait(fmt.Sprintf(`document.querySelectorAll('svg.chart rect.bar').length === 7 && document.querySelector('.count[role=status]').textContent.startsWith(%q)`, mustDay(t, week).Format("Jan 2, 2006")), "a week's chart")
	r = report(week, to, "day")
	checkTotals(r)
	checkChart(r)

	// By pet, then by category, with the keyboard: Tab from To reaches Group by, the
	// arrow changes it, Tab reaches Show and Enter sends the form (Group by does not send
	// it on its own: the form has a Show button).
	groupRows := `JSON.stringify([...document.querySelectorAll('table.sales-groups tbody tr')].map(r => [...r.cells].map(c => c.textContent)))`
	for _, by := range []struct{ value, heading string }{{"pet", "Pet"}, {"category", "Category"}} {
		evalAs[bool](b, `(document.querySelector('input[name=to]').focus(), true)`)
		// Tab goes through the date's fields (month, day, year) before it leaves them.
		for range 5 {
			if press(b, kb.Tab); !strings.HasPrefix(focused(b), "input[name=to]") {
				break
			}
		}
		if got := focused(b); !strings.HasPrefix(got, "select[name=groupBy]") {
			t.Fatalf("Tab from To went to %q, not Group by", got)
		}
		press(b, kb.ArrowDown)
		press(b, kb.Tab)
		if got := focused(b); got != "button Show" {
			t.Fatalf("Tab from Group by went to %q, not Show", got)
		}
		press(b, kb.Enter)
		b.wait(fmt.Sprintf(`document.querySelector('table.sales-groups thead th')?.textContent === %q`, by.heading), "the report by "+by.value)
		r := report(week, to, by.value)
		var want [][]string
		for _, g := range r.Groups {
			name := ""
			switch {
			case by.value == "pet":
				name = fmt.Sprintf("%s #%d", g.PetName, *g.PetID)
			case g.CategoryID == nil:
				name = "No category"
			default:
				name = fmt.Sprintf("%s #%d", g.CategoryName, *g.CategoryID)
			}
			want = append(want, []string{name, strconv.FormatInt(g.Orders, 10), strconv.FormatInt(g.Units, 10), euros(g.Revenue), fmt.Sprintf("%d (%s)", g.CancelledOrders, euros(g.CancelledRevenue))})
		}
		if len(want) == 0 {
			t.Fatalf("the API's report by %s has no groups", by.value)
		}
		var got [][]string
		if err := json.Unmarshal([]byte(evalAs[string](b, groupRows)), &got); err != nil {
			t.Fatal(err)
		}
		if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
			t.Errorf("by %s the table shows\n\t%s\nthe API's groups are\n\t%s", by.value, g, w)
		}
		if evalAs[bool](b, `document.querySelector('svg.chart') !== null`) {
			t.Errorf("a chart of days is drawn for the report by %s", by.value)
		}
		checkTotals(r)
		b.checkAccessibility(axe, "sales by "+by.value)
		if by.value == "pet" {
			b.screenshot("console-sales-pet.png")
			onPhoneAndDark(b, axe, "sales by pet", "console-sales-pet")
		}
	}
}

// waitRequestWith waits until the page's last method path asked for has part in its
// URL and had an answer.
func waitRequestWith(b *browser, method, path, part string) {
	b.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if r, ok := b.request(method, path); ok && r.Status != 0 && strings.Contains(r.URL, part) {
			return
		}
	}
	b.screenshot("failure.png")
	b.t.Fatalf("the page sent no %s %s with %s (or had no answer)", method, path, part)
}

func mustDay(t *testing.T, day string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
