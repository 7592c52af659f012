// Package mail sends the service's mail (invitations, password resets) through an SMTP
// server named by a URL:
//
//	smtp://user:password@host:587    STARTTLS when the server offers it (port 587 by default)
//	smtps://user:password@host:465   TLS from the first byte, "implicit TLS" (port 465 by default)
//	smtp://127.0.0.1:1025            no credentials: a local relay or a test server
//
// Credentials are percent-encoded in the URL (a "/" is %2F, an "@" is %40). They are
// never sent over a connection without TLS unless the host is loopback (localhost,
// 127.0.0.0/8, ::1): a server that does not offer STARTTLS, or one whose offer is
// stripped on the way, gets no password, and the mail is not sent. Mail without
// credentials goes in clear text to a server that does not offer STARTTLS; use
// smtps://, or a relay on loopback, where the network between is not trusted.
// Certificates are checked against the system's roots (SSL_CERT_FILE and SSL_CERT_DIR
// add a private CA) and the host name of the URL.
//
// It uses the standard library's net/smtp: what a notification needs (STARTTLS,
// implicit TLS, AUTH PLAIN) is there, the few lines it lacks (AUTH LOGIN, which
// some providers offer alone, and a deadline on the connection) are written here, and
// it adds no dependency to the module.
package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultTimeout bounds a Send whose context has no deadline: the whole exchange
// with the server, from the dial to the last answer.
const DefaultTimeout = 30 * time.Second

// Sender sends mail through one SMTP server, from one address. It is safe for
// concurrent use: each Send opens a connection of its own.
type Sender struct {
	host     string // the server's host name (or IP), as in the URL
	addr     string // host:port
	implicit bool   // smtps://: TLS from the first byte
	user     string
	password string
	auth     bool // credentials were given
	from     *mail.Address
	hello    string // the name given in EHLO

	// tlsConfig is the base of every TLS handshake (ServerName is set from host);
	// tests give it their own roots.
	tlsConfig *tls.Config
	// mechanism forces an AUTH mechanism ("PLAIN" or "LOGIN"); "" picks PLAIN when
	// the server offers it, else LOGIN. Tests set it to try LOGIN.
	mechanism string
}

// New reads rawURL (smtp:// or smtps://, see the package's documentation) and the
// From address (an address net/mail accepts, "Pet Store <shop@example.com>" or
// "shop@example.com"). It opens no connection. Its errors never quote the URL, so
// they hold no password.
func New(rawURL, from string) (*Sender, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("the SMTP URL cannot be read: want smtp://user:password@host:port or smtps://…")
	}
	s := &Sender{tlsConfig: &tls.Config{MinVersion: tls.VersionTLS12}}
	port := ""
	switch u.Scheme {
	case "smtp":
		port = "587"
	case "smtps":
		port, s.implicit = "465", true
	default:
		return nil, fmt.Errorf("the SMTP URL's scheme is %q: want smtp (STARTTLS when offered) or smtps (implicit TLS)", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("the SMTP URL has no host: want smtp://user:password@host:port")
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("the SMTP URL has a path, a query or a fragment: want smtp://user:password@host:port and nothing after")
	}
	if p := u.Port(); p != "" {
		port = p
	}
	s.host = u.Hostname()
	s.addr = net.JoinHostPort(s.host, port)
	if u.User != nil {
		s.user = u.User.Username()
		pw, ok := u.User.Password()
		if s.user == "" || !ok || pw == "" {
			return nil, errors.New("the SMTP URL has a user part without a user name and a password: want smtp://user:password@host")
		}
		s.password, s.auth = pw, true
	}
	if s.from, err = parseAddress(from); err != nil {
		return nil, fmt.Errorf("the From address: %w", err)
	}
	s.hello = helloName()
	return s, nil
}

// Host is the server's host and port, to name it in logs (the URL has a password).
func (s *Sender) Host() string { return s.addr }

// From is the address the mail comes from.
func (s *Sender) From() string { return s.from.String() }

// helloName is the name this machine gives in EHLO: its host name (servers log it;
// some refuse a bare "localhost"), else localhost.
func helloName() string {
	h, err := os.Hostname()
	if err != nil || h == "" || strings.ContainsAny(h, " \r\n") {
		return "localhost"
	}
	return h
}

// Send sends m, through one SMTP exchange, within ctx: its deadline (or
// DefaultTimeout) bounds the connection, and ending ctx cuts it. A nil error means
// the server accepted the message for delivery.
func (s *Sender) Send(ctx context.Context, m Message) error {
	to, msg, err := s.compose(m, time.Now())
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	err = s.send(ctx, to, msg)
	if err == nil {
		return nil
	}
	cause := ctx.Err()
	if cause == nil && errors.Is(err, os.ErrDeadlineExceeded) {
		// The connection's deadline is ctx's, and can pass a moment before ctx says so.
		cause = context.DeadlineExceeded
	}
	if cause != nil {
		return fmt.Errorf("mail via %s: %w (%v)", s.addr, cause, err)
	}
	return fmt.Errorf("mail via %s: %w", s.addr, err)
}

// send dials the server and runs the exchange; ctx has a deadline.
func (s *Sender) send(ctx context.Context, to string, msg []byte) (err error) {
	conn, err := s.dial(ctx)
	if err != nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		conn.Close()
		return err
	}
	// Ending ctx early (a cancel) cuts whatever the exchange waits for.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if err := c.Hello(s.hello); err != nil {
		return err
	}
	secure := s.implicit
	if !secure {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tls()); err != nil {
				return fmt.Errorf("STARTTLS: %w", err)
			}
			secure = true
		}
	}
	if s.auth {
		if err := s.authenticate(c, secure); err != nil {
			return err
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return fmt.Errorf("MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("the message was refused: %w", err)
	}
	// The message is accepted; a failed QUIT changes nothing.
	_ = c.Quit()
	return nil
}

// dial opens the connection: plain TCP for smtp://, TLS for smtps://.
func (s *Sender) dial(ctx context.Context) (net.Conn, error) {
	if s.implicit {
		d := tls.Dialer{Config: s.tls()}
		return d.DialContext(ctx, "tcp", s.addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", s.addr)
}

func (s *Sender) tls() *tls.Config {
	c := s.tlsConfig.Clone()
	c.ServerName = s.host
	return c
}

// authenticate logs in with the URL's credentials, over TLS or to a loopback host
// only.
func (s *Sender) authenticate(c *smtp.Client, secure bool) error {
	if !secure && !isLoopback(s.host) {
		return fmt.Errorf("refusing to send the SMTP password without TLS: %s does not offer STARTTLS (use a server that does, or smtps://)", s.addr)
	}
	ok, offered := c.Extension("AUTH")
	if !ok {
		return fmt.Errorf("the URL has credentials but %s offers no AUTH", s.addr)
	}
	mechanism := s.mechanism
	if mechanism == "" {
		mechanism = pickMechanism(offered)
	}
	var a smtp.Auth
	switch mechanism {
	case "PLAIN":
		a = plainAuth{user: s.user, password: s.password}
	case "LOGIN":
		a = loginAuth{user: s.user, password: s.password}
	default:
		return fmt.Errorf("%s offers AUTH %s; this client speaks PLAIN and LOGIN", s.addr, offered)
	}
	if err := c.Auth(a); err != nil {
		return fmt.Errorf("AUTH %s: %w", mechanism, err)
	}
	return nil
}

// pickMechanism chooses PLAIN, else LOGIN, from the mechanisms a server offers (the
// parameter of its AUTH extension); "" when it offers neither.
func pickMechanism(offered string) string {
	have := map[string]bool{}
	for _, m := range strings.Fields(offered) {
		have[strings.ToUpper(m)] = true
	}
	for _, m := range []string{"PLAIN", "LOGIN"} {
		if have[m] {
			return m
		}
	}
	return ""
}

// isLoopback reports whether host is this machine by its name or address. A name
// other than localhost is not resolved: what it resolves to can change.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// plainAuth is AUTH PLAIN (RFC 4616). net/smtp's PlainAuth refuses loopback
// addresses other than 127.0.0.1 and ::1 without TLS; authenticate has checked.
type plainAuth struct{ user, password string }

func (a plainAuth) Start(*smtp.ServerInfo) (string, []byte, error) {
	return "PLAIN", []byte("\x00" + a.user + "\x00" + a.password), nil
}

func (a plainAuth) Next(_ []byte, more bool) ([]byte, error) {
	if more {
		return nil, errors.New("unexpected challenge after AUTH PLAIN")
	}
	return nil, nil
}

// loginAuth is AUTH LOGIN (draft-murchison-sasl-login): the user name, then the
// password, each asked for by the server.
type loginAuth struct{ user, password string }

func (a loginAuth) Start(*smtp.ServerInfo) (string, []byte, error) {
	return "LOGIN", nil, nil
}

func (a loginAuth) Next(fromServer []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	prompt := strings.ToLower(strings.TrimSpace(string(fromServer)))
	switch {
	case strings.HasPrefix(prompt, "user"):
		return []byte(a.user), nil
	case strings.HasPrefix(prompt, "pass"):
		return []byte(a.password), nil
	}
	return nil, fmt.Errorf("unexpected AUTH LOGIN challenge %q", fromServer)
}
