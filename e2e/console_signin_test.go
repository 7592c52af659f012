package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The sign-in with email and password, the one-time links and the Staff screen's
// invitations (console/src/signin.ts, staff.ts).

const invitedPassword = "a long staff password 42"

// sessionKey is the session the tab keeps in sessionStorage ("" for none).
func sessionKey(b *browser) (id int64, key string) {
	b.t.Helper()
	raw := evalAs[string](b, `sessionStorage.getItem('petstore.console.session') ?? ''`)
	if raw == "" {
		return 0, ""
	}
	var s struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		b.t.Fatalf("the kept session %q: %v", raw, err)
	}
	return s.ID, s.Key
}

// invite invites email from the Staff screen (the console signed in) and returns the
// link's path and query, read from the page, which says whether the server mailed it.
func (sc *scene) invite(email string, mailed bool) string {
	sc.t.Helper()
	t, b := sc.t, sc.b
	b.openScreen("staff")
	b.do(chromedp.Click(chromedp.CSS(`details.add summary`)))
	b.do(sendKeys(`form.invite-form input[name=email]`, email+"\r"))
	b.wait(`!document.querySelector('.created').hidden && document.querySelector('.created input.secret')?.value.includes('/console/accept?token=psi_')`, "the invitation's link")
	want := map[bool]string{true: "It was mailed to " + email, false: "It was not mailed"}[mailed]
	if text := evalAs[string](b, `document.querySelector('.created').textContent`); !strings.Contains(text, want) || !strings.Contains(text, email) {
		t.Errorf("the invitation reads %q: want the email, and %q", text, want)
	}
	b.checkAccessibility(sc.axe, "staff, an invitation")
	link, err := url.Parse(evalAs[string](b, `document.querySelector('.created input.secret').value`))
	if err != nil {
		t.Fatal(err)
	}
	return link.RequestURI()
}

// invitedPersonSignsIn: an admin invites a person from the Staff screen; the person
// opens the link (its token leaves the address bar at once), chooses a password and is
// signed in with a session key, kept in the tab only (a reload stays signed in, a new
// tab asks); restocks a pet (a clerk's task); signs out, which revokes the session key
// (it answers 401); the link does not work twice; and the password signs in again.
func invitedPersonSignsIn(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	gingersnap := sc.pet("Gingersnap", 0)
	email := fmt.Sprintf("invited%d@example.com", sc.scenes.Load())
	sc.signInAsStaff()
	link := sc.invite(email, false)
	sc.signOut()
	b.wait(`document.querySelector('form.sign-in') !== null`, "the sign-in")

	b.do(chromedp.Navigate(srv.URL + link))
	b.wait(`document.querySelector('form.sign-in-token input[name=password]') !== null`, "the page that sets the password")
	if got := evalAs[string](b, `location.href`); got != srv.URL+"/console" {
		t.Errorf("the address bar shows %s, want the token gone: %s/console", got, srv.URL)
	}
	b.checkAccessibility(sc.axe, "accept an invitation")
	b.do(chromedp.EmulateViewport(375, 812))
	fitsPhone(b, "accept an invitation")
	b.screenshot("console-accept-phone.png")
	b.do(chromedp.EmulateViewport(1280, 900))
	// Two different passwords are caught before anything is sent.
	b.do(sendKeys(`form.sign-in-token input[name=password]`, invitedPassword))
	b.do(sendKeys(`form.sign-in-token input[name=passwordAgain]`, invitedPassword+"x\r"))
	b.wait(`document.querySelector('form.sign-in-token [role=alert]').textContent.includes('differ')`, "the passwords to differ")
	if _, sent := b.request("POST", "/v1/invitations/accept"); sent {
		t.Error("two different passwords were sent")
	}
	evalAs[bool](b, `(document.querySelector('form.sign-in-token input[name=passwordAgain]').value = '', true)`)
	b.do(sendKeys(`form.sign-in-token input[name=passwordAgain]`, invitedPassword+"\r"))
	b.wait(fmt.Sprintf(`document.querySelector('header .who')?.textContent.includes(%q)`, email), "the console, signed in as the invited person")
	id, key := sessionKey(b)
	if !strings.HasPrefix(key, "psk_") {
		t.Fatalf("the tab keeps no session key: %q", key)
	}
	if got := evalAs[string](b, `JSON.stringify(Object.entries(localStorage)) + document.cookie`); strings.Contains(got, "psk_") {
		t.Errorf("the session key is in localStorage or a cookie: %q", got)
	}

	// A reload of the tab stays signed in; another tab asks again.
	b.do(chromedp.Reload())
	b.wait(fmt.Sprintf(`document.querySelector('header .who')?.textContent.includes(%q)`, email), "the console after a reload")
	other := sc.browser.newTab(t)
	other.do(chromedp.Navigate(srv.URL + "/console"))
	other.wait(`document.querySelector('form.sign-in-password input[name=email]') !== null`, "the sign-in in a new tab")

	// A clerk's task: restock.
	sc.findPet("Gingersnap")
	input := b.mark(stockRow("Gingersnap")+`.querySelector('input[name=quantity]')`, "stock")
	evalAs[bool](b, `(document.querySelector('`+input+`').value = '', true)`)
	b.do(sendKeys(input, "4\r"))
	b.wait(`document.querySelector('.notice[role=status]')?.textContent === 'Gingersnap: stock 4, available.'`, "the restock")
	if got := srv.stock(t, gingersnap.ID); got.Quantity != 4 {
		t.Errorf("stock in the API %d, want 4", got.Quantity)
	}

	// Sign out revokes the session key.
	sc.signOut()
	b.wait(`document.querySelector('form.sign-in-password [role=alert]')?.textContent.includes('revoked')`, "the sign-out")
	if _, k := sessionKey(b); k != "" {
		t.Error("the session key is still kept after the sign-out")
	}
	if r, ok := b.request("DELETE", fmt.Sprintf("/v1/api-keys/%d", id)); !ok {
		t.Errorf("the sign-out did not revoke the session key %d: %+v", id, r)
	}
	if status := keyStatus(t, srv, key); status != http.StatusUnauthorized {
		t.Errorf("the session key answers %d after the sign-out, want 401", status)
	}

	linkWorksOnceAndPasswordSignsIn(sc, link, email)
}

// linkWorksOnceAndPasswordSignsIn: a used invitation link says so and leads to the
// sign-in, where the password chosen with it signs in (by the keyboard).
func linkWorksOnceAndPasswordSignsIn(sc *scene, link, email string) {
	t, b, srv := sc.t, sc.b, sc.srv
	b.do(chromedp.Navigate(srv.URL + link))
	b.wait(`document.querySelector('form.sign-in-token input[name=password]') !== null`, "the link's page again")
	b.do(sendKeys(`form.sign-in-token input[name=password]`, invitedPassword))
	b.do(sendKeys(`form.sign-in-token input[name=passwordAgain]`, invitedPassword+"\r"))
	b.wait(`document.querySelector('form.sign-in-token [role=alert]')?.textContent.includes('not valid')`, "the used link refused")
	if got := evalAs[string](b, `document.activeElement?.textContent ?? ''`); got != "Go to sign-in" {
		t.Errorf("focus on %q after the refusal, want Go to sign-in", got)
	}
	press(b, kb.Enter)

	// The password signs in (by the keyboard: Tab from the email to the password).
	b.wait(`document.activeElement?.name === 'email'`, "the sign-in, the email focused")
	b.do(chromedp.KeyEvent(email))
	press(b, kb.Tab)
	b.do(chromedp.KeyEvent(invitedPassword + "\r"))
	b.wait(fmt.Sprintf(`document.querySelector('header .who')?.textContent.includes(%q)`, email), "the console, signed in with the password")
	sc.signOut()
	b.wait(`document.querySelector('form.sign-in-password [role=alert]')?.textContent.includes('revoked')`, "the second sign-out")
}

// signInRefusals: a wrong password, and a customer's right one, are refused on the
// sign-in (the customer's session key revoked at once); "Forgot password?" on a
// server without mail says so (503) for any email.
func signInRefusals(sc *scene) {
	t, b, srv := sc.t, sc.b, sc.srv
	b.checkAccessibility(sc.axe, "sign-in")
	b.do(chromedp.EmulateViewport(375, 812))
	fitsPhone(b, "sign-in")
	b.screenshot("console-sign-in-phone.png")
	setColorScheme(b, "dark")
	b.checkAccessibility(sc.axe, "sign-in, phone, dark")
	setColorScheme(b, "")
	b.do(chromedp.EmulateViewport(1280, 900))

	b.do(sendKeys(`form.sign-in-password input[name=email]`, "nobody@example.com"))
	b.do(sendKeys(`form.sign-in-password input[name=password]`, "not the password at all\r"))
	b.wait(`document.querySelector('form.sign-in-password [role=alert]')?.textContent !== ''`, "the refusal")
	if got := evalAs[string](b, `document.activeElement?.name ?? ''`); got != "password" {
		t.Errorf("focus on %q after a refused sign-in, want the password", got)
	}

	// A customer with a password: signed up through the API.
	customer := fmt.Sprintf("shopper%d@example.com", sc.scenes.Load())
	srv.call(t, "", "POST", "/accounts", map[string]any{"email": customer, "password": invitedPassword}, http.StatusCreated, nil)
	evalAs[bool](b, `(document.querySelector('form.sign-in-password input[name=email]').value = '', document.querySelector('form.sign-in-password input[name=password]').value = '', true)`)
	b.do(sendKeys(`form.sign-in-password input[name=email]`, customer))
	b.do(sendKeys(`form.sign-in-password input[name=password]`, invitedPassword+"\r"))
	b.wait(`document.querySelector('form.sign-in-password [role=alert]')?.textContent.includes('The console is for shop staff')`, "the customer refused")
	revoked := false
	for _, r := range b.allRequests() {
		revoked = revoked || (r.Method == "DELETE" && strings.Contains(r.URL, "/v1/api-keys/"))
	}
	if !revoked {
		t.Error("the customer's session key was not revoked")
	}
	if _, k := sessionKey(b); k != "" {
		t.Error("a customer's session key is kept")
	}

	b.do(chromedp.Click(chromedp.CSS(`form.sign-in-password button.link`)))
	b.wait(`document.querySelector('form.sign-in-forgot input[name=email]') !== null`, "the forgot-password form")
	b.checkAccessibility(sc.axe, "forgot password")
	evalAs[bool](b, `(document.querySelector('form.sign-in-forgot input[name=email]').value = '', true)`)
	b.do(sendKeys(`form.sign-in-forgot input[name=email]`, "anyone@example.com\r"))
	b.wait(`document.querySelector('form.sign-in-forgot [role=alert]')?.textContent.includes('not configured')`, "the 503 of a server without mail")
}
