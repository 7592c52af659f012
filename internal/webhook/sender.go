package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
	"go.opentelemetry.io/otel/propagation"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/tracing"
)

// SenderOptions configure a Sender.
type SenderOptions struct {
	// Timeout bounds one attempt, from dialling to the end of the answer's headers and
	// the part of its body that is read (default 10 s).
	Timeout time.Duration
	// AllowPrivate lets endpoints be on private and loopback addresses, over http as
	// well as https (for local development and tests: serve's
	// --webhooks-allow-private). Link-local
	// addresses (cloud metadata services) stay refused.
	AllowPrivate bool
	// UserAgent is sent with every delivery.
	UserAgent string
	// Deny are destinations never reached, whatever else is allowed: the listeners of
	// the deployment's other instances (serve's --webhooks-deny; see Deny).
	Deny []Deny
}

// maxURL is the longest endpoint URL accepted.
const maxURL = 2048

// maxAnswer is how much of a receiver's answer is read and kept: enough to show an
// operator why a receiver refused, never a receiver's whole page.
const maxAnswer = 1024

// maxAnswerHeaders bounds the header block of an answer, which net/http would
// otherwise read up to 10 MB of before the body limit applies.
const maxAnswerHeaders = 64 << 10

// The refusals of a Send that never reached a receiver.
var (
	// ErrPrivateAddress is the refusal of an address the sender may not reach, found
	// when dialling (the name resolved to it).
	ErrPrivateAddress = errors.New("webhook: the address is private, loopback or link-local")
	// ErrRefusedURL is the refusal of an endpoint URL that CheckURL refuses.
	ErrRefusedURL = errors.New("webhook: refused URL")
	// ErrOwnAddress is the refusal of one of the deployment's own listeners (RefuseOwn,
	// SenderOptions.Deny), found when dialling: its API and operator ports are never a
	// webhook's receiver, whatever the operator allowed.
	ErrOwnAddress = errors.New("webhook: the address is one of this deployment's own")
)

// Sender posts deliveries to receivers. It resolves a receiver's name at every dial and
// checks the address it connects to, so that neither a URL nor a DNS answer that
// changes after the check can point it at the operator's own network; it follows no
// redirect and goes through no proxy.
type Sender struct {
	https, http *http.Client // http is nil unless private addresses are allowed
	userAgent   string
	public      *ssrf.Guardian
	allowLocal  bool
	timeout     time.Duration
	// own are the service's own listeners (RefuseOwn), deny the operator's (Deny).
	own  atomic.Pointer[[]netip.AddrPort]
	deny []Deny
	// isPublic tells the addresses whose answers lastError may quote; a test may
	// stand in for it (export_test.go).
	isPublic func(netip.Addr) bool
}

// NewSender returns a Sender.
func NewSender(o SenderOptions) *Sender {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	s := &Sender{userAgent: o.UserAgent, public: ssrf.New(ssrf.WithAnyPort()), allowLocal: o.AllowPrivate, timeout: o.Timeout,
		deny: o.Deny}
	s.isPublic = func(ip netip.Addr) bool { return s.public.SafeAddr(ip) == nil }
	s.https = s.client(o.Timeout, s.allowHTTPS)
	if o.AllowPrivate {
		s.http = s.client(o.Timeout, allowLocal)
	}
	return s
}

// Timeout is the bound of one attempt.
func (s *Sender) Timeout() time.Duration { return s.timeout }

func (s *Sender) client(timeout time.Duration, allow func(netip.Addr) error) *http.Client {
	dialer := &net.Dialer{
		Timeout: timeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			if s.refused(ap) {
				return ErrOwnAddress
			}
			return allow(ap.Addr().Unmap())
		},
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:       nil, // a proxy would dial for us, past the address check
			DialContext: dialer.DialContext,
			// The client's Timeout bounds the answer's headers too: a
			// ResponseHeaderTimeout of the same length was a second timer per request.
			TLSHandshakeTimeout:    timeout,
			MaxResponseHeaderBytes: maxAnswerHeaders,
			// Every endpoint may be sent its window at once, and many endpoints may
			// share a host (one receiving service, or loadbench's receiver): with
			// the window as the cap, a paced claim of 200 deliveries to one host
			// closed what it had opened beyond 256, and the next claim dialled them
			// again, 100–140 dials a second during an order load (docs/PERFORMANCE.md,
			// 2026-11-28). The idle connections are at most those of the last peak,
			// which were open at once anyway, and close after IdleConnTimeout.
			MaxIdleConnsPerHost: petstore.MaxWebhooks * petstore.MaxDeliveryWindow,
			IdleConnTimeout:     90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// allowHTTPS admits public addresses, and private and loopback ones when the operator
// allowed them.
func (s *Sender) allowHTTPS(ip netip.Addr) error {
	if s.allowLocal && allowLocal(ip) == nil {
		return nil
	}
	if err := s.public.SafeAddr(ip); err != nil {
		return fmt.Errorf("%w: %v", ErrPrivateAddress, err)
	}
	return nil
}

// allowLocal admits only private and loopback addresses: plain http is for a receiver
// on the operator's own machine or network, never for one across the internet.
func allowLocal(ip netip.Addr) error {
	if ip.IsPrivate() || ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: plain http only reaches private and loopback addresses, not %s", ErrPrivateAddress, ip)
}

// CheckURL decides whether raw may be an endpoint's URL: absolute https (or http when
// private addresses are allowed), no user name or password, no fragment, a host, at
// most 2,048 bytes, and, when the host is an IP address, one the sender may reach. A
// host name is checked at each delivery instead, on the addresses it resolves to then.
// The error says what is wrong, for the field's problem.
func (s *Sender) CheckURL(raw string) error {
	if len(raw) > maxURL {
		return errors.New("must be at most 2048 bytes long")
	}
	u, err := url.Parse(raw)
	switch {
	// u.Host is ":443" in https://:443/, which has no host name: the dial would go to
	// the local system.
	case err != nil || !u.IsAbs() || u.Hostname() == "" || u.Opaque != "":
		return errors.New("must be an absolute URL")
	case u.Scheme != "https" && !(u.Scheme == "http" && s.http != nil):
		if s.http != nil {
			return errors.New("must be an https:// or http:// URL")
		}
		if localHost(u.Hostname()) {
			return errors.New("must be an https:// URL" + allowHint)
		}
		return errors.New("must be an https:// URL")
	case u.User != nil:
		return errors.New("must not hold a user name or password")
	// "https://host/#" parses to an empty fragment: the '#' tells it.
	case u.Fragment != "" || u.RawFragment != "" || strings.Contains(raw, "#"):
		return errors.New("must not have a fragment")
	case !validPort(u.Port()):
		// Every dial would fail: refused now rather than found by each delivery.
		return errors.New("must have a port from 1 to 65535")
	}
	// The host is checked as it is decoded and dialled: a percent-encoded invisible
	// character (https://pay%C2%ADpal.com) passes the raw text's check, and the
	// resolver's IDNA mapping drops it, so the endpoint would be listed as one host
	// and sent to another.
	if err := petstore.CheckAddress("url", u.Hostname()); err != nil {
		var e *petstore.Error
		if errors.As(err, &e) && len(e.Details) > 0 {
			return fmt.Errorf("must have a host without %s", strings.TrimPrefix(e.Details[0].Problem, "must not contain "))
		}
		return errors.New("must have a host of visible characters")
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		ip = ip.Unmap()
		port := map[string]uint16{"https": 443, "http": 80}[u.Scheme]
		if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
			port = uint16(p)
		}
		switch {
		case s.refused(netip.AddrPortFrom(ip, port)):
			return errors.New("must not be an address of this service or of its deployment (the server's --webhooks-deny)")
		case u.Scheme == "http" && allowLocal(ip) != nil && s.allowHTTPS(ip) == nil:
			return errors.New("must be an https:// URL to reach a public address")
		case s.http == nil && allowLocal(ip) == nil:
			return errors.New("must not be a private, loopback or link-local address" + allowHint)
		case u.Scheme == "http" && allowLocal(ip) != nil, s.allowHTTPS(ip) != nil:
			return errors.New("must not be a private, loopback or link-local address")
		}
	}
	return nil
}

// allowHint tells a developer aiming at a receiver on their own machine or network how
// the operator admits it.
const allowHint = " (private and loopback addresses need the server's --webhooks-allow-private)"

// localHost reports whether host names this machine or a private network, which the
// operator may allow: localhost, or a private or loopback address.
func localHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && allowLocal(ip.Unmap()) == nil
}

// validPort reports whether port, a URL's (digits only, as url.Parse leaves it), is
// empty (the scheme's) or one a connection can use.
func validPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// Result is what one attempt found.
type Result struct {
	// Status is the receiver's HTTP status, 0 when there was no answer.
	Status int
	// Answer is the start of the receiver's answer body (at most 1 KiB).
	Answer []byte
	// Err is why there was no answer (a refused address, a time-out, a reset).
	Err      error
	Duration time.Duration
	// Addr is the address the attempt connected to, if it got that far, and Public
	// whether that is a public address: only a public receiver's answer (or TLS
	// failure) may be told to the API, or an admin could read the operator's network
	// through lastError.
	Addr   netip.Addr
	Public bool
}

// OK reports whether the receiver took the delivery: any 2xx. A redirect is not
// followed, so it is a failure like any other status.
func (r Result) OK() bool { return r.Err == nil && r.Status >= 200 && r.Status < 300 }

// Send posts body, the event with id eventID, to endpoint, signed at now with each of
// secrets (Sign).
func (s *Sender) Send(ctx context.Context, endpoint, eventID string, body []byte, now time.Time, secrets ...[]byte) Result {
	start := time.Now()
	res := s.send(ctx, endpoint, eventID, body, now, secrets)
	res.Duration = time.Since(start)
	return res
}

func (s *Sender) send(ctx context.Context, endpoint, eventID string, body []byte, now time.Time, secrets [][]byte) Result {
	if len(secrets) == 0 {
		// An unsigned delivery is one no receiver can tell from a forgery.
		return Result{Err: errors.New("webhook: no secret to sign the delivery with")}
	}
	if err := s.CheckURL(endpoint); err != nil {
		return Result{Err: fmt.Errorf("%w: the endpoint URL %s", ErrRefusedURL, err)}
	}
	client := s.https
	if u, _ := url.Parse(endpoint); u.Scheme == "http" {
		client = s.http
	}
	// Where the attempt connected: the connection the request got, or else (a TLS
	// handshake that failed) the last dial that connected. A dial the request gave up
	// on may still end later, in the transport's goroutine: hence the atomics, and
	// the connection the request got wins.
	var got, dialed atomic.Pointer[netip.Addr]
	trace := &httptrace.ClientTrace{
		ConnectDone: func(_, a string, err error) {
			if ap, perr := netip.ParseAddrPort(a); err == nil && perr == nil {
				ip := ap.Addr().Unmap()
				dialed.Store(&ip)
			}
		},
		GotConn: func(c httptrace.GotConnInfo) {
			if t, ok := c.Conn.RemoteAddr().(*net.TCPAddr); ok {
				ip := t.AddrPort().Addr().Unmap()
				got.Store(&ip)
			}
		},
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return Result{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(body, now, secrets...))
	req.Header.Set(EventIDHeader, eventID)
	if s.userAgent != "" {
		req.Header.Set("User-Agent", s.userAgent)
	}
	// The trace of ctx's span, if it has one (the attempt's, or the event's request's
	// when tracing is off here), so that the receiver's work joins the trace.
	tracing.Propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	res, err := client.Do(req)
	var at Result
	ip := got.Load()
	if ip == nil {
		ip = dialed.Load()
	}
	if ip != nil {
		at.Addr, at.Public = *ip, s.isPublic(*ip)
	}
	if err != nil {
		at.Err = err
		return at
	}
	defer res.Body.Close()
	// The status decides; a body cut short does not change what it said.
	at.Status = res.StatusCode
	at.Answer, _ = io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	return at
}
