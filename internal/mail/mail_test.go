package mail

import (
	"context"
	"errors"
	"net"
	netmail "net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/mail/mailtest"
)

// The tests send through a real SMTP server, Mailpit (package mailtest), and read
// what it received through its HTTP API.

const from = "Pet Store <shop@petstore.example>"

func newSender(t *testing.T, rawURL string) *Sender {
	t.Helper()
	s, err := New(rawURL, from)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func send(t *testing.T, s *Sender, m Message) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func TestSendDeliversAPlainTextMessage(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s := newSender(t, srv.URL("smtp", "", ""))
	long := strings.Repeat("0123456789", 120) // one line of 1,200 characters: over SMTP's 998
	text := "Hello Ann,\n\nyour invitation: https://shop.example/console/accept?token=psi_abc-_123\n" +
		".a line that starts with a dot\n" + "trailing spaces   \n" + "Grüße, 猫 🐈\r\n" + long + "\n=3D is not an escape\n"
	subject := "Your invitation to the Pet Store — café 🐈 " + strings.Repeat("ü", 60)
	before := time.Now().Truncate(time.Second)
	if err := send(t, s, Message{To: "Ann Example <ann@example.com>", Subject: subject, Text: text}); err != nil {
		t.Fatal(err)
	}
	got := srv.Messages(t)
	if len(got) != 1 {
		t.Fatalf("received %d messages, want 1", len(got))
	}
	m := got[0]
	if m.From != "shop@petstore.example" || len(m.To) != 1 || m.To[0] != "ann@example.com" {
		t.Errorf("From %q, To %q", m.From, m.To)
	}
	if m.Subject != subject {
		t.Errorf("Subject %q, want %q", m.Subject, subject)
	}
	if want := strings.ReplaceAll(text, "\r\n", "\n"); strings.ReplaceAll(m.Text, "\r\n", "\n") != want {
		t.Errorf("Text %q, want %q", m.Text, want)
	}
	for name, want := range map[string]string{
		"MIME-Version":              "1.0",
		"Content-Type":              "text/plain; charset=utf-8",
		"Content-Transfer-Encoding": "quoted-printable",
		"Auto-Submitted":            "auto-generated",
		"From":                      `"Pet Store" <shop@petstore.example>`,
		"To":                        `"Ann Example" <ann@example.com>`,
	} {
		if got := mailtest.Header(m.Raw, name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	date, err := netmail.ParseDate(mailtest.Header(m.Raw, "Date"))
	if err != nil || date.Before(before) || date.After(time.Now()) {
		t.Errorf("Date %q (%v): want the time of sending", mailtest.Header(m.Raw, "Date"), err)
	}
	if id := mailtest.Header(m.Raw, "Message-ID"); !regexp.MustCompile(`^<[0-9a-f]{32}@petstore\.example>$`).MatchString(id) {
		t.Errorf("Message-ID %q", id)
	}
	// Every line of what was sent is short, however long the text's lines: quoted-
	// printable breaks them, and the subject is folded.
	for i, line := range strings.Split(m.Raw, "\r\n") {
		if len(line) > 78 {
			t.Errorf("line %d has %d characters: %q", i, len(line), line)
		}
	}
}

func TestEveryMessageHasAMessageIDOfItsOwn(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s := newSender(t, srv.URL("smtp", "", ""))
	for range 3 {
		if err := send(t, s, Message{To: "ann@example.com", Subject: "Hello", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[string]bool{}
	for _, m := range srv.Messages(t) {
		ids[mailtest.Header(m.Raw, "Message-ID")] = true
	}
	if len(ids) != 3 {
		t.Fatalf("3 messages have %d Message-IDs", len(ids))
	}
}

// A line break in To or Subject would let the text write headers (a Bcc to anyone):
// it is refused, and so is anything that is not one address.
func TestAMessageThatCouldInjectHeadersIsRefusedAndNothingIsSent(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s := newSender(t, srv.URL("smtp", "", ""))
	for _, m := range []Message{
		{To: "ann@example.com\r\nBcc: eve@example.com", Subject: "Hi", Text: "x"},
		{To: "ann@example.com\nBcc: eve@example.com", Subject: "Hi", Text: "x"},
		{To: "ann@example.com", Subject: "Hi\r\nBcc: eve@example.com", Text: "x"},
		{To: "ann@example.com", Subject: "Hi\nBcc: eve@example.com", Text: "x"},
		{To: "ann@example.com", Subject: "Hi\rBcc: eve@example.com", Text: "x"},
		{To: "ann@example.com", Subject: "Hi\x00", Text: "x"},
		{To: "ann@example.com, eve@example.com", Subject: "Hi", Text: "x"},
		{To: "eve@example.com; ann@example.com", Subject: "Hi", Text: "x"},
		{To: "undisclosed-recipients:;", Subject: "Hi", Text: "x"},
		{To: "not an address", Subject: "Hi", Text: "x"},
		{To: `"ann smith"@example.com`, Subject: "Hi", Text: "x"},
		{To: "", Subject: "Hi", Text: "x"},
		{To: "ann@example.com", Subject: "", Text: "x"},
		{To: "ann@example.com", Subject: strings.Repeat("x", MaxSubject+1), Text: "x"},
		{To: "ann@example.com", Subject: "Hi", Text: "\xff\xfe"},
	} {
		err := send(t, s, m)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", m, err)
		}
	}
	// What is sent after them arrives alone.
	if err := send(t, s, Message{To: "ann@example.com", Subject: strings.Repeat("x", MaxSubject), Text: "x"}); err != nil {
		t.Fatal(err)
	}
	got := srv.Messages(t)
	if len(got) != 1 || len(got[0].To) != 1 || got[0].To[0] != "ann@example.com" || strings.Contains(got[0].Raw, "eve@") {
		t.Fatalf("received %d messages: %+v", len(got), got)
	}
}

func TestSTARTTLSWithAUTHPlainAndLogin(t *testing.T) {
	cert := mailtest.NewCert(t)
	// The user's password is percent-encoded in the URL, and decoded in AUTH.
	srv := mailtest.Start(t, mailtest.Options{TLS: cert, RequireSTARTTLS: true, Users: map[string]string{"shop": "p@ss/w%rd"}})
	for _, mechanism := range []string{"", "LOGIN"} {
		s := newSender(t, "smtp://shop:p%40ss%2Fw%25rd@"+srv.SMTP)
		s.tlsConfig.RootCAs = cert.Pool
		s.mechanism = mechanism
		if err := send(t, s, Message{To: "ann@example.com", Subject: "over STARTTLS " + mechanism, Text: "x"}); err != nil {
			t.Fatalf("AUTH %q: %v", mechanism, err)
		}
	}
	if got := srv.Messages(t); len(got) != 2 {
		t.Fatalf("received %d messages, want 2", len(got))
	}
	if log := srv.Log(); !strings.Contains(log, "AUTH PLAIN") || !strings.Contains(log, "AUTH LOGIN") {
		t.Errorf("the server's log does not show both mechanisms:\n%s", log)
	}

	// A certificate the client does not trust stops the exchange before anything is sent.
	s := newSender(t, "smtp://shop:p%40ss%2Fw%25rd@"+srv.SMTP)
	if err := send(t, s, Message{To: "ann@example.com", Subject: "untrusted", Text: "x"}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an untrusted certificate: %v", err)
	}
	if got := srv.Messages(t); len(got) != 2 {
		t.Fatalf("received %d messages, want 2", len(got))
	}
}

func TestImplicitTLS(t *testing.T) {
	cert := mailtest.NewCert(t)
	srv := mailtest.Start(t, mailtest.Options{TLS: cert, ImplicitTLS: true, Users: map[string]string{"shop": "secret"}})
	s := newSender(t, srv.URL("smtps", "shop", "secret"))
	s.tlsConfig.RootCAs = cert.Pool
	if err := send(t, s, Message{To: "ann@example.com", Subject: "over TLS", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	// smtp:// to a port that speaks TLS waits for a greeting that never comes: the
	// context ends it.
	plain := newSender(t, srv.URL("smtp", "shop", "secret"))
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := plain.Send(ctx, Message{To: "ann@example.com", Subject: "plain", Text: "x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("smtp:// to an implicit-TLS port: %v", err)
	}
	if got := srv.Messages(t); len(got) != 1 || got[0].Subject != "over TLS" {
		t.Fatalf("received %+v", got)
	}
}

func TestAWrongPasswordIsAnAuthenticationFailure(t *testing.T) {
	cert := mailtest.NewCert(t)
	srv := mailtest.Start(t, mailtest.Options{TLS: cert, Users: map[string]string{"shop": "secret"}})
	for _, mechanism := range []string{"", "LOGIN"} {
		s := newSender(t, srv.URL("smtp", "shop", "wrong"))
		s.tlsConfig.RootCAs = cert.Pool
		s.mechanism = mechanism
		err := send(t, s, Message{To: "ann@example.com", Subject: "Hi", Text: "x"})
		if err == nil || !strings.Contains(err.Error(), "AUTH") || !strings.Contains(err.Error(), "535") {
			t.Errorf("AUTH %q with a wrong password: %v", mechanism, err)
		}
		if err != nil && strings.Contains(err.Error(), "wrong") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	// Without credentials, a server that requires them refuses the mail.
	s := newSender(t, srv.URL("smtp", "", ""))
	s.tlsConfig.RootCAs = cert.Pool
	if err := send(t, s, Message{To: "ann@example.com", Subject: "Hi", Text: "x"}); err == nil {
		t.Error("no credentials for a server that requires them: no error")
	}
	if got := srv.Messages(t); len(got) != 0 {
		t.Fatalf("received %d messages, want none", len(got))
	}
}

// A server that offers no STARTTLS gets no password unless it is on loopback. The
// server here offers AUTH without TLS and would take it, on an address of this
// machine that is not loopback; it takes mail on loopback too.
func TestThePasswordIsNotSentWithoutTLSExceptToLoopback(t *testing.T) {
	ip := nonLoopbackAddress(t)
	srv := mailtest.Start(t, mailtest.Options{Host: ip, Users: map[string]string{"shop": "secret"}, AuthWithoutTLS: true})
	s := newSender(t, srv.URL("smtp", "shop", "secret"))
	err := send(t, s, Message{To: "ann@example.com", Subject: "Hi", Text: "x"})
	if err == nil || !strings.Contains(err.Error(), "without TLS") {
		t.Fatalf("a password to a server without STARTTLS: %v", err)
	}
	if log := srv.Log(); regexp.MustCompile(`received \([^)]*\) AUTH`).MatchString(log) {
		t.Errorf("AUTH reached the server:\n%s", log)
	}
	// Without a password, the mail goes (in clear text, as the package says).
	if err := send(t, newSender(t, srv.URL("smtp", "", "")), Message{To: "ann@example.com", Subject: "no password", Text: "x"}); err == nil {
		t.Fatal("the server requires AUTH, yet a mail without it was accepted")
	}
	if got := srv.Messages(t); len(got) != 0 {
		t.Fatalf("received %+v", got)
	}

	srv = mailtest.Start(t, mailtest.Options{Users: map[string]string{"shop": "secret"}, AuthWithoutTLS: true})
	// On loopback the password goes in clear text: the connection never leaves the machine.
	if !strings.HasPrefix(srv.SMTP, "127.0.0.1:") {
		t.Fatalf("mailpit listens on %s", srv.SMTP)
	}
	if err := send(t, newSender(t, srv.URL("smtp", "shop", "secret")), Message{To: "ann@example.com", Subject: "loopback", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Messages(t); len(got) != 1 || got[0].Subject != "loopback" {
		t.Fatalf("received %+v", got)
	}
}

// nonLoopbackAddress is an address of this machine that is not loopback (nor
// link-local); the test skips on a machine that has none.
func nonLoopbackAddress(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() || ok && n.IP.IsPrivate() {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no address but loopback")
	return ""
}

// A server that takes the connection and says nothing holds Send no longer than the
// context allows, whether it ends by its deadline or is cancelled.
func TestSendEndsWithItsContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
			accepted <- struct{}{}
		}
	}()
	s := newSender(t, "smtp://"+ln.Addr().String())
	m := Message{To: "ann@example.com", Subject: "Hi", Text: "x"}

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Send(ctx, m)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("deadline: %v after %v", err, time.Since(start))
	}

	<-accepted
	ctx, cancel = context.WithCancel(t.Context())
	go func() { <-accepted; cancel() }() // cancelled while it waits for the greeting
	start = time.Now()
	err = s.Send(ctx, m)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("cancel: %v after %v", err, time.Since(start))
	}
}
