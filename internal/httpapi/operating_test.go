package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

func withRateLimit(n int) apiOption {
	return func(c *httpapi.Config) { c.RateLimit = n }
}

var rateLimitHeader = regexp.MustCompile(`^"default";r=(\d+);t=(\d+)$`)

// With the general limit off (--rate-limit 0, a nil Limiter) no answer carries its
// headers, as the document says; the credentials limit keeps its own on the calls with
// a password.
func TestRateLimitHeadersAreAbsentWhenTheLimitIsOff(t *testing.T) {
	a := newTestAPI(t)
	for _, r := range []req{
		{Method: "GET", Path: "/v1/pets", Key: a.Customer},
		{Method: "GET", Path: "/v1/pets"},
		{Method: "GET", Path: "/v1/pets/999999", Key: a.Customer},
	} {
		res := a.do(t, r)
		if h := res.Header.Values("RateLimit"); len(h) != 0 || len(res.Header.Values("RateLimit-Policy")) != 0 {
			t.Errorf("%s %s answered %d with RateLimit %q, policy %q", r.Method, r.Path, res.Status, h, res.Header.Values("RateLimit-Policy"))
		}
	}
	res := a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "off@example.com", "password": "twelve chars!"}}).expect(201, "")
	if p := res.Header.Values("RateLimit-Policy"); len(p) != 1 || !strings.HasPrefix(p[0], `"credentials";`) {
		t.Errorf("a sign-up with the general limit off: RateLimit-Policy %q, want only the credentials policy", p)
	}
}

func TestRateLimit(t *testing.T) {
	a := newTestAPI(t, withRateLimit(3))
	t.Run("every response carries the policy and what is left", func(t *testing.T) {
		for i := range 3 {
			res := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer}).expect(200, "")
			if p := res.Header.Get("RateLimit-Policy"); p != `"default";q=3;w=1` {
				t.Fatalf("RateLimit-Policy = %q", p)
			}
			m := rateLimitHeader.FindStringSubmatch(res.Header.Get("RateLimit"))
			if m == nil || m[1] != strconv.Itoa(2-i) {
				t.Fatalf("request %d: RateLimit = %q", i, res.Header.Get("RateLimit"))
			}
		}
	})
	t.Run("past the burst the answer is 429 with Retry-After", func(t *testing.T) {
		res := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer}).expect(429, "rate_limited")
		if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 {
			t.Fatalf("Retry-After = %q", res.Header.Get("Retry-After"))
		}
		if !rateLimitHeader.MatchString(res.Header.Get("RateLimit")) || res.Header.Get("RateLimit-Policy") == "" {
			t.Fatalf("429 without RateLimit headers: %v", res.Header)
		}
	})
	t.Run("another key of the same account shares its allowance", func(t *testing.T) {
		again, _ := a.newKey("customer@example.com", petstore.Customer)
		a.do(t, req{Method: "GET", Path: "/v1/pets", Key: again}).expect(429, "rate_limited")
	})
	t.Run("another account has its own allowance", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Admin}).expect(200, "")
	})
	t.Run("calls without a valid key share the client address's allowance", func(t *testing.T) {
		codes := map[int]int{}
		for i := range 5 {
			// Each made-up key is different: they must not each get a fresh allowance.
			key := "psk_" + strings.Repeat(string(rune('a'+i)), 32)
			codes[a.do(t, req{Method: "GET", Path: "/v1/pets", Key: key}).Status]++
		}
		if codes[401] != 3 || codes[429] != 2 {
			t.Fatalf("answers = %v, want 3×401 then 2×429", codes)
		}
		a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "z@example.com", "password": "twelve chars!"}}).expect(429, "rate_limited")
	})
	t.Run("service endpoints are not limited", func(t *testing.T) {
		for range 5 {
			a.do(t, req{Method: "GET", Path: "/healthz"}).expect(200, "")
		}
	})
	t.Run("the allowance comes back", func(t *testing.T) {
		time.Sleep(400 * time.Millisecond) // 3 per second: one token every 333 ms
		a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer}).expect(200, "")
	})
}

func TestTrustedProxyNamesTheClient(t *testing.T) {
	a := newTestAPI(t, withRateLimit(1), func(c *httpapi.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	from := func(client string) *response {
		return a.do(t, req{Method: "GET", Path: "/v1/pets", Header: map[string]string{"X-Forwarded-For": client + ", 127.0.0.1"}})
	}
	from("203.0.113.7").expect(401, "unauthorized")
	from("203.0.113.7").expect(429, "rate_limited")
	from("198.51.100.9").expect(401, "unauthorized") // another client behind the same proxy
}

// blockingStore holds Pet until the request's context ends, and PlaceOrder until told.
type blockingStore struct {
	petstore.Store
	release chan struct{}
	entered chan struct{}
}

func (s blockingStore) Pet(ctx context.Context, id int64) (petstore.Pet, error) {
	<-ctx.Done()
	return petstore.Pet{}, ctx.Err()
}

func (s blockingStore) PlaceOrder(ctx context.Context, o petstore.NewOrder) (petstore.PlacedOrder, error) {
	s.entered <- struct{}{}
	<-s.release
	return s.Store.PlaceOrder(ctx, o)
}

func TestAHandlerPastItsBudgetAnswers503(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) {
		c.HandlerTimeout = 50 * time.Millisecond
		c.Store = blockingStore{Store: c.Store}
	})
	start := time.Now()
	a.do(t, req{Method: "GET", Path: "/v1/pets/1", Key: a.Customer}).expect(503, "unavailable")
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("answered after %v", d)
	}
}

// A retry sent while the first request is still running is not refused: the two meet
// in the store (in one batch, or the second finds the first's committed key) and both
// get the first's answer.
func TestAnIdempotentRetryWhileTheFirstRunsGetsTheFirstAnswer(t *testing.T) {
	bs := blockingStore{release: make(chan struct{}), entered: make(chan struct{}, 2)}
	a := newTestAPI(t, func(c *httpapi.Config) { bs.Store = c.Store; c.Store = bs })
	p := a.pet(t, "Rex", 5)
	body := map[string]any{"petId": p.ID, "quantity": 1}
	key := map[string]string{"Idempotency-Key": "slow-order"}
	answers := make(chan *response, 2)
	for range 2 {
		go func() {
			answers <- a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: body, Header: key})
		}()
	}
	<-bs.entered
	<-bs.entered // both are in flight at once
	close(bs.release)
	first, second := (<-answers).expect(201, ""), (<-answers).expect(201, "")
	if string(first.Body) != string(second.Body) || first.Header.Get("Location") != second.Header.Get("Location") {
		t.Fatalf("the answers differ:\n%s\n%s", first.Body, second.Body)
	}
	if inv := a.inventory(t, p.ID); inv.Quantity != 4 {
		t.Fatalf("stock = %d, want 4: one order placed", inv.Quantity)
	}
}

func TestMetricsAfterTraffic(t *testing.T) {
	a := newTestAPI(t, withRateLimit(1000))
	p := a.pet(t, "Rex", 1)
	a.order(t, a.Customer, p.ID, 1)
	// The last unit is gone and the pet is pending: sold out is insufficient_stock.
	a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": p.ID, "quantity": 1}}).expect(409, "insufficient_stock")
	// A pet taken off sale with stock left is a refusal by status only.
	withdrawn := a.pet(t, "Max", 5)
	a.do(t, req{Method: "PATCH", Path: path("/v1/pets/%d", withdrawn.ID), Key: a.Admin, Body: map[string]any{"status": "sold"}}).expect(200, "")
	a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": withdrawn.ID, "quantity": 1}}).expect(409, "invalid_transition")
	a.do(t, req{Method: "GET", Path: "/v1/pets/" + strconv.FormatInt(p.ID, 10) + "?x=xss-marker", Key: a.Customer}).expect(200, "")
	a.do(t, req{Method: "GET", Path: "/v1/no/such/path/secret-token", Key: a.Customer}).expect(404, "not_found")

	// The metrics are served on the operator port, never on the public one.
	a.do(t, req{Method: "GET", Path: "/metrics"}).expect(404, "not_found")
	rec := httptest.NewRecorder()
	a.Server.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("metrics answered %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`petstore_http_requests_total{operation="placeOrder",status="201"} 1`,
		`petstore_http_requests_total{operation="placeOrder",status="409"} 2`,
		`petstore_http_requests_total{operation="getPetById",status="200"} 1`,
		`petstore_http_requests_total{operation="none",status="404"} 1`,
		`petstore_http_request_duration_seconds_count{operation="createPet"} 2`,
		`petstore_orders_placed_total 1`,
		`petstore_orders_refused_total{reason="insufficient_stock"} 1`,
		`petstore_orders_refused_total{reason="invalid_transition"} 1`,
		`petstore_http_requests_in_flight 0`,
		`petstore_rate_limited_total 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, leak := range []string{"xss-marker", "secret-token", "/v1/"} {
		if strings.Contains(body, leak) {
			t.Errorf("a label carries user input %q", leak)
		}
	}
}

// TestMetricsExtraCollectors: the collectors of Config.Collectors (the webhook
// dispatcher's) are served with the API's metrics, and one whose metrics clash with
// another's is refused when the server is built, not at the first scrape.
func TestMetricsExtraCollectors(t *testing.T) {
	extra := prometheus.NewCounter(prometheus.CounterOpts{Name: "petstore_extra_total", Help: "A test's counter."})
	extra.Add(3)
	a := newTestAPI(t, func(c *httpapi.Config) { c.Collectors = append(c.Collectors, extra) })
	rec := httptest.NewRecorder()
	a.Server.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, "\npetstore_extra_total 3\n") {
		t.Fatalf("metrics answered %d without petstore_extra_total 3:\n%s", rec.Code, body)
	}
	clash := prometheus.NewGauge(prometheus.GaugeOpts{Name: "petstore_orders_placed_total", Help: "Not the API's counter."})
	if _, err := httpapi.New(httpapi.Config{Store: a.Store, Collectors: []prometheus.Collector{clash}}); err == nil {
		t.Fatal("a collector that clashes with the API's metrics was taken")
	}
}

// lockedBuffer collects log output from the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestLogsOneLinePerRequestWithoutSecrets(t *testing.T) {
	var logs lockedBuffer
	a := newTestAPI(t, func(c *httpapi.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	password := "hunter2-hunter2"
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "log@example.com", "password": password}}).expect(201, "")
	var key struct{ Key string }
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("log@example.com", password), Body: map[string]any{"name": "k"}}).expect(201, "").JSON(&key)
	a.do(t, req{Method: "POST", Path: "/v1/messages", Key: key.Key, Body: map[string]any{"message": "body-marker-42"}, Header: map[string]string{"X-Request-Id": "trace-me"}}).expect(201, "")
	a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer}).expect(200, "")

	out := logs.String()
	for _, secret := range []string{key.Key, a.Customer, password, "body-marker-42", "Bearer", "Basic"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log contains %q", secret)
		}
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"request_id":"trace-me"`) {
			line = l
		}
	}
	for _, want := range []string{`"method":"POST"`, `"route":"/messages"`, `"operation":"sendMessage"`, `"status":201`, `"duration":`, `"account_id":`} {
		if !strings.Contains(line, want) {
			t.Errorf("the request's log line lacks %s: %s", want, line)
		}
	}
}

// pingStore fails Ping while down is set.
type pingStore struct {
	petstore.Store
	mu   *sync.Mutex
	down *bool
}

func (s pingStore) Ping(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *s.down {
		return io.ErrUnexpectedEOF
	}
	return s.Store.Ping(ctx)
}

func TestReadyzFollowsTheDatabase(t *testing.T) {
	var mu sync.Mutex
	down := false
	a := newTestAPI(t, func(c *httpapi.Config) { c.Store = pingStore{Store: c.Store, mu: &mu, down: &down} })
	set := func(v bool) { mu.Lock(); down = v; mu.Unlock() }
	a.do(t, req{Method: "GET", Path: "/readyz"}).expect(200, "")
	set(true)
	a.do(t, req{Method: "GET", Path: "/readyz"}).expect(503, "unavailable")
	a.do(t, req{Method: "GET", Path: "/healthz"}).expect(200, "")
	set(false)
	a.do(t, req{Method: "GET", Path: "/readyz"}).expect(200, "")
}

func TestCORS(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.CORSOrigins = []string{"https://shop.example"} })
	t.Run("an allowed origin may read the response and its headers", func(t *testing.T) {
		res := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer, Header: map[string]string{"Origin": "https://shop.example"}}).expect(200, "")
		if res.Header.Get("Access-Control-Allow-Origin") != "https://shop.example" || !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "Link") {
			t.Fatalf("headers: %v", res.Header)
		}
	})
	t.Run("a preflight from an allowed origin is answered", func(t *testing.T) {
		r, _ := http.NewRequest("OPTIONS", a.URL+"/v1/store/orders", nil)
		r.Header.Set("Origin", "https://shop.example")
		r.Header.Set("Access-Control-Request-Method", "POST")
		r.Header.Set("Access-Control-Request-Headers", "authorization, content-type, idempotency-key")
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode >= 300 || res.Header.Get("Access-Control-Allow-Origin") != "https://shop.example" || !strings.Contains(strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), "idempotency-key") {
			t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
		}
	})
	t.Run("another origin gets no CORS headers", func(t *testing.T) {
		res := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer, Header: map[string]string{"Origin": "https://evil.example"}}).expect(200, "")
		if v := res.Header.Get("Access-Control-Allow-Origin"); v != "" {
			t.Fatalf("Access-Control-Allow-Origin = %q", v)
		}
	})
}

// unavailableStore fails reads of pets the way a database does when its disk is full
// or its server is shutting down.
type unavailableStore struct{ petstore.Store }

var errDatabaseGone = errors.New("the database server is shutting down")

func (s unavailableStore) Pet(context.Context, int64) (petstore.Pet, error) {
	return petstore.Pet{}, fmt.Errorf("pet: %w", errDatabaseGone)
}

func (s unavailableStore) Unavailable(err error) bool {
	return errors.Is(err, errDatabaseGone) || s.Store.Unavailable(err)
}

func TestAPassingFailureOfTheDatabaseAnswers503WithRetryAfter(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.Store = unavailableStore{Store: c.Store} })
	res := a.do(t, req{Method: "GET", Path: "/v1/pets/1", Key: a.Customer}).expect(503, "unavailable")
	if res.Header.Get("Retry-After") == "" {
		t.Error("a 503 without Retry-After")
	}
	if strings.Contains(string(res.Body), "shutting down") {
		t.Errorf("the answer shows the cause: %s", res.Body)
	}
}

// errDiskFull is a commit failure the store calls passing (a full disk).
var errDiskFull = errors.New("database or disk is full")

// fullStore commits no order of the pet full names, though its probe passes, as
// SQLite on a nearly full disk did: /readyz's one-row write fit, no order did.
type fullStore struct {
	petstore.Store
	full *atomic.Int64
}

func (s fullStore) PlaceOrder(ctx context.Context, o petstore.NewOrder) (petstore.PlacedOrder, error) {
	if s.full.Load() == o.PetID {
		return petstore.PlacedOrder{}, errDiskFull
	}
	return s.Store.PlaceOrder(ctx, o)
}

func (s fullStore) Unavailable(err error) bool {
	return errors.Is(err, errDiskFull) || s.Store.Unavailable(err)
}

// /readyz says whether the instance can take an order: unready after a run of orders
// that could not be committed, though its own probe passes; ready again at the next
// order committed, or once no order has failed for a while (so that traffic, which a
// load balancer holds back from an unready instance, can find out).
func TestReadyzTurnsUnreadyAfterARunOfOrdersThatFailToCommit(t *testing.T) {
	var (
		full  atomic.Int64 // the pet whose orders fail to commit
		ahead atomic.Int64 // how far the server's clock is ahead of the real one
	)
	a := newTestAPI(t, func(c *httpapi.Config) {
		c.Store = fullStore{Store: c.Store, full: &full}
		c.Now = func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	})
	p, soldOut := a.pet(t, "Rex", 1000), a.pet(t, "Fido", 0)
	ready := func() int { return a.do(t, req{Method: "GET", Path: "/readyz"}).Status }
	failOrders := func(n int) {
		for range n {
			a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": p.ID, "quantity": 1}}).expect(503, "unavailable")
		}
	}

	full.Store(p.ID)
	failOrders(9)
	if got := ready(); got != 200 {
		t.Fatalf("after 9 failed orders, /readyz answers %d, want 200", got)
	}
	// A refusal, answered from a read, proves no commit: it neither counts nor breaks
	// the run (a client ordering a sold-out pet must not keep a full disk "ready").
	a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: map[string]any{"petId": soldOut.ID, "quantity": 1}}).expect(409, "insufficient_stock")
	if got := ready(); got != 200 {
		t.Fatalf("after 9 failed orders and a refusal, /readyz answers %d, want 200", got)
	}
	failOrders(1)
	res := a.do(t, req{Method: "GET", Path: "/readyz"}).expect(503, "unavailable")
	if res.Header.Get("Retry-After") == "" {
		t.Error("an unready /readyz has no Retry-After")
	}
	// Nothing fails for a while: traffic may try again.
	ahead.Store(int64(6 * time.Second))
	if got := ready(); got != 200 {
		t.Errorf("6 s after the last failed order, /readyz answers %d, want 200", got)
	}
	failOrders(1)
	if got := ready(); got != 503 {
		t.Errorf("an order failed again after the pause: /readyz answers %d, want 503", got)
	}
	full.Store(0)
	a.order(t, a.Customer, p.ID, 1)
	if got := ready(); got != 200 {
		t.Errorf("after an order committed, /readyz answers %d, want 200", got)
	}
}
