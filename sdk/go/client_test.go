package petstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

// These tests put the client in front of a fake service (httptest) that answers what
// each test needs; the examples run against the real one.

// fake starts a service that answers with handle, and returns a client of it whose
// base URL ends in /v1 as the real one does.
func fake(t *testing.T, handle http.HandlerFunc, opts ...petstore.Option) *petstore.Client {
	t.Helper()
	srv := httptest.NewServer(handle)
	t.Cleanup(srv.Close)
	opts = append([]petstore.Option{petstore.WithAPIKey("psk_test")}, opts...)
	c, err := petstore.NewClient(srv.URL+"/v1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// answer writes a JSON answer.
func answer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// collect runs a list to its end.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var items []T
	for item, err := range seq {
		if err != nil {
			return items, err
		}
		items = append(items, item)
	}
	return items, nil
}

func TestAnswersOutside2xxAreErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		want    petstore.Error
		wantMsg string
	}{
		{
			name:   "a validation error keeps its details",
			status: 400,
			header: map[string]string{"X-Request-Id": "req-1"},
			body:   `{"code":"validation_failed","message":"The request is not valid.","status":400,"details":[{"field":"quantity","problem":"must be at most 100"}]}`,
			want: petstore.Error{Status: 400, Code: petstore.CodeValidationFailed, Message: "The request is not valid.",
				Details: []petstore.Detail{{Field: "quantity", Problem: "must be at most 100"}}, RequestID: "req-1"},
			wantMsg: "petstore: 400 validation_failed: The request is not valid. (quantity: must be at most 100) [request req-1]",
		},
		{
			name:    "a conflict has its code",
			status:  409,
			body:    `{"code":"insufficient_stock","message":"Only 2 in stock.","status":409}`,
			want:    petstore.Error{Status: 409, Code: petstore.CodeInsufficientStock, Message: "Only 2 in stock."},
			wantMsg: "petstore: 409 insufficient_stock: Only 2 in stock.",
		},
		{
			name:   "a rate limit says how long to wait",
			status: 429,
			header: map[string]string{"Retry-After": "7"},
			body:   `{"code":"rate_limited","message":"Too many requests; retry after 7 seconds.","status":429}`,
			want:   petstore.Error{Status: 429, Code: petstore.CodeRateLimited, Message: "Too many requests; retry after 7 seconds.", RetryAfter: 7 * time.Second},
		},
		{
			name:    "a proxy's page is an error with the status",
			status:  502,
			body:    `<html>Bad gateway</html>`,
			want:    petstore.Error{Status: 502, Message: "Bad Gateway"},
			wantMsg: "petstore: 502: Bad Gateway",
		},
		{
			name:   "a JSON body of another shape too",
			status: 404,
			body:   `{"error":"no such thing"}`,
			want:   petstore.Error{Status: 404, Message: "Not Found"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				answer(w, tt.status, tt.body)
			}, petstore.WithRetries(0))

			cat, err := c.GetCategory(context.Background(), 1)
			var got *petstore.Error
			if !errors.As(err, &got) {
				t.Fatalf("GetCategory = %v, %v; want a *petstore.Error", cat, err)
			}
			if got.Status != tt.want.Status || got.Code != tt.want.Code || got.Message != tt.want.Message ||
				got.RequestID != tt.want.RequestID || got.RetryAfter != tt.want.RetryAfter ||
				len(got.Details) != len(tt.want.Details) || (len(got.Details) > 0 && got.Details[0] != tt.want.Details[0]) {
				t.Errorf("error = %#v\nwant    %#v", *got, tt.want)
			}
			if tt.wantMsg != "" && got.Error() != tt.wantMsg {
				t.Errorf("Error() = %q, want %q", got.Error(), tt.wantMsg)
			}
		})
	}
}

// A server that records the Idempotency-Key of every attempt to place an order.
type orderDesk struct {
	mu   sync.Mutex
	keys []string
}

func (d *orderDesk) record(r *http.Request) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keys = append(d.keys, r.Header.Get("Idempotency-Key"))
	return len(d.keys)
}

func TestPlaceOrderRetriesWithTheSameKey(t *testing.T) {
	var desk orderDesk
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch desk.record(r) {
		case 1:
			w.Header().Set("Retry-After", "1")
			answer(w, 503, `{"code":"unavailable","message":"Later.","status":503}`)
		case 2:
			// The connection drops before an answer: the order may or may not be placed.
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		default:
			answer(w, 201, `{"id":7,"petId":1,"quantity":2,"complete":false,"accountId":3}`)
		}
	})

	start := time.Now()
	order, err := c.PlaceOrder(context.Background(), petstore.NewOrder{PetID: 1, Quantity: 2})
	if err != nil {
		t.Fatal(err)
	}
	if order.ID != 7 || order.Quantity != 2 {
		t.Errorf("order = %+v", order)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("placed after %v, before the Retry-After of 1s", waited)
	}
	if len(desk.keys) != 3 {
		t.Fatalf("%d attempts, want 3", len(desk.keys))
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(desk.keys[0]) {
		t.Errorf("Idempotency-Key %q is not 128 random bits in hex", desk.keys[0])
	}
	for i, k := range desk.keys {
		if k != desk.keys[0] {
			t.Errorf("attempt %d sent key %q, the first %q", i+1, k, desk.keys[0])
		}
	}
}

func TestPlaceOrderSendsTheCallersKey(t *testing.T) {
	var desk orderDesk
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		desk.record(r)
		answer(w, 201, `{"id":1,"petId":1,"quantity":1,"complete":false,"accountId":1}`)
	})
	for range 2 {
		if _, err := c.PlaceOrder(context.Background(), petstore.NewOrder{PetID: 1, Quantity: 1, IdempotencyKey: "cart-42"}); err != nil {
			t.Fatal(err)
		}
	}
	if desk.keys[0] != "cart-42" || desk.keys[1] != "cart-42" {
		t.Errorf("keys = %q, want the caller's", desk.keys)
	}
	// Without one, each order gets its own.
	desk.keys = nil
	for range 2 {
		if _, err := c.PlaceOrder(context.Background(), petstore.NewOrder{PetID: 1, Quantity: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if desk.keys[0] == desk.keys[1] {
		t.Errorf("two orders sent the same key %q", desk.keys[0])
	}
}

func TestWhatIsRetried(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		call     func(c *petstore.Client) error
		attempts int
	}{
		{"a GET", func(c *petstore.Client) error { _, err := c.GetCategory(ctx, 1); return err }, 3},
		{"a PUT", func(c *petstore.Client) error {
			_, err := c.SetInventory(ctx, 1, petstore.InventoryUpdate{Quantity: 1})
			return err
		}, 3},
		{"a DELETE", func(c *petstore.Client) error { return c.DeletePet(ctx, 1) }, 3},
		{"a list", func(c *petstore.Client) error { _, err := collect(c.ListPets(ctx, nil)); return err }, 3},
		{"a POST without an Idempotency-Key: never", func(c *petstore.Client) error {
			_, err := c.CreatePet(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1})
			return err
		}, 1},
		{"a PATCH: never", func(c *petstore.Client) error {
			_, err := c.UpdatePet(ctx, 1, petstore.PetPatch{Name: petstore.Ptr("Rex")})
			return err
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			attempts := 0
			c := fake(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				attempts++
				mu.Unlock()
				// No Retry-After: the client backs off on its own.
				answer(w, 429, `{"code":"rate_limited","message":"Slow down.","status":429}`)
			}, petstore.WithRetries(2))

			var apiErr *petstore.Error
			if err := tt.call(c); !errors.As(err, &apiErr) || apiErr.Code != petstore.CodeRateLimited {
				t.Fatalf("err = %v, want the last answer's rate_limited", err)
			}
			if attempts != tt.attempts {
				t.Errorf("%d attempts, want %d", attempts, tt.attempts)
			}
		})
	}
}

func TestRetriesStopWhenTheContextCannotWait(t *testing.T) {
	attempts := 0
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		attempts++
		w.Header().Set("Retry-After", "30")
		answer(w, 503, `{"code":"unavailable","message":"Later.","status":503}`)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	start := time.Now()
	_, err := c.GetCategory(ctx, 1)
	var apiErr *petstore.Error
	if !errors.As(err, &apiErr) || apiErr.RetryAfter != 30*time.Second {
		t.Fatalf("err = %v, want the 503 with its Retry-After", err)
	}
	if attempts != 1 || time.Since(start) > time.Second {
		t.Errorf("%d attempts in %v: the client waited for a retry its context could not see", attempts, time.Since(start))
	}
}

func TestRetriesEndWithTheContext(t *testing.T) {
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		answer(w, 503, `{"code":"unavailable","message":"Later.","status":503}`)
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := c.GetCategory(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// petPages serves pets 1–5 two at a time, with the next page in a Link relative to the
// origin, as the service writes it; it records the request URIs.
type petPages struct {
	mu       sync.Mutex
	requests []string
}

func (p *petPages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.requests = append(p.requests, r.URL.RequestURI())
	p.mu.Unlock()
	if r.URL.Path != "/v1/pets" {
		answer(w, 404, `{"code":"not_found","message":"No such path.","status":404}`)
		return
	}
	pages := map[string]struct{ body, link string }{
		"": {`[{"id":1,"name":"Rex","categoryId":1,"status":"available"},{"id":2,"name":"Bella","categoryId":1,"status":"available"}]`,
			`</v1/pets?cursor=c2&limit=2>; rel="next"`},
		"c2": {`[{"id":3,"name":"Max","categoryId":1,"status":"sold"},{"id":4,"name":"Luna","categoryId":2,"status":"available"}]`,
			// Several links in one header, and a comma inside a target.
			`</v1/pets?limit=2>; rel="first", </v1/pets?cursor=c3&limit=2&ids=1,2>; rel="next"`},
		"c3": {`[{"id":5,"name":"Milo","categoryId":2,"status":"pending"}]`, ""},
	}
	page := pages[r.URL.Query().Get("cursor")]
	if page.link != "" {
		w.Header().Set("Link", page.link)
	}
	answer(w, 200, page.body)
}

func TestListFollowsTheLinksToTheEnd(t *testing.T) {
	var pages petPages
	c := fake(t, pages.ServeHTTP)

	pets, err := collect(c.ListPets(context.Background(), &petstore.ListPetsOptions{
		Status: petstore.PetStatusAvailable, CategoryID: 1, IDs: []int64{1, 2}, Name: "É% x", Limit: 2,
	}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pets {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "Rex Bella Max Luna Milo" {
		t.Errorf("pets = %s", got)
	}
	want := []string{
		"/v1/pets?status=available&categoryId=1&ids=1&ids=2&name=%C3%89%25+x&limit=2", // ids repeated: style form, explode
		"/v1/pets?cursor=c2&limit=2",
		"/v1/pets?cursor=c3&limit=2&ids=1,2",
	}
	if strings.Join(pages.requests, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(pages.requests, "\n"), strings.Join(want, "\n"))
	}
}

func TestListInventorySendsItsFilters(t *testing.T) {
	var got string
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RequestURI()
		answer(w, 200, `[{"petId":2,"quantity":3,"status":"available"}]`)
	})
	items, err := collect(c.ListInventory(context.Background(), &petstore.ListInventoryOptions{
		Status: petstore.PetStatusAvailable, IDs: []int64{2, 7},
	}))
	if err != nil || len(items) != 1 || items[0].PetID != 2 || items[0].Quantity != 3 {
		t.Fatalf("items = %+v, %v", items, err)
	}
	if want := "/v1/store/inventory?status=available&ids=2&ids=7"; got != want {
		t.Errorf("request %s, want %s", got, want)
	}
}

func TestListFetchesNoMoreThanTheLoopTakes(t *testing.T) {
	var pages petPages
	c := fake(t, pages.ServeHTTP)
	for pet, err := range c.ListPets(context.Background(), nil) {
		if err != nil || pet.Name != "Rex" {
			t.Fatalf("first pet = %v, %v", pet, err)
		}
		break
	}
	if len(pages.requests) != 1 {
		t.Errorf("%d requests for one pet: %q", len(pages.requests), pages.requests)
	}
}

func TestListEndsWithTheErrorOfAPage(t *testing.T) {
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "" {
			w.Header().Set("Link", `</v1/categories?cursor=c2>; rel="next"`)
			answer(w, 200, `[{"id":1,"name":"Dogs"}]`)
			return
		}
		answer(w, 500, `{"code":"internal","message":"Internal error.","status":500}`)
	})
	cats, err := collect(c.ListCategories(context.Background(), nil))
	var apiErr *petstore.Error
	if len(cats) != 1 || !errors.As(err, &apiErr) || apiErr.Code != petstore.CodeInternal {
		t.Errorf("categories = %v, err = %v; want Dogs then the internal error", cats, err)
	}
}

func TestListKeepsTheKeyToItsOrigin(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the key went to another origin: %s", r.Header.Get("Authorization"))
	}))
	defer other.Close()
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "<"+other.URL+`/v1/pets?cursor=x>; rel="next"`)
		answer(w, 200, `[]`)
	})
	if _, err := collect(c.ListPets(context.Background(), nil)); err == nil || !strings.Contains(err.Error(), "leaves") {
		t.Errorf("err = %v, want a refusal to follow the link", err)
	}
}

// deprecatedPet answers as the service's deprecated getPetById does.
func deprecatedPet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Deprecation", "@1793491200")
	w.Header().Set("Sunset", "Wed, 30 Jun 2027 00:00:00 GMT")
	w.Header().Set("Link", `</v1/pets?ids=1>; rel="successor-version"`)
	answer(w, 200, `{"id":1,"name":"Rex","categoryId":1,"status":"available"}`)
}

func TestDeprecationHandlerHearsEveryDeprecatedAnswer(t *testing.T) {
	var got []petstore.Deprecation
	c := fake(t, deprecatedPet, petstore.WithDeprecationHandler(func(d petstore.Deprecation) { got = append(got, d) }))
	for range 2 {
		if _, err := c.GetPet(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 {
		t.Fatalf("handler called %d times, want 2", len(got))
	}
	d := got[0]
	if d.Operation != "getPetById" ||
		!d.Since.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) ||
		!d.Sunset.Equal(time.Date(2027, 6, 30, 0, 0, 0, 0, time.UTC)) ||
		d.Successor == nil || d.Successor.Path != "/v1/pets" || d.Successor.RawQuery != "ids=1" || d.Successor.Host == "" {
		t.Errorf("deprecation = %+v", d)
	}
}

func TestDeprecationIsLoggedOncePerOperation(t *testing.T) {
	var logs bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))

	c := fake(t, deprecatedPet)
	for range 3 {
		if _, err := c.GetPet(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
	for _, want := range []string{"operation=getPetById", "sunset=2027-06-30", `successor="http://`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("warning %q lacks %s", logs.String(), want)
		}
	}
}

// The service may add values to the lists of answers (open enums) in a minor version;
// the client passes them on, it does not fail.
func TestUnknownValuesInAnswersPassThrough(t *testing.T) {
	ctx := context.Background()
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/pets":
			answer(w, 200, `[{"id":1,"name":"Rex","categoryId":1,"status":"reserved"}]`)
		case "/v1/store/inventory/1":
			answer(w, 200, `{"petId":1,"quantity":3,"status":"reserved"}`)
		case "/v1/accounts":
			answer(w, 201, `{"id":2,"email":"ada@example.com","role":"auditor","createdAt":"2026-11-21T12:00:00Z"}`)
		case "/v1/messages/msg_1":
			answer(w, 200, `{"id":"msg_1","message":"Hi","status":"delivered","createdAt":"2026-11-21T12:00:00Z"}`)
		default:
			answer(w, 418, `{"code":"teapot","message":"I am a teapot.","status":418}`)
		}
	})

	pets, err := collect(c.ListPets(ctx, nil))
	if err != nil || len(pets) != 1 || pets[0].Status != "reserved" {
		t.Errorf("pets = %v, %v; want Rex, reserved", pets, err)
	}
	if item, err := c.GetInventory(ctx, 1); err != nil || item.Status != "reserved" {
		t.Errorf("inventory = %v, %v; want reserved", item, err)
	}
	if acct, err := c.CreateAccount(ctx, petstore.NewAccount{Email: "ada@example.com", Password: "correct horse battery"}); err != nil || acct.Role != "auditor" {
		t.Errorf("account = %v, %v; want the role auditor", acct, err)
	}
	if msg, err := c.GetMessage(ctx, "msg_1"); err != nil || msg.Status != "delivered" {
		t.Errorf("message = %v, %v; want delivered", msg, err)
	}
	var apiErr *petstore.Error
	if _, err := c.GetOrder(ctx, 1); !errors.As(err, &apiErr) || apiErr.Code != "teapot" || apiErr.Status != 418 {
		t.Errorf("err = %v, want the code teapot with status 418", err)
	}
}

func TestCredentialsAndUserAgent(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method+" "+r.URL.Path] = r.Header.Get("Authorization") + " | " + r.Header.Get("User-Agent")
		mu.Unlock()
		switch r.Method {
		case http.MethodPost:
			answer(w, 201, `{"id":3,"name":"laptop","key":"psk_new","prefix":"psk_new","createdAt":"2026-11-21T12:00:00Z"}`)
		case http.MethodGet:
			answer(w, 200, `[]`)
		default:
			w.WriteHeader(204)
		}
	}, petstore.WithUserAgent("shop/2.3"))
	ctx := context.Background()

	keys := c.WithPassword("ada@example.com", "correct horse battery")
	created, err := keys.CreateAPIKey(ctx, petstore.NewAPIKey{Name: "laptop"})
	if err != nil || created.Key != "psk_new" || created.Name != "laptop" {
		t.Fatalf("created = %+v, %v", created, err)
	}
	if _, err := collect(keys.ListAPIKeys(ctx, nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.RevokeAPIKey(ctx, 3); err != nil {
		t.Fatal(err)
	}

	basic := "Basic YWRhQGV4YW1wbGUuY29tOmNvcnJlY3QgaG9yc2UgYmF0dGVyeQ==" // ada@example.com:correct horse battery
	for req, want := range map[string]string{"POST /v1/api-keys": basic, "GET /v1/api-keys": basic, "DELETE /v1/api-keys/3": "Bearer psk_test"} {
		auth, agent, _ := strings.Cut(seen[req], " | ")
		if auth != want {
			t.Errorf("%s: Authorization %q, want %q", req, auth, want)
		}
		if !strings.HasPrefix(agent, "shop/2.3 petstore-go/") {
			t.Errorf("%s: User-Agent %q, want shop/2.3 then petstore-go/…", req, agent)
		}
	}
}

func TestGetCurrentAccountAsksWithTheKey(t *testing.T) {
	var seen string
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		seen = r.Method + " " + r.URL.Path + " " + r.Header.Get("Authorization")
		answer(w, 200, `{"id":2,"email":"ada@example.com","role":"admin","createdAt":"2026-11-21T12:00:00Z","passwordSource":"invitation"}`)
	})
	acct, err := c.GetCurrentAccount(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := "GET /v1/accounts/me Bearer psk_test"; seen != want {
		t.Errorf("sent %q, want %q", seen, want)
	}
	want := petstore.Account{ID: 2, Email: "ada@example.com", Role: petstore.RoleAdmin, CreatedAt: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	want.PasswordSource = petstore.PasswordInvitation
	if acct.ID != want.ID || acct.Email != want.Email || acct.Role != want.Role || !acct.CreatedAt.Equal(want.CreatedAt) ||
		acct.PasswordSource != want.PasswordSource {
		t.Errorf("account = %+v, want %+v", *acct, want)
	}
}

// The calling key of GET /accounts/me comes with its scopes (known or not) and its
// expiry; a key that never expires has a zero ExpiresAt, and an answer without a key
// a nil Key.
func TestGetCurrentAccountTellsTheCallingKey(t *testing.T) {
	for _, tt := range []struct {
		name, key string
		want      *petstore.CallingKey
	}{
		{"a narrowed key that expires", `,"key":{"id":7,"scopes":["account:read","pets:read","shop:later"],"expiresAt":"2027-01-01T00:00:00Z"}`,
			&petstore.CallingKey{ID: 7, Scopes: []petstore.Scope{petstore.ScopeAccountRead, petstore.ScopePetsRead, "shop:later"},
				ExpiresAt: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"a key that never expires", `,"key":{"id":8,"scopes":["account:read"]}`,
			&petstore.CallingKey{ID: 8, Scopes: []petstore.Scope{petstore.ScopeAccountRead}}},
		{"no key", ``, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := fake(t, func(w http.ResponseWriter, r *http.Request) {
				answer(w, 200, `{"id":2,"email":"ada@example.com","role":"admin","createdAt":"2026-11-21T12:00:00Z"`+tt.key+`}`)
			})
			acct, err := c.GetCurrentAccount(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := acct.Key
			if (got == nil) != (tt.want == nil) || got != nil && (got.ID != tt.want.ID ||
				!slices.Equal(got.Scopes, tt.want.Scopes) || !got.ExpiresAt.Equal(tt.want.ExpiresAt)) {
				t.Errorf("key = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNewClientNeedsAnAbsoluteURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8080/v1", "/v1", "ftp://example.com/v1", "http://[::1",
		// Joined onto every path, these would land in the wrong place of each request.
		"http://localhost:8080/v1?key=psk_x", "http://localhost:8080/v1?", "http://localhost:8080/v1#top", "http://ada:pw@localhost:8080/v1"} {
		if _, err := petstore.NewClient(u); err == nil {
			t.Errorf("NewClient(%q) made a client", u)
		}
	}
	if _, err := petstore.NewClient("http://localhost:8080/v1", petstore.WithAPIKey("")); err == nil {
		t.Error("an empty API key made a client that sends a bare Authorization: Bearer")
	}
	if _, err := petstore.NewClient("http://localhost:8080/v1/", petstore.WithAPIKey("psk_x")); err != nil {
		t.Errorf("a base URL with a trailing slash: %v", err)
	}
}

// The SDK must stay buildable by Go 1.23 (iter.Seq2 is its floor), which is also why it
// requires oapi-codegen/runtime v1.2.0: later versions require Go 1.24.
func TestGoDirectiveStaysAt123(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^go 1\.23$`).Match(mod) {
		t.Errorf("go.mod does not say go 1.23:\n%s", mod)
	}
}

// A Retry-After too long for a time.Duration is a very long wait, not a number that
// wraps around to a short one (18446744074 s wraps to 0.29 s).
func TestAHugeRetryAfterIsNotWaitedFor(t *testing.T) {
	for _, v := range []string{"18446744074", "9300000000", "99999999999999999999999"} {
		t.Run(v, func(t *testing.T) {
			var mu sync.Mutex
			attempts := 0
			c := fake(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				attempts++
				mu.Unlock()
				w.Header().Set("Retry-After", v)
				answer(w, 503, `{"code":"unavailable","message":"Later.","status":503}`)
			})
			_, err := c.GetCategory(context.Background(), 1)
			var apiErr *petstore.Error
			if !errors.As(err, &apiErr) || apiErr.RetryAfter < 24*time.Hour {
				t.Fatalf("err = %v, want the 503 with a Retry-After of more than a day", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if attempts != 1 {
				t.Errorf("%d attempts: the client retried instead of handing back a Retry-After over a minute", attempts)
			}
		})
	}
}

// A service whose Link leads back to a page already fetched (a cursor bug) would make
// the loop run forever: the list ends with an error instead.
func TestListEndsWhenALinkLeadsBack(t *testing.T) {
	tests := []struct {
		name  string
		links map[string]string // cursor → the next page's cursor
	}{
		{"to the same page", map[string]string{"": "c2", "c2": "c2"}},
		{"to an earlier page", map[string]string{"": "c2", "c2": "c3", "c3": "c2"}},
		{"to the first page", map[string]string{"": "c2", "c2": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			requests := 0
			c := fake(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				requests++
				n := requests
				mu.Unlock()
				// Past 10 pages the fake stops linking, so that a client that loops ends.
				if next, ok := tt.links[r.URL.Query().Get("cursor")]; ok && n < 10 {
					if next == "" {
						w.Header().Set("Link", `</v1/categories>; rel="next"`)
					} else {
						w.Header().Set("Link", `</v1/categories?cursor=`+next+`>; rel="next"`)
					}
				}
				answer(w, 200, `[{"id":1,"name":"Dogs"}]`)
			})
			_, err := collect(c.ListCategories(context.Background(), nil))
			if err == nil || !strings.Contains(err.Error(), "already") {
				t.Errorf("err = %v, want the list to end with an error about a page already fetched", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if requests != len(tt.links) {
				t.Errorf("%d requests, want %d (each page once)", requests, len(tt.links))
			}
		})
	}
}

// roundTripFunc is an http.RoundTripper of a function, such as a program's test stub.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A RoundTripper need not fill in Response.Request (httptest.ResponseRecorder.Result
// does not): links, the deprecation report and decoding errors must not depend on it.
func TestATransportThatLeavesOutTheRequest(t *testing.T) {
	stub := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		switch r.URL.RequestURI() {
		case "/v1/categories":
			rec.Header().Set("Link", `</v1/categories?cursor=c2>; rel="next"`)
			answer(rec, 200, `[{"id":1,"name":"Dogs"}]`)
		case "/v1/categories?cursor=c2":
			answer(rec, 200, `[{"id":2,"name":"Cats"}]`)
		case "/v1/categories/1":
			answer(rec, 200, `{"id":`) // cut short
		case "/v1/pets/1":
			deprecatedPet(rec, r)
		default:
			answer(rec, 404, `{"code":"not_found","message":"No.","status":404}`)
		}
		return rec.Result(), nil
	})
	var deprecations []petstore.Deprecation
	c, err := petstore.NewClient("http://petstore.test/v1", petstore.WithHTTPClient(&http.Client{Transport: stub}),
		petstore.WithDeprecationHandler(func(d petstore.Deprecation) { deprecations = append(deprecations, d) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	cats, err := collect(c.ListCategories(ctx, nil))
	if err != nil || len(cats) != 2 || cats[1].Name != "Cats" {
		t.Errorf("categories = %v, %v; want Dogs and Cats", cats, err)
	}
	if _, err := c.GetCategory(ctx, 1); err == nil || !strings.Contains(err.Error(), "/v1/categories/1") {
		t.Errorf("err = %v, want a decoding error naming the path", err)
	}
	if _, err := c.GetPet(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if len(deprecations) != 1 || deprecations[0].Successor == nil || deprecations[0].Successor.String() != "http://petstore.test/v1/pets?ids=1" {
		t.Errorf("deprecations = %+v, want one with the successor http://petstore.test/v1/pets?ids=1", deprecations)
	}
}

// A retry sends the whole body again, not the reader the first attempt drained. The
// stub stands in for the transport: net/http's own would rewind the body by itself on
// some failures, and hide a client that does not.
func TestRetriesSendTheBodyAgain(t *testing.T) {
	var bodies []string
	stub := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		body, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(body))
		rec := httptest.NewRecorder()
		switch {
		case len(bodies)%2 == 1:
			answer(rec, 503, `{"code":"unavailable","message":"Later.","status":503}`)
		case r.Method == http.MethodPut:
			answer(rec, 200, `{"petId":1,"quantity":4,"status":"available"}`)
		default:
			answer(rec, 201, `{"id":7,"petId":1,"quantity":2,"complete":false,"accountId":3}`)
		}
		return rec.Result(), nil
	})
	c, err := petstore.NewClient("http://petstore.test/v1", petstore.WithHTTPClient(&http.Client{Transport: stub}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.SetInventory(ctx, 1, petstore.InventoryUpdate{Quantity: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PlaceOrder(ctx, petstore.NewOrder{PetID: 1, Quantity: 2}); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"quantity":4}`, `{"quantity":4}`, `{"petId":1,"quantity":2}`, `{"petId":1,"quantity":2}`}
	if strings.Join(bodies, " ") != strings.Join(want, " ") {
		t.Errorf("bodies = %q, want %q", bodies, want)
	}
}

// What the webhook calls send, and every field of their answers, optional ones included.
func TestWebhookCallsSendAndReadEveryField(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]string{} // "METHOD path" → Content-Type and body
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent[r.Method+" "+r.URL.RequestURI()] = r.Header.Get("Content-Type") + " " + string(body)
		mu.Unlock()
		const hook = `"id":4,"url":"https://shop.example.com/hooks","description":"Order desk","events":["order.placed","pet.adopted"],"enabled":false,` +
			`"disabledReason":"Every attempt failed.","failingSince":"2026-11-21T11:40:00Z","previousSecretExpiresAt":"2026-11-22T12:00:00Z",` +
			`"createdAt":"2026-11-21T12:00:00Z","updatedAt":"2026-11-21T12:30:00Z"`
		switch {
		case r.URL.Path == "/v1/webhooks/4/deliveries":
			answer(w, 200, `[{"id":31,"webhookId":4,"eventId":"evt_a","eventType":"order.placed","status":"pending","attempts":2,`+
				`"nextAttemptAt":"2026-11-21T12:01:04Z","lastAttemptAt":"2026-11-21T12:00:31Z","responseStatus":503,`+
				`"lastError":"the endpoint answered 503","createdAt":"2026-11-21T12:00:30Z"}]`)
		case r.Method == http.MethodPost:
			answer(w, 200, `{`+hook+`,"secret":"whsec_new"}`)
		default:
			answer(w, 200, `{`+hook+`}`)
		}
	})
	ctx := context.Background()
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }

	created, err := c.CreateWebhook(ctx, petstore.NewWebhook{URL: "https://shop.example.com/hooks", Events: []petstore.EventType{petstore.EventTypeOrderPlaced}})
	if err != nil {
		t.Fatal(err)
	}
	want := petstore.Webhook{
		ID: 4, URL: "https://shop.example.com/hooks", Description: "Order desk",
		Events: []petstore.EventType{petstore.EventTypeOrderPlaced, "pet.adopted"}, Enabled: false,
		DisabledReason: "Every attempt failed.", FailingSince: at("2026-11-21T11:40:00Z"),
		PreviousSecretExpiresAt: at("2026-11-22T12:00:00Z"), CreatedAt: at("2026-11-21T12:00:00Z"), UpdatedAt: at("2026-11-21T12:30:00Z"),
	}
	if created.Secret != "whsec_new" || fmt.Sprint(created.Webhook) != fmt.Sprint(want) {
		t.Errorf("created = %+v\nwant      %+v with whsec_new", *created, want)
	}
	if _, err := c.UpdateWebhook(ctx, 4, petstore.WebhookPatch{Enabled: petstore.Ptr(true), Description: petstore.Ptr("")}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if got, want := sent["PATCH /v1/webhooks/4"], `application/merge-patch+json {"description":"","enabled":true}`; got != want {
		t.Errorf("the patch sent %q, want %q: an empty description removes it", got, want)
	}
	mu.Unlock()
	if _, err := c.UpdateWebhook(ctx, 4, petstore.WebhookPatch{Events: []petstore.EventType{petstore.EventTypeAll}}); err != nil {
		t.Fatal(err)
	}
	for _, overlap := range []*time.Duration{nil, petstore.Ptr(time.Duration(0)), petstore.Ptr(1500 * time.Millisecond)} {
		if _, err := c.RotateWebhookSecret(ctx, 4, petstore.SecretRotation{Overlap: overlap}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := sent["POST /v1/webhooks/4/rotate-secret"]
		mu.Unlock()
		want := map[bool]string{true: `application/json {}`}[overlap == nil]
		if overlap != nil {
			want = fmt.Sprintf(`application/json {"overlapSeconds":%d}`, (*overlap+time.Second-1)/time.Second)
		}
		if got != want {
			t.Errorf("rotation with the overlap %v sent %q, want %q", overlap, got, want)
		}
	}
	deliveries, err := collect(c.ListDeliveries(ctx, 4, &petstore.ListOptions{Limit: 5}))
	if err != nil {
		t.Fatal(err)
	}
	wantDelivery := petstore.Delivery{
		ID: 31, WebhookID: 4, EventID: "evt_a", EventType: petstore.EventTypeOrderPlaced, Status: petstore.DeliveryStatusPending,
		Attempts: 2, NextAttemptAt: at("2026-11-21T12:01:04Z"), LastAttemptAt: at("2026-11-21T12:00:31Z"),
		ResponseStatus: 503, LastError: "the endpoint answered 503", CreatedAt: at("2026-11-21T12:00:30Z"),
	}
	if len(deliveries) != 1 || *deliveries[0] != wantDelivery {
		t.Errorf("deliveries = %+v\nwant         %+v", deliveries, wantDelivery)
	}

	mu.Lock()
	defer mu.Unlock()
	for req, want := range map[string]string{
		"POST /v1/webhooks":                     `application/json {"events":["order.placed"],"url":"https://shop.example.com/hooks"}`,
		"PATCH /v1/webhooks/4":                  `application/merge-patch+json {"events":["*"]}`,
		"GET /v1/webhooks/4/deliveries?limit=5": " ",
	} {
		if sent[req] != want {
			t.Errorf("%s sent %q, want %q", req, sent[req], want)
		}
	}
}
