package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/media/phototest"
	"github.com/chromedp/chromedp"
)

// TestShop runs the storefront (/shop) in headless Chromium against the real binary, as a
// customer on a phone (375 px wide) with the keyboard alone: signs up, finds a pet by its
// name and by one of its tags, sees its photo (loaded, from the srcset of the thumb and display sizes,
// lazily), meets the service's refusal when another customer took the stock meanwhile,
// orders it, sees the order in My orders, cancels it (after a confirmation) and signs out
// (the session's key is then refused), and signs in again. A tag on a card filters by
// it. Every screen is checked for horizontal scrolling
// at 375 px and with axe-core, the catalogue at desktop width and in dark too; the tab
// loads nothing from another origin, breaks no rule of the page's CSP, throws nothing
// and never puts the key in a URL.
func TestShop(t *testing.T) {
	chromium := findChromium(t)
	axe := axeSource(t)
	srv := startServer(t)
	if err := os.MkdirAll(outputDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pet := shopPet(t, srv)

	b := newBrowser(t, chromium)
	throttleCPU(t, b)
	b.do(chromedp.EmulateViewport(375, 812), chromedp.Navigate(srv.URL+"/shop"))
	b.wait(`!!document.querySelector('form.sign-up input[type=email]')`, "the welcome screen")
	fitsPhone(b, "the welcome screen")
	b.checkAccessibility(axe, "welcome, 375 px")
	b.screenshot("shop-welcome-375.png")

	const email, password = "shopper@example.com", "a long shop password"
	b.do(sendKeys(`form.sign-up input[type=email]`, email), sendKeys(`form.sign-up input[type=password]`, password+"\r"))
	b.wait(`document.querySelector('header .who .email')?.textContent === 'shopper@example.com'`, "the shop to open after sign-up")
	b.wait(`document.querySelector('main .count')?.textContent.endsWith('.') && !document.querySelector('main .count').textContent.startsWith('Loading')`, "the first page of pets")
	fitsPhone(b, "the catalogue")
	b.checkAccessibility(axe, "catalogue, 375 px")

	// Found by a part of its name, searched as it is typed; then the filters cleared.
	b.do(sendKeys(`form.filters input[name=name]`, "iscui"))
	b.wait(fmt.Sprintf(`document.querySelectorAll('ul.cards > li').length === 1 && !!document.querySelector('li[data-pet-id="%d"]')`, pet.id), "the pet found by its name")
	b.pressOn(`[...document.querySelectorAll('form.filters button')].find(e => e.textContent === 'Clear')`)
	b.wait(`document.querySelectorAll('ul.cards > li').length > 1`, "every pet again")

	// Found by its tag, typed in the filter and sent with Enter: the only pet that has it.
	b.do(sendKeys(`form.filters input[name=tags]`, pet.tag+"\r"))
	b.wait(fmt.Sprintf(`document.querySelectorAll('ul.cards > li').length === 1 && !!document.querySelector('li[data-pet-id="%d"]')`, pet.id), "the pet found by its tag")
	if r := b.waitRequest("GET", "/v1/pets"); !strings.Contains(r.URL, "tag="+url.QueryEscape(pet.tag)) {
		t.Errorf("the tag filter sent %s, want tag=%s", r.URL, pet.tag)
	}
	card := fmt.Sprintf(`document.querySelector('li[data-pet-id="%d"]')`, pet.id)
	b.checkPhoto(card, pet)
	b.screenshot("shop-375.png")

	// Another customer takes the stock while the card shows it: the service's refusal shows
	// in the card, which then says sold out.
	srv.call(t, srv.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", pet.id), map[string]any{"quantity": 0}, http.StatusOK, nil)
	b.pressOn(card + `.querySelector('form.order-form button')`)
	b.wait(card+`.querySelector('p.error')?.textContent.length > 0`, "the refusal in the card")
	if text := evalAs[string](b, card+`.innerText`); !strings.Contains(text, "Sold out") || !strings.Contains(strings.ToLower(text), "stock") {
		t.Errorf("after insufficient_stock the card reads %q, want the service's message and Sold out", text)
	}
	srv.call(t, srv.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", pet.id), map[string]any{"quantity": 2}, http.StatusOK, nil)
	b.do(sendKeys(`form.filters input[name=tags]`, "\r")) // search again: the stock is back
	b.wait(card+`?.querySelector('form.order-form') && `+card+`.querySelector('p.stock').textContent === '2 in stock'`, "the pet back in stock")

	b.pressOn(card + `.querySelector('form.order-form button')`)
	b.wait(`document.querySelector('.notices [role=status]')?.textContent.includes('placed')`, "the order to be placed")
	orderID := evalAs[float64](b, `Number(/Order #(\d+)/.exec(document.querySelector('.notices [role=status]').textContent)[1])`)
	b.pressOn(`document.querySelector('.notices [role=status] a')`) // See my orders
	order := fmt.Sprintf(`document.querySelector('li[data-order-id="%d"]')`, int64(orderID))
	b.wait(order+`?.innerText.includes('Open')`, "the order in My orders")
	if text := evalAs[string](b, order+`.innerText`); !strings.Contains(text, pet.name) || !strings.Contains(text, "12.50") {
		t.Errorf("My orders shows %q, want the pet's name and the total", text)
	}
	fitsPhone(b, "My orders")
	b.checkAccessibility(axe, "my orders, 375 px")

	// Cancel, confirmed in the dialog by the keyboard: Tab from "Keep it" to the confirmation.
	b.pressOn(order + `.querySelector('button.danger')`)
	b.wait(`document.querySelector('dialog.confirm')?.open && document.activeElement?.textContent === 'Keep it'`, "the confirmation")
	b.checkAccessibility(axe, "the cancel confirmation, 375 px")
	b.do(chromedp.KeyEvent("\t"), chromedp.KeyEvent("\r"))
	b.wait(order+`?.innerText.includes('Cancelled') && !`+order+`.querySelector('button')`, "the order cancelled")
	var got struct{ Status string }
	srv.call(t, srv.AdminKey, "GET", fmt.Sprintf("/store/orders/%d", int64(orderID)), nil, http.StatusOK, &got)
	if got.Status != "cancelled" {
		t.Errorf("the service has the order %s, want cancelled", got.Status)
	}
	b.screenshot("shop-orders-375.png")

	t.Run("desktop and dark", func(t *testing.T) {
		b := b.in(t)
		b.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/shop#pets"))
		b.wait(`document.querySelectorAll('ul.cards > li').length > 1`, "the catalogue, signed in still (the tab's session)")
		b.checkAccessibility(axe, "catalogue, desktop")
		// A tag on a card filters by it: every card then has it, and focus is on the count.
		b.pressOn(`[...document.querySelectorAll('ul.cards button.tag')].find(e => e.textContent.endsWith('calm'))`)
		b.wait(`document.querySelector('form.filters input[name=tags]').value === 'calm' && document.activeElement?.classList.contains('count')`, "the list of the pets tagged calm")
		if every := evalAs[bool](b, `[...document.querySelectorAll('ul.cards > li')].every(li => [...li.querySelectorAll('button.tag')].some(e => e.textContent.endsWith('calm')))`); !every {
			t.Error("a pet without the tag calm is listed under it")
		}
		setColorScheme(b, "dark")
		b.checkAccessibility(axe, "catalogue, desktop, dark")
		b.screenshot("shop-desktop-dark.png")
		setColorScheme(b, "")
	})

	t.Run("sign out revokes the session's key", func(t *testing.T) {
		b := b.in(t)
		key := evalAs[string](b, `JSON.parse(sessionStorage.getItem('petstore.shop.session')).key`)
		b.pressOn(`[...document.querySelectorAll('header button')].find(e => e.textContent === 'Sign out')`)
		b.wait(`!!document.querySelector('form.sign-in input[type=email]')`, "the welcome screen after sign-out")
		if kept := evalAs[bool](b, `sessionStorage.getItem('petstore.shop.session') !== null`); kept {
			t.Error("the session is still in sessionStorage")
		}
		srv.call(t, key, "GET", "/accounts/me", nil, http.StatusUnauthorized, nil)
	})

	t.Run("sign in again: a wrong password is told, the right one opens the shop", func(t *testing.T) {
		b := b.in(t)
		b.do(sendKeys(`form.sign-in input[type=email]`, email), sendKeys(`form.sign-in input[type=password]`, "not the password\r"))
		b.wait(`document.querySelector('form.sign-in [role=alert]')?.textContent.length > 0`, "the refusal")
		b.do(sendKeys(`form.sign-in input[type=password]`, password+"\r")) // the wrong one is selected: typing replaces it
		b.wait(`document.querySelector('header .who .email')?.textContent === 'shopper@example.com'`, "the shop to open after sign-in")
	})

	t.Run("only its own origin, no CSP violation, no key in a URL", func(t *testing.T) {
		b := b.in(t)
		for _, r := range b.allRequests() {
			if !strings.HasPrefix(r.URL, srv.URL+"/") && !strings.HasPrefix(r.URL, "data:") {
				t.Errorf("the page loaded %s from another origin", r.URL)
			}
			if strings.Contains(r.URL, "psk_") {
				t.Errorf("a key in a URL: %s", r.URL)
			}
		}
		if v := evalAs[[]map[string]any](b, `window.__e2e.csp`); len(v) > 0 {
			t.Errorf("CSP violations: %v", v)
		}
		for _, e := range b.exceptionTexts() {
			t.Errorf("uncaught exception in the page: %s", e)
		}
	})
}

// shopTestPet is the pet TestShop looks for: one of the demo's dogs with a tag no other
// pet has, a description, a price of 12.50, two in stock and a 1600×1200 photo (a thumb 400 px wide, a display size 1,200).
type shopTestPet struct {
	id        int64
	name, tag string
	thumb     string // its photo's thumb URL
	display   string
}

func shopPet(t *testing.T, srv *server) shopTestPet {
	t.Helper()
	var categories []category
	srv.call(t, srv.AdminKey, "GET", "/categories?limit=100", nil, http.StatusOK, &categories)
	dogs := categoryID(t, categories, "Dogs")
	p := shopTestPet{name: "Biscuit", tag: "shop-e2e"}
	var created struct{ ID int64 }
	srv.call(t, srv.AdminKey, "POST", "/pets", map[string]any{"name": p.name, "categoryId": dogs, "price": 1250,
		"description": "A calm beagle who likes long walks.", "tags": []string{p.tag, "calm"}}, http.StatusCreated, &created)
	p.id = created.ID
	srv.call(t, srv.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", p.id), map[string]any{"quantity": 2}, http.StatusOK, nil)
	req, err := http.NewRequest("POST", fmt.Sprintf("%s/v1/pets/%d/photos", srv.URL, p.id), bytes.NewReader(phototest.PNG(t, 1600, 1200)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "image/png")
	req.Header.Set("Authorization", "Bearer "+srv.AdminKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("upload the photo: %d %s", res.StatusCode, body)
	}
	var photo struct {
		URLs struct{ Thumb, Display string } `json:"urls"`
	}
	if err := json.Unmarshal(body, &photo); err != nil {
		t.Fatal(err)
	}
	p.thumb, p.display = photo.URLs.Thumb, photo.URLs.Display
	return p
}

// checkPhoto waits until the card's photo has loaded (lazily: it is in view) and checks
// what it was made from: the pet's name as alt text, the thumb and display sizes.
func (b *browser) checkPhoto(card string, pet shopTestPet) {
	b.t.Helper()
	img := card + `.querySelector('img.photo')`
	evalAs[bool](b, `(`+img+`.scrollIntoView({block: 'center'}), true)`)
	b.wait(img+`.complete && `+img+`.naturalWidth > 0`, "the pet's photo to load")
	got := evalAs[map[string]string](b, `(() => { const i = `+img+`; return {alt: i.alt, loading: i.loading, srcset: i.srcset, src: i.currentSrc}; })()`)
	origin := b.origin()
	want := fmt.Sprintf("%s%s 400w, %s%s 1200w", origin, pet.thumb, origin, pet.display)
	if got["alt"] != pet.name || got["loading"] != "lazy" || got["srcset"] != want {
		b.t.Errorf("the photo is %v, want alt %q, lazy, srcset %q", got, pet.name, want)
	}
	if !strings.HasPrefix(got["src"], origin+"/v1/photos/") {
		b.t.Errorf("the photo came from %s", got["src"])
	}
}

// pressOn focuses the element the expression yields and presses Enter: the keyboard's click.
func (b *browser) pressOn(js string) {
	b.t.Helper()
	b.do(chromedp.Focus(b.mark(js, "press")), chromedp.KeyEvent("\r"))
}

func (b *browser) origin() string {
	return evalAs[string](b, `location.origin`)
}
