package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/acme-pets/petstore/internal/mail/mailtest"
	"github.com/chromedp/chromedp"
)

// mailedLink finds the one-time link of kind ("accept" or "reset") in the mail to
// email, and returns it whole.
func mailedLink(sc *scene, box *mailtest.Server, n int, email, kind string) string {
	sc.t.Helper()
	re := regexp.MustCompile(`https?://\S+/console/` + kind + `\?token=ps[ir]_[A-Za-z0-9_-]+`)
	for _, m := range box.WaitMessages(sc.t, n) {
		if len(m.To) == 1 && m.To[0] == email {
			if link := re.FindString(m.Text); link != "" {
				return link
			}
		}
	}
	sc.t.Fatalf("no mail to %s with a %s link", email, kind)
	return ""
}

// setPassword fills the page a one-time link opened and submits it.
func setPassword(b *browser, password string) {
	b.t.Helper()
	b.wait(`document.querySelector('form.sign-in-token input[name=password]') !== null`, "the page that sets the password")
	b.do(sendKeys(`form.sign-in-token input[name=password]`, password))
	b.do(sendKeys(`form.sign-in-token input[name=passwordAgain]`, password+"\r"))
}

// mailedLinksSignIn runs on a server of its own that mails through a real Mailpit,
// with a public URL of its own: an invitation made on the Staff screen is mailed (and
// says so), its mailed link (which starts with the public URL) sets the password; then
// "Forgot password?" mails a reset link, which sets a new password and signs in; the
// old password no longer does.
func mailedLinksSignIn(sc *scene) {
	t := sc.t
	box := mailtest.Start(t, mailtest.Options{})
	srv := startServer(t, "--smtp-url", box.URL("smtp", "", ""), "--public-url", "https://shop.example")
	own := (&consoleSuite{srv: srv, browser: sc.browser, axe: sc.axe}).scene(t)
	b := own.b
	email := "mailed@example.com"
	own.signInAsStaff()
	own.invite(email, true)
	own.signOut()
	b.wait(`document.querySelector('form.sign-in') !== null`, "the sign-in")

	invitation := mailedLink(own, box, 1, email, "accept")
	if !strings.HasPrefix(invitation, "https://shop.example/console/accept?token=psi_") {
		t.Errorf("the mailed link %s does not start with the public URL", invitation)
	}
	link, err := url.Parse(invitation)
	if err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Navigate(srv.URL + link.RequestURI()))
	setPassword(b, invitedPassword)
	b.wait(fmt.Sprintf(`document.querySelector('header .who')?.textContent.includes(%q)`, email), "signed in by the invitation")
	own.signOut()
	b.wait(`document.querySelector('form.sign-in-password [role=alert]')?.textContent.includes('revoked')`, "the sign-out")

	// Forgot password: the link is mailed.
	b.do(chromedp.Click(chromedp.CSS(`form.sign-in-password button.link`)))
	b.wait(`document.querySelector('form.sign-in-forgot input[name=email]') !== null`, "the forgot-password form")
	evalAs[bool](b, `(document.querySelector('form.sign-in-forgot input[name=email]').value = '', true)`)
	b.do(sendKeys(`form.sign-in-forgot input[name=email]`, email+"\r"))
	b.wait(`document.querySelector('form.sign-in-forgot [role=status]')?.textContent !== ''`, "the answer to the request")
	reset := mailedLink(own, box, 2, email, "reset")
	link, err = url.Parse(reset)
	if err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Navigate(srv.URL + link.RequestURI()))
	b.wait(`document.querySelector('form.sign-in-token') !== null && location.search === ''`, "the reset page, the token gone from the address")
	b.checkAccessibility(own.axe, "reset the password")
	newPassword := "another staff password 7"
	setPassword(b, newPassword)
	b.wait(fmt.Sprintf(`document.querySelector('header .who')?.textContent.includes(%q)`, email), "signed in by the reset")
	if _, key := sessionKey(b); !strings.HasPrefix(key, "psk_") {
		t.Error("the reset's session is not kept in the tab")
	}
	srv.call(t, "", "POST", "/sessions", map[string]any{"email": email, "password": invitedPassword}, http.StatusUnauthorized, nil)
	srv.call(t, "", "POST", "/sessions", map[string]any{"email": email, "password": newPassword}, http.StatusCreated, nil)
	own.signOut()
	b.wait(`document.querySelector('form.sign-in-password [role=alert]')?.textContent.includes('revoked')`, "the sign-out")
	own.checkTabStayedHome()
}
