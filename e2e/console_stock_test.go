package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// The Stock and Categories screens of the console: scenarios of TestConsole.

func stockAtAGlance(sc *scene) {
	t, b := sc.t, sc.b
	sc.pet("Biscuit", 0)
	sc.twoPagesOfPets()
	sc.signInAsStaff()
	b.wait(stockRow("Rex")+` !== undefined`, "the stock list")
	b.wait(`document.querySelector('.pager .count')?.textContent.includes('more to load')`, "a first page with more to load")
	if !evalAs[bool](b, stockRow("Max")+`.classList.contains('sold-out')`) {
		t.Error("Max (stock 0) is not highlighted as sold out")
	}
	if !evalAs[bool](b, stockRow("Bella")+`.classList.contains('low')`) {
		t.Error("Bella (stock 3, threshold 3) is not highlighted as low")
	}
	b.screenshot("console-stock.png")
	b.checkAccessibility(sc.axe, "stock")
	// Each pet carries its stock: the list asks for no inventory beside the pets.
	if r, ok := b.request("GET", "/v1/store/inventory"); ok {
		t.Errorf("the stock list looked the stock up separately: %s", r.URL)
	}

	rows := evalAs[int](b, `document.querySelectorAll('tr[data-pet-id]').length`)
	b.do(chromedp.Click(chromedp.CSS(b.mark(`[...document.querySelectorAll('.pager button')].find(e => e.textContent === 'Load more')`, "more"))))
	b.wait(fmt.Sprintf(`document.querySelectorAll('tr[data-pet-id]').length > %d`, rows), "the second page")
	if r, ok := b.request("GET", "/v1/pets"); !ok || !strings.Contains(r.URL, "cursor=") {
		t.Errorf("the second page was not asked with the API's cursor: %+v", r)
	}

	sc.search("bisc")
	b.wait(`document.querySelectorAll('tr[data-pet-id]').length === 1 && `+stockRow("Biscuit")+` !== undefined`, "the search to find Biscuit alone")
}

func restockInPlace(sc *scene) {
	t, b := sc.t, sc.b
	crumpet := sc.pet("Crumpet", 0)
	sc.signInAsStaff()
	sc.findPet("Crumpet")
	input := b.mark(stockRow("Crumpet")+`.querySelector('input[name=quantity]')`, "stock")
	evalAs[bool](b, `(document.querySelector('`+input+`').value = '', true)`)
	b.do(sendKeys(input, "2\r"))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent === 'Crumpet: stock 2, available.'`, "the restock to be confirmed")
	if got := sc.srv.stock(t, crumpet.ID); got.Quantity != 2 {
		t.Errorf("stock in the API %d, want 2", got.Quantity)
	}
	if !evalAs[bool](b, stockRow("Crumpet")+`.classList.contains('low')`) {
		t.Error("Crumpet (stock 2) is not highlighted as low")
	}
}

func refusedRestock(sc *scene) {
	b, srv := sc.b, sc.srv
	ghost := sc.pet("Ghost", 0)
	sc.signInAsStaff()
	sc.findPet("Ghost")
	// Someone removes the pet meanwhile.
	srv.call(sc.t, srv.AdminKey, "DELETE", fmt.Sprintf("/pets/%d", ghost.ID), nil, http.StatusNoContent, nil)
	var refusal struct{ Message string }
	srv.call(sc.t, srv.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", ghost.ID), map[string]any{"quantity": 7}, http.StatusNotFound, &refusal)
	input := b.mark(stockRow("Ghost")+`.querySelector('input[name=quantity]')`, "ghost-stock")
	evalAs[bool](b, `(document.querySelector('`+input+`').value = '', true)`)
	b.do(sendKeys(input, "7\r"))
	b.wait(fmt.Sprintf(`document.querySelector('.notice.error')?.textContent === %q`, refusal.Message), "the API's refusal")
	// The field is reset in the same turn as the notice or just after it (under the
	// race detector CI once read it between the two): wait for it, as for the notice.
	b.wait(stockRow("Ghost")+`.querySelector('input[name=quantity]').value === '0'`, "the stock field to show the 0 the service last held")
}

func availableWithNoStock(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	// Waffle is sold with stock 0, as the last order of a pet leaves it: set to 0, an
	// available pet is sold (rule 6).
	waffle := sc.pet("Waffle", 1)
	srv.call(t, srv.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", waffle.ID), map[string]any{"quantity": 0}, http.StatusOK, nil)
	sc.signInAsStaff()
	sc.search("waffle")
	b.wait(`document.querySelectorAll('tr[data-pet-id]').length === 1 && `+stockRow("Waffle")+`?.querySelector('select')?.value === 'sold'`, "the search to find Waffle alone, sold")
	warning := stockRow("Waffle") + `.querySelector('.choice')`
	choose := func() {
		b.do(chromedp.SetValue(b.mark(stockRow("Waffle")+`.querySelector('select')`, "status"), "available"))
		evalAs[bool](b, `(`+stockRow("Waffle")+`.querySelector('select').dispatchEvent(new Event('change')), true)`)
		b.wait(warning+`.textContent.includes('cannot be ordered')`, "the warning that it cannot be ordered")
	}
	choose()
	b.screenshot("console-available-no-stock.png")
	b.checkAccessibility(sc.axe, "available with no stock")
	// Restock instead: the choice is undone and the stock field has the focus.
	b.do(chromedp.Click(chromedp.CSS(b.mark(warning+`.querySelector('button')`, "restock-instead"))))
	if !evalAs[bool](b, `document.activeElement === `+stockRow("Waffle")+`.querySelector('input[name=quantity]') && `+stockRow("Waffle")+`.querySelector('select').value === 'sold' && `+warning+`.textContent === ''`) {
		t.Error("Restock instead did not undo the choice and focus the stock field")
	}
	// The rules allow it, so the console does not forbid it: it says what it means.
	choose()
	b.do(chromedp.Click(chromedp.CSS(b.mark(stockRow("Waffle")+`.querySelector('form.status button')`, "set-status"))))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent === 'Waffle is now available, but with stock 0 it cannot be ordered until it is restocked.'`, "the status change and what it means")
	b.screenshot("console-available-no-stock-set.png")
	if !evalAs[bool](b, `__e2e.visible(`+stockRow("Waffle")+`.querySelector('.pet-state.warn'))`) {
		t.Error("the row of Waffle, available with stock 0, does not say it cannot be ordered")
	}
	var pets []struct {
		Status string `json:"status"`
		Stock  int    `json:"stock"`
	}
	srv.call(t, srv.AdminKey, "GET", fmt.Sprintf("/pets?ids=%d", waffle.ID), nil, http.StatusOK, &pets)
	if len(pets) != 1 || pets[0].Status != "available" || pets[0].Stock != 0 {
		t.Errorf("the API shows %+v, want Waffle available with stock 0", pets)
	}
}

func illegalStatusChange(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	pepper := sc.pet("Pepper", 4)
	sc.signInAsStaff()
	sc.search("pepper")
	b.wait(stockRow("Pepper")+`?.querySelector('select')?.value === 'available'`, "Pepper, available")
	options := evalAs[[]string](b, `[...`+stockRow("Pepper")+`.querySelectorAll('select option')].map(o => o.value)`)
	if strings.Join(options, ",") != "available,pending,sold" {
		t.Errorf("an available pet is offered %v, want available (as it is), pending and sold", options)
	}
	// A change the rules allow, and back.
	for _, to := range []string{"pending", "available"} {
		b.do(chromedp.SetValue(b.mark(stockRow("Pepper")+`.querySelector('select')`, "status"), to))
		b.do(chromedp.Click(chromedp.CSS(b.mark(stockRow("Pepper")+`.querySelector('form.status button')`, "set-status"))))
		b.wait(fmt.Sprintf(`document.querySelector('.notice[role=status]')?.textContent === 'Pepper is now %s.'`, to), "the status change")
		var pets []petJSON
		srv.call(t, srv.AdminKey, "GET", fmt.Sprintf("/pets?ids=%d", pepper.ID), nil, http.StatusOK, &pets)
		if len(pets) != 1 || pets[0].Status != to {
			t.Errorf("the API shows %+v, want Pepper %s", pets, to)
		}
	}
	// Someone else sells the last of them meanwhile: the pet is sold, and sold to
	// pending is not a transition the rules allow.
	srv.call(t, srv.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", pepper.ID), map[string]any{"quantity": 0}, http.StatusOK, nil)
	b.do(chromedp.SetValue(b.mark(stockRow("Pepper")+`.querySelector('select')`, "status"), "pending"))
	b.do(chromedp.Click(chromedp.CSS(b.mark(stockRow("Pepper")+`.querySelector('form.status button')`, "set-status"))))
	b.wait(`document.querySelector('.notice.error')?.textContent === 'A pet cannot go from sold to pending.'`, "the API's refusal")
	b.wait(stockRow("Pepper")+`?.querySelector('select')?.value === 'sold'`, "the row to show the status the API holds")
	b.screenshot("console-refusal.png")
}

func categoriesAddEditRemove(sc *scene) {
	t, b := sc.t, sc.b
	sc.signInAsStaff()
	b.openScreen("categories")
	b.wait(`document.querySelector('tr[data-category-id]') !== null`, "the categories")
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)),
		sendKeys(`form.add input[name=name]`, "Reptiles"),
		sendKeys(`form.add input[name=description]`, "Cold-blooded.\r"))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent === 'Added the category Reptiles.'`, "the new category")
	row := `[...document.querySelectorAll('tr[data-category-id]')].find(r => r.querySelector('.name')?.textContent === 'Reptiles')`
	b.do(chromedp.Click(chromedp.CSS(b.mark(row+`.querySelector('button.secondary')`, "edit"))))
	evalAs[bool](b, `(document.querySelector('form.edit input[name=description]').value = '', true)`)
	b.do(sendKeys(`form.edit input[name=description]`, "Cold-blooded. Quiet.\r"))
	b.wait(row+`?.textContent.includes('Cold-blooded. Quiet.')`, "the edited description")
	b.checkAccessibility(sc.axe, "categories")
	b.do(chromedp.Click(chromedp.CSS(b.mark(row+`.querySelector('button.danger')`, "remove"))))
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(row+` === undefined`, "the category to go")

	// One that pets use is refused with the API's message.
	dogsRow := `[...document.querySelectorAll('tr[data-category-id]')].find(r => r.querySelector('.name')?.textContent === 'Dogs')`
	b.do(chromedp.Click(chromedp.CSS(b.mark(dogsRow+`.querySelector('button.danger')`, "remove-dogs"))))
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(`document.querySelector('.notice.error')?.textContent.length > 0`, "the refusal")
	if !evalAs[bool](b, dogsRow+` !== undefined`) {
		t.Error("Dogs left the list although the API refused")
	}
}

func stalePageIsDropped(sc *scene) {
	t, b := sc.t, sc.b
	sc.twoPagesOfPets()
	sc.signInAsStaff()
	b.wait(stockRow("Rex")+` !== undefined`, "the stock list")
	// The next page of pets (the first page of sold pets) is held until released.
	holdNext(b, "status=sold")
	b.do(chromedp.SetValue(`form.filters select[name=status]`, "sold"))
	evalAs[bool](b, `(document.querySelector('form.filters select[name=status]').dispatchEvent(new Event('change')), true)`)
	b.wait(`__e2e.held.length === 1`, "the sold pets' page, held")
	b.do(chromedp.SetValue(`form.filters select[name=status]`, "available"))
	evalAs[bool](b, `(document.querySelector('form.filters select[name=status]').dispatchEvent(new Event('change')), true)`)
	b.wait(stockRow("Rex")+` !== undefined && !document.querySelector('.pager .count').textContent.startsWith('Loading')`, "the available pets")
	evalAs[bool](b, `(__e2e.held.splice(0).forEach(release => release()), true)`)
	notAvailable := `[...document.querySelectorAll('tr[data-pet-id]')].filter(r => r.querySelector('select[name=status]').value !== 'available').map(r => r.querySelector('.name').textContent)`
	if b.holds(notAvailable+`.length > 0`, time.Second) {
		t.Errorf("pets of the stale page were added to the list of available pets: %v", evalAs[[]string](b, notAvailable))
	}
	b.do(chromedp.SetValue(`form.filters select[name=status]`, ""))
	evalAs[bool](b, `(document.querySelector('form.filters select[name=status]').dispatchEvent(new Event('change')), true)`)
	b.wait(`document.querySelector('.pager .count').textContent.includes('more to load')`, "every pet's first page")
}

// loadEveryPage presses Load more (a real click, which focuses it) until the last page
// has come.
func loadEveryPage(b *browser) {
	b.t.Helper()
	for evalAs[bool](b, `!!document.querySelector('.pager button:not([hidden])')`) {
		rows := evalAs[int](b, `document.querySelectorAll('tr[data-pet-id]').length`)
		b.do(chromedp.Click(chromedp.CSS(`.pager button:not([hidden])`)))
		b.wait(fmt.Sprintf(`document.querySelectorAll('tr[data-pet-id]').length > %d || !document.querySelector('.pager .count').textContent.startsWith('Loading')`, rows), "the next page")
	}
}

func addedPetShownOnce(sc *scene) {
	t, b := sc.t, sc.b
	sc.twoPagesOfPets()
	sc.signInAsStaff()
	b.wait(stockRow("Rex")+` !== undefined`, "the stock list")
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)))
	b.wait(`document.querySelector('form.add select[name=categoryId] option') !== null`, "the categories of the form")
	b.do(sendKeys(`form.add input[name=name]`, "Zephyr\r"))
	b.wait(stockRow("Zephyr")+` !== undefined`, "the new pet in the list")
	loadEveryPage(b)
	if n := evalAs[int](b, `[...document.querySelectorAll('tr[data-pet-id]')].filter(r => r.querySelector('.name').textContent === 'Zephyr').length`); n != 1 {
		t.Errorf("Zephyr is shown %d times", n)
	}
	rows := evalAs[int](b, `document.querySelectorAll('tr[data-pet-id]').length`)
	if got, want := evalAs[string](b, `document.querySelector('.pager .count').textContent`), fmt.Sprintf("%d pets.", rows); got != want {
		t.Errorf("the count says %q with %d rows shown, want %q", got, rows, want)
	}
}

func focusStaysInPlace(sc *scene) {
	t, b := sc.t, sc.b
	sc.pet("Yarrow", 0)
	sc.twoPagesOfPets()
	sc.signInAsStaff()
	b.wait(stockRow("Rex")+` !== undefined`, "the stock list")
	// The last "Load more" goes away under the focus.
	loadEveryPage(b)
	if got := evalAs[string](b, `document.activeElement?.tagName ?? 'none'`); got == "BODY" || got == "none" {
		t.Errorf("after the last page, focus is on %s", got)
	}
	focusedIn := func(row string) string {
		return `(r => r !== undefined && r.contains(document.activeElement))(` + row + `)`
	}
	input := b.mark(stockRow("Yarrow")+`.querySelector('input[name=quantity]')`, "stock")
	evalAs[bool](b, `(document.querySelector('`+input+`').value = '', true)`)
	b.do(sendKeys(input, "7\r"))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent === 'Yarrow: stock 7, available.'`, "the restock")
	if !evalAs[bool](b, focusedIn(stockRow("Yarrow"))) {
		t.Errorf("after a restock, focus is on %s, not in the pet's row", evalAs[string](b, `document.activeElement.outerHTML.slice(0, 80)`))
	}
	next := evalAs[string](b, stockRow("Yarrow")+`.nextElementSibling.nextElementSibling?.querySelector('.name')?.textContent ?? ''`)
	b.do(chromedp.Click(chromedp.CSS(b.mark(stockRow("Yarrow")+`.querySelector('button.danger')`, "remove"))))
	b.do(chromedp.Click(chromedp.CSS(`dialog.confirm button.danger`)))
	b.wait(stockRow("Yarrow")+` === undefined`, "Yarrow to be removed")
	want := `document.getElementById('main')`
	if next != "" {
		want = stockRow(next)
	}
	if !evalAs[bool](b, `(w => w.contains(document.activeElement))(`+want+`)`) {
		t.Errorf("after removing a pet, focus is on %s, want it in %s", evalAs[string](b, `document.activeElement.outerHTML.slice(0, 80)`), next)
	}
}
