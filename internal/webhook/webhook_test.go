package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/webhook"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func TestSignatureVerifies(t *testing.T) {
	body := []byte(`{"id":"evt_1","type":"order.placed"}`)
	secret, old := []byte("whsec_new"), []byte("whsec_old")
	header := webhook.Sign(body, now, secret, old)
	if !strings.HasPrefix(header, "t=1795435200,v1=") || strings.Count(header, "v1=") != 2 {
		t.Fatalf("header = %q", header)
	}
	tests := []struct {
		name   string
		header string
		body   []byte
		secret []byte
		at     time.Time
		want   error
	}{
		{"the new secret", header, body, secret, now, nil},
		{"the old secret during the overlap", header, body, old, now, nil},
		{"within the tolerance", header, body, secret, now.Add(webhook.DefaultTolerance), nil},
		{"a v0 and spaces are ignored", "t=1795435200, v0=abc, " + header[len("t=1795435200,"):], body, secret, now, nil},
		{"another secret", header, body, []byte("whsec_other"), now, webhook.ErrMismatch},
		{"a changed body", header, []byte(`{"id":"evt_2","type":"order.placed"}`), secret, now, webhook.ErrMismatch},
		{"a changed timestamp", strings.Replace(header, "t=1795435200", "t=1795435201", 1), body, secret, now, webhook.ErrMismatch},
		{"replayed too late", header, body, secret, now.Add(webhook.DefaultTolerance + time.Second), webhook.ErrTooOld},
		{"from the future", header, body, secret, now.Add(-webhook.DefaultTolerance - time.Second), webhook.ErrTooOld},
		{"no timestamp", header[len("t=1795435200,"):], body, secret, now, webhook.ErrNoSignature},
		{"no v1", "t=1795435200", body, secret, now, webhook.ErrNoSignature},
		{"garbage", "not a signature", body, secret, now, webhook.ErrNoSignature},
		{"empty", "", body, secret, now, webhook.ErrNoSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := webhook.Verify(tt.header, tt.body, tt.secret, tt.at, webhook.DefaultTolerance); !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestBackoffSpacing(t *testing.T) {
	b := webhook.DefaultBackoff
	r := rand.New(rand.NewPCG(1, 2))
	at, attempts := now, 0
	for {
		next, ok := b.Next(now, at, attempts, r)
		ceiling := b.Max
		if float64(b.Base)*float64(uint64(1)<<min(attempts, 62)) < float64(b.Max) {
			ceiling = b.Base << attempts
		}
		if wait := next.Sub(at); wait < time.Second || wait > max(ceiling, time.Second) {
			t.Fatalf("attempt %d: waited %s, want 1 s to %s", attempts, wait, ceiling)
		}
		if !ok {
			if next.Sub(now) <= b.Horizon {
				t.Fatalf("gave up at %s, before the horizon", next.Sub(now))
			}
			break
		}
		at, attempts = next, attempts+1
		if attempts > 1000 {
			t.Fatal("never gave up")
		}
	}
	// 72 hours of waits of at most 6 h (3 h on average, once past the growth):
	// about two dozen attempts, never a handful or hundreds.
	if attempts < 15 || attempts > 80 {
		t.Fatalf("%d attempts in 72 h", attempts)
	}
	// Where Base·2ⁿ would overflow int64 (n = 29 for 30 s; 200), the ceiling stays
	// Max: the waits spread up to it, none wraps around to a short one.
	for _, n := range []int{29, 40, 62, 63, 200} {
		var longest time.Duration
		for range 200 {
			next, _ := b.Next(now, now, n, r)
			longest = max(longest, next.Sub(now))
		}
		if longest > b.Max || longest < b.Max/2 {
			t.Fatalf("attempt %d: the longest of 200 waits is %s; want up to %s", n, longest, b.Max)
		}
	}
}

func TestBackoffNeverPanics(t *testing.T) {
	for _, tt := range []struct {
		name    string
		b       webhook.Backoff
		attempt int
	}{
		{"a negative attempt is the first", webhook.DefaultBackoff, -1},
		{"a Max of the longest Duration (no cap)", webhook.Backoff{Base: time.Second, Max: math.MaxInt64, Horizon: time.Hour}, 100},
		{"a negative Base", webhook.Backoff{Base: -time.Second, Max: time.Hour, Horizon: time.Hour}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if v := recover(); v != nil {
					t.Fatalf("Next panicked: %v", v)
				}
			}()
			next, _ := tt.b.Next(now, now, tt.attempt, nil)
			if next.Sub(now) < time.Second {
				t.Fatalf("waited %s, want at least 1 s", next.Sub(now))
			}
		})
	}
}

func TestSenderDeliversSigned(t *testing.T) {
	var got atomic.Value
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := webhook.Verify(r.Header.Get(webhook.SignatureHeader), body, []byte("s3cret"), time.Now(), webhook.DefaultTolerance)
		got.Store([]string{r.Header.Get(webhook.EventIDHeader), r.Header.Get("Content-Type"), string(body), errString(err)})
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, strings.Repeat("x", 5000))
	}))
	defer rcv.Close()
	s := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true})
	res := s.Send(context.Background(), rcv.URL+"/hooks", "evt_1", []byte(`{"id":"evt_1"}`), time.Now(), []byte("s3cret"))
	if !res.OK() || res.Status != http.StatusAccepted {
		t.Fatalf("result %+v", res)
	}
	if len(res.Answer) != 1024 {
		t.Fatalf("kept %d bytes of the answer, want the first 1024", len(res.Answer))
	}
	if g := got.Load().([]string); g[0] != "evt_1" || g[1] != "application/json" || g[2] != `{"id":"evt_1"}` || g[3] != "" {
		t.Fatalf("the receiver saw %q", g)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSenderRefusesWhatItMayNotReach(t *testing.T) {
	var hits atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		}
	}))
	defer rcv.Close()
	strict := webhook.NewSender(webhook.SenderOptions{Timeout: 2 * time.Second})
	local := webhook.NewSender(webhook.SenderOptions{Timeout: 2 * time.Second, AllowPrivate: true})
	httpsLoopback := strings.Replace(rcv.URL, "http://", "https://", 1)
	tests := []struct {
		name   string
		sender *webhook.Sender
		url    string
		want   error
	}{
		{"loopback over https, not allowed", strict, httpsLoopback, webhook.ErrRefusedURL},
		{"loopback over http, not allowed", strict, rcv.URL, webhook.ErrRefusedURL},
		{"a name that resolves to loopback, at the dial", strict, "https://localhost:1/", webhook.ErrPrivateAddress},
		{"a private address", strict, "https://10.1.2.3/", webhook.ErrRefusedURL},
		{"link-local (cloud metadata), even when private is allowed", local, "http://169.254.169.254/latest/meta-data/", webhook.ErrRefusedURL},
		{"link-local over https, even when private is allowed", local, "https://169.254.169.254/", webhook.ErrRefusedURL},
		{"IPv6 link-local", local, "https://[fe80::1]/", webhook.ErrRefusedURL},
		{"an IPv4-mapped loopback", strict, "https://[::ffff:127.0.0.1]/", webhook.ErrRefusedURL},
		{"plain http to a public address, even when private is allowed", local, "http://93.184.215.14/", webhook.ErrRefusedURL},
		{"the unspecified address", local, "https://0.0.0.0/", webhook.ErrRefusedURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.sender.Send(context.Background(), tt.url, "evt_1", []byte(`{}`), now, []byte("k"))
			if res.OK() || !errors.Is(res.Err, tt.want) || res.Status != 0 {
				t.Fatalf("result %+v, want %v before any answer", res, tt.want)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the receiver was reached %d times", n)
	}
	// An answer's header block is bounded like its body: a receiver cannot make the
	// sender hold megabytes per attempt.
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 100 {
			w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("x", 10_000))
		}
	}))
	defer big.Close()
	if res := local.Send(context.Background(), big.URL, "evt_1", []byte(`{}`), now, []byte("k")); res.Err == nil {
		t.Fatalf("1 MB of answer headers taken: %+v", res.Status)
	}
	// Without a secret nothing is sent: the receiver could not tell it from a forgery.
	if res := local.Send(context.Background(), rcv.URL+"/hooks", "evt_1", []byte(`{}`), now); res.Err == nil || hits.Load() != 0 {
		t.Fatalf("an unsigned delivery: %+v after %d requests", res, hits.Load())
	}
	// A redirect is an answer, not followed: its target is never reached.
	res := local.Send(context.Background(), rcv.URL+"/redirect", "evt_1", []byte(`{}`), now, []byte("k"))
	if res.OK() || res.Status != http.StatusFound || hits.Load() != 1 {
		t.Fatalf("redirect: result %+v after %d requests", res, hits.Load())
	}
}

func TestCheckURL(t *testing.T) {
	strict := webhook.NewSender(webhook.SenderOptions{})
	local := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true})
	tests := []struct {
		url         string
		strict, loc string // "" when accepted, else the start of the problem
	}{
		{"https://hooks.example.com/petstore", "", ""},
		{"https://hooks.example.com:8443/p?x=1", "", ""},
		{"http://hooks.example.com/petstore", "must be an https:// URL", ""},
		{"http://127.0.0.1:9000/hook", "must be an https:// URL", ""},
		{"https://127.0.0.1/hook", "must not be a private", ""},
		{"https://192.168.1.10/hook", "must not be a private", ""},
		{"http://8.8.8.8/hook", "must be an https:// URL", "must be an https:// URL to reach a public address"},
		{"https://169.254.169.254/", "must not be a private", "must not be a private"},
		{"https://user:pw@hooks.example.com/", "must not hold a user name", "must not hold a user name"},
		{"https://hooks.example.com/#frag", "must not have a fragment", "must not have a fragment"},
		{"ftp://hooks.example.com/", "must be an https:// URL", "must be an https:// or http:// URL"},
		{"/relative", "must be an absolute URL", "must be an absolute URL"},
		// No host name but a port: the dial would go to the local system.
		{"https://:443/hook", "must be an absolute URL", "must be an absolute URL"},
		{"http://:8080", "must be an absolute URL", "must be an absolute URL"},
		{"https:opaque", "must be an absolute URL", "must be an absolute URL"},
		{"https://" + strings.Repeat("a", 2048) + ".example.com/", "must be at most 2048", "must be at most 2048"},
		// An empty fragment is a fragment still, which the document forbids.
		{"https://hooks.example.com/#", "must not have a fragment", "must not have a fragment"},
		// A port no connection can use would make every delivery fail; it is refused
		// when the endpoint is made instead.
		{"https://hooks.example.com:99999/hook", "must have a port from 1 to 65535", "must have a port from 1 to 65535"},
		{"https://hooks.example.com:0/hook", "must have a port from 1 to 65535", "must have a port from 1 to 65535"},
		{"https://127.0.0.1:65536/hook", "must have a port from 1 to 65535", "must have a port from 1 to 65535"},
		{"https://hooks.example.com:65535/hook", "", ""},
		{"https://hooks.example.com:/hook", "", ""}, // an empty port is the scheme's
	}
	// A URL a developer points at their own machine says how the operator allows it;
	// one that could never be allowed does not.
	for _, tt := range []struct {
		url  string
		hint bool
	}{
		{"http://127.0.0.1:9000/hook", true},
		{"http://localhost:9000/hook", true},
		{"https://192.168.1.10/hook", true},
		{"https://[::1]/hook", true},
		{"http://hooks.example.com/petstore", false},
		{"https://169.254.169.254/", false},
	} {
		err := strict.CheckURL(tt.url)
		if err == nil || strings.Contains(err.Error(), "--webhooks-allow-private") != tt.hint {
			t.Errorf("CheckURL(%q) = %v; want a refusal that names the allowance: %v", tt.url, err, tt.hint)
		}
	}
	for _, tt := range tests {
		for _, c := range []struct {
			s    *webhook.Sender
			want string
		}{{strict, tt.strict}, {local, tt.loc}} {
			err := c.s.CheckURL(tt.url)
			if (err == nil) != (c.want == "") || err != nil && !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("CheckURL(%.60q) = %v, want %q", tt.url, err, c.want)
			}
		}
	}
}

// FuzzVerify: any header a sender could forge is refused without a panic, and what
// Sign makes for any body and secret verifies under that secret only.
func FuzzVerify(f *testing.F) {
	f.Add("t=1795435200,v1=00", []byte(`{}`), []byte("s"))
	f.Add("t=,v1=,v1=zz,t=1", []byte(""), []byte(""))
	f.Add("t=-9223372036854775808,v1=ab", []byte("x"), []byte("k"))
	f.Fuzz(func(t *testing.T, header string, body, secret []byte) {
		if err := webhook.Verify(header, body, secret, now, webhook.DefaultTolerance); err == nil {
			// Only a header carrying the real HMAC verifies.
			if !strings.Contains(header, webhook.Sign(body, now, secret)[len("t=1795435200,"):]) {
				t.Fatalf("a forged header verified: %q", header)
			}
		}
		signed := webhook.Sign(body, now, secret)
		if err := webhook.Verify(signed, body, secret, now, webhook.DefaultTolerance); err != nil {
			t.Fatalf("Sign's own header does not verify: %v", err)
		}
		if err := webhook.Verify(signed, body, append([]byte("other"), secret...), now, webhook.DefaultTolerance); !errors.Is(err, webhook.ErrMismatch) {
			t.Fatalf("another secret: %v", err)
		}
	})
}

// A host is checked as it is dialled: an invisible character percent-encoded in it
// (which the resolver's IDNA mapping drops) is refused, as it is when written out, and
// a host of visible characters, Unicode or punycode, is not.
func TestCheckURLRefusesAnEncodedInvisibleHost(t *testing.T) {
	s := webhook.NewSender(webhook.SenderOptions{})
	for _, u := range []string{
		"https://pay%C2%ADpal.com/hook",
		"https://pay%E2%80%8Bpal.com/hook",
		"https://paypal.com%EF%BB%BF/hook",
		"https://pay\u00adpal.com/hook",
	} {
		if err := s.CheckURL(u); err == nil || !strings.Contains(err.Error(), "invisible") {
			t.Errorf("CheckURL(%q) = %v, want a refusal of the invisible character", u, err)
		}
	}
	for _, u := range []string{"https://bücher.example/hook", "https://xn--bcher-kva.example/hook", "https://hooks.example.com/a%E2%80%8Bb"} {
		if err := s.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v, want it accepted", u, err)
		}
	}
}
