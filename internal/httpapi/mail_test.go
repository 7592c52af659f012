package httpapi_test

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/mail"
	"github.com/acme-pets/petstore/internal/mail/mailtest"
	"github.com/acme-pets/petstore/internal/petstore"
)

// withMailpit starts a real Mailpit and has the server mail through it.
func withMailpit(t *testing.T) (apiOption, *mailtest.Server) {
	t.Helper()
	box := mailtest.Start(t, mailtest.Options{})
	sender, err := mail.New(box.URL("smtp", "", ""), "Pet Store <petstore@shop.example.com>")
	if err != nil {
		t.Fatal(err)
	}
	return func(c *httpapi.Config) { c.Mailer = sender }, box
}

// linkIn finds the link to page in a mail's text and returns its token.
func linkIn(t *testing.T, text, prefix, page string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(prefix+page) + `\?token=(ps[ir]_[A-Za-z0-9_-]{43})`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s%s link in the mail:\n%s", prefix, page, text)
	}
	return m[1]
}

func TestAnInvitationIsMailedAndTheMailedLinkWorks(t *testing.T) {
	mailer, box := withMailpit(t)
	a := newTestAPI(t, mailer, withPublicURL("https://shop.example.com"), noCredentialLimit)
	var inv invitation
	a.do(t, req{Method: "POST", Path: "/v1/invitations", Key: a.Admin, Body: `{"email":"clerk@example.com","role":"customer"}`}).expect(201, "").JSON(&inv)
	if !inv.Mailed {
		t.Fatalf("mailed = false with a mail server: %+v", inv)
	}
	got := box.WaitMessages(t, 1)[0]
	if !slices.Equal(got.To, []string{"clerk@example.com"}) || got.From != "petstore@shop.example.com" || !strings.Contains(got.Text, inv.URL) {
		t.Fatalf("the mail: to %v from %s, text:\n%s", got.To, got.From, got.Text)
	}
	token := linkIn(t, got.Text, "https://shop.example.com", "/console/accept")
	var s session
	a.accept(t, token, "clerk horse battery").expect(201, "").JSON(&s)
	if s.Account.Email != "clerk@example.com" || s.Account.Role != "customer" {
		t.Errorf("the mailed link made %+v", s.Account)
	}
}

func TestAPasswordResetIsMailedToAnAccountWithAPasswordAndItsLinkWorks(t *testing.T) {
	mailer, box := withMailpit(t)
	a := newTestAPI(t, mailer, withPublicURL("https://shop.example.com/petstore/"), noCredentialLimit)
	a.signUp(t, "kate@example.com", "correct horse battery")
	var before session
	a.signIn(t, "kate@example.com", "correct horse battery").expect(201, "").JSON(&before)
	// The same answer for every email: an account with a password, none, a key-only
	// one, a disabled one; only the first gets a mail.
	a.signUp(t, "gone@example.com", "correct horse battery")
	gone, _, err := a.Store.AccountByEmail(t.Context(), "gone@example.com")
	if err != nil {
		t.Fatal(err)
	}
	a.patchAccount(t, a.Admin, gone.ID, `{"disabled":true}`).expect(200, "")
	var first string
	for _, email := range []string{"Kate@example.com", "nobody@example.com", "customer@example.com", "gone@example.com"} {
		res := a.do(t, req{Method: "POST", Path: "/v1/password-resets", Body: map[string]string{"email": email}}).expect(202, "")
		if first == "" {
			first = string(res.Body)
		} else if string(res.Body) != first {
			t.Errorf("%s: %s, another email: %s", email, res.Body, first)
		}
	}
	a.Server.WaitBackground()
	msgs := box.WaitMessages(t, 1)
	if len(msgs) != 1 || !slices.Equal(msgs[0].To, []string{"kate@example.com"}) {
		t.Fatalf("mails: %+v, want one to kate@example.com", msgs)
	}
	token := linkIn(t, msgs[0].Text, "https://shop.example.com/petstore", "/console/reset")
	var after session
	a.resetWith(t, token, "a new horse battery").expect(201, "").JSON(&after)
	if after.Account.Email != "kate@example.com" {
		t.Errorf("reset %+v", after.Account)
	}
	a.signIn(t, "kate@example.com", "a new horse battery").expect(201, "")
	a.signIn(t, "kate@example.com", "correct horse battery").expect(401, petstore.EUnauthorized)
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: before.Key.Key}).expect(401, petstore.EUnauthorized)
	a.resetWith(t, token, "a third horse battery").expect(400, petstore.EInvalidToken)
	// The mailed link never takes the Host of the request that asked for it.
	a.do(t, req{Method: "POST", Path: "/v1/password-resets", Body: `{"email":"kate@example.com"}`,
		Header: map[string]string{"Host": "evil.example", "X-Forwarded-Host": "evil.example"}}).expect(202, "")
	a.Server.WaitBackground()
	last := box.WaitMessages(t, 2)[1]
	if strings.Contains(last.Text, "evil.example") {
		t.Errorf("a reset link took the request's Host:\n%s", last.Text)
	}
	u, _ := url.Parse(regexp.MustCompile(`https?://\S+`).FindString(last.Text))
	if u == nil || u.Host != "shop.example.com" {
		t.Errorf("the link is on %v", u)
	}
}

// TestOWASP_Tokens_ResetTimeDoesNotTellAccounts: the answer comes before the lookup
// and the mail, so an email with an account (which gets a mail) answers in the time
// of one without.
func TestOWASP_Tokens_ResetTimeDoesNotTellAccounts(t *testing.T) {
	mailer, _ := withMailpit(t)
	a := newTestAPI(t, mailer, noCredentialLimit)
	a.signUp(t, "kate@example.com", "correct horse battery")
	const rounds = 20
	times := map[string][]time.Duration{}
	for range rounds {
		for _, email := range []string{"kate@example.com", "nobody@example.com"} {
			start := time.Now()
			a.do(t, req{Method: "POST", Path: "/v1/password-resets", Body: map[string]string{"email": email}}).expect(202, "")
			times[email] = append(times[email], time.Since(start))
			a.Server.WaitBackground() // one mail at a time, so that none waits for a slot
		}
	}
	known, unknown := lowerQuartile(times["kate@example.com"]), lowerQuartile(times["nobody@example.com"])
	t.Logf("lower quartiles: known %s, unknown %s", known, unknown)
	if known > unknown*2+time.Millisecond || unknown > known*2+time.Millisecond {
		t.Errorf("a known email answers in %s, an unknown one in %s: the time tells them apart", known, unknown)
	}
}

// TestResetMailsToOneAddressAreLimited: requests from any number of addresses send
// one mailbox as many reset mails as an email has failed logins (5), then one a minute.
func TestResetMailsToOneAddressAreLimited(t *testing.T) {
	mailer, box := withMailpit(t)
	a := newTestAPI(t, mailer, noCredentialLimit)
	a.signUp(t, "kate@example.com", "correct horse battery")
	for i := range 8 {
		a.do(t, req{Method: "POST", Path: "/v1/password-resets", Body: `{"email":"kate@example.com"}`, From: fmt.Sprintf("127.0.0.%d", 30+i)}).expect(202, "")
		a.Server.WaitBackground()
	}
	if got := len(box.WaitMessages(t, 5)); got != 5 {
		t.Errorf("%d reset mails to one address, want 5", got)
	}
}
