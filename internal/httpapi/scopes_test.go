package httpapi_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

// documentScopes are the scopes of the served document's bearerAuth scheme.
func (a *testAPI) documentScopes(t testing.TB) []string {
	t.Helper()
	scheme := a.servedDocument(t).Components.SecuritySchemes["bearerAuth"].Value
	catalogue, _ := scheme.Extensions["x-scopes"].(map[string]any)
	var list []string
	for s := range catalogue {
		list = append(list, s)
	}
	slices.Sort(list)
	if len(list) < 10 {
		t.Fatalf("the document lists %d scopes: %v", len(list), list)
	}
	return list
}

// scopedKey makes a key with scopes (and expiresAt when not zero) with maker's key,
// and returns its secret.
func (a *testAPI) scopedKey(t testing.TB, maker string, scopes []string, expiresAt time.Time) string {
	t.Helper()
	body := map[string]any{"name": "scoped"}
	if scopes != nil {
		body["scopes"] = scopes
	}
	if !expiresAt.IsZero() {
		body["expiresAt"] = expiresAt.UTC().Format(time.RFC3339)
	}
	var k struct{ Key string }
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: maker, Body: body}).expect(201, "").JSON(&k)
	return k.Key
}

// The scope group, from the document: for every secured operation, a key with every
// scope but the one it needs is refused with 403 insufficient_scope (RFC 6750's
// WWW-Authenticate naming the scope) before its body is read, and changes nothing; a
// key with exactly that scope gets past authorization to validation.
func TestOWASP_Scopes_EveryOperationNeedsItsScope(t *testing.T) {
	a := newTestAPI(t)
	w := newOWASPWorld(t, a)
	scopes := a.documentScopes(t)
	// The keys of one scope each belong to a second admin: an account holds at most 25.
	only, without := map[string]string{}, map[string]string{}
	second, _ := a.newKey("scoped-admin@example.com", petstore.Admin)
	for _, s := range scopes {
		only[s] = a.scopedKey(t, second, []string{s}, time.Time{})
		without[s] = a.scopedKey(t, a.Admin, slices.DeleteFunc(slices.Clone(scopes), func(x string) bool { return x == s }), time.Time{})
	}
	ops := a.documentOps(t)
	before := a.state(t)
	secured := 0
	for _, op := range ops {
		if !op.Secured {
			continue
		}
		secured++
		if !slices.Contains(scopes, op.Scope) {
			t.Errorf("%s needs scope %q, which the document does not list", op.ID, op.Scope)
			continue
		}
		r := w.request(t, op, without[op.Scope])
		res := a.do(t, r)
		if res.Status != 403 || res.Code() != petstore.EInsufficientScope {
			t.Errorf("%s without %s: %d %s, want 403 insufficient_scope", op.ID, op.Scope, res.Status, res.Body)
			continue
		}
		if got, want := res.Header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="`+op.Scope+`"`; got != want {
			t.Errorf("%s: WWW-Authenticate %q, want %q", op.ID, got, want)
		}
		if op.HasBody {
			r.Body = `{"not json`
			a.do(t, r).expect(403, petstore.EInsufficientScope)
		}
	}
	if secured != 44 {
		t.Errorf("%d secured operations; the document has 44", secured)
	}
	if after := a.state(t); !bytes.Equal(before, after) {
		t.Fatal("a key without the scope changed something")
	}
	for _, op := range ops {
		if !op.Secured {
			continue
		}
		r := w.request(t, op, only[op.Scope])
		if op.HasBody && op.ID != uploadPetPhoto { // an image is not JSON: checked below
			r.Body = `{"not json`
			a.do(t, r).expect(400, petstore.EInvalidJSON)
			continue
		}
		if res := a.do(t, r); res.Status == 401 || res.Status == 403 {
			t.Errorf("%s with only %s: %d %s", op.ID, op.Scope, res.Status, res.Body)
		}
	}
}

func TestKeyScopesAreGrantedByRoleAndPassedOnNoFurther(t *testing.T) {
	a := newTestAPI(t)
	// A customer can never mint an admin's scope, whatever it asks.
	res := a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer,
		Body: `{"name":"k","scopes":["pets:read","webhooks:manage"]}`}).expect(400, petstore.EValidationFailed)
	if !strings.Contains(string(res.Body), "webhooks:manage") {
		t.Errorf("the refusal does not name the scope: %s", res.Body)
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: `{"name":"k","scopes":["pets:eat"]}`}).
		expect(400, petstore.EValidationFailed)
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: `{"name":"k","scopes":[]}`}).
		expect(400, petstore.EValidationFailed)

	// A key limited to reading pets and managing keys passes on no more than it has.
	limited := a.scopedKey(t, a.Customer, []string{"pets:read", "keys:manage", "pets:read"}, time.Time{})
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: limited, Body: `{"name":"k","scopes":["orders:write"]}`}).
		expect(400, petstore.EValidationFailed)
	var made struct {
		Key    string
		Scopes []string
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: limited, Body: `{"name":"inherits"}`}).expect(201, "").JSON(&made)
	if !slices.Equal(made.Scopes, []string{"keys:manage", "pets:read"}) {
		t.Errorf("a key made by a limited key without scopes has %v, want its maker's", made.Scopes)
	}
	a.do(t, req{Method: "GET", Path: "/v1/pets", Key: made.Key}).expect(200, "")
	a.do(t, req{Method: "GET", Path: "/v1/store/orders", Key: made.Key}).expect(403, petstore.EInsufficientScope)

	// The list shows each key's scopes; a key with every scope of its role shows none.
	var keys []struct {
		Name   string
		Scopes []string
	}
	a.do(t, req{Method: "GET", Path: "/v1/api-keys", Key: a.Customer}).expect(200, "").JSON(&keys)
	if len(keys) != 3 || keys[0].Scopes != nil || !slices.Equal(keys[1].Scopes, []string{"keys:manage", "pets:read"}) {
		t.Errorf("keys = %+v", keys)
	}

	// A password has every scope of its role.
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"ada@example.com","password":"correct horse battery"}`}).expect(201, "")
	var byPassword struct{ Scopes []string }
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: basic("ada@example.com", "correct horse battery"),
		Body: `{"name":"k","scopes":["orders:write"]}`}).expect(201, "").JSON(&byPassword)
	if !slices.Equal(byPassword.Scopes, []string{"orders:write"}) {
		t.Errorf("scopes = %v", byPassword.Scopes)
	}
}

// testClock is a clock a test moves, given to the server as Config.Now.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
}

// expiringKey makes a key of maker that expires on the second after the clock's time,
// half a second away: less than the key cache's lifetime, so that a use now leaves it
// cached when it expires.
func (a *testAPI) expiringKey(t *testing.T, clock *testClock, maker string) (string, time.Time) {
	t.Helper()
	clock.Set(time.Now().Truncate(time.Second).Add(500 * time.Millisecond))
	expires := clock.Now().Truncate(time.Second).Add(time.Second)
	return a.scopedKey(t, maker, nil, expires), expires
}

func TestAnExpiredKeyIsRefusedAndSaysSo(t *testing.T) {
	clock := &testClock{now: time.Now()}
	a := newTestAPI(t, func(c *httpapi.Config) { c.Now = clock.Now })
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: map[string]any{
		"name": "k", "expiresAt": clock.Now().Add(-time.Second).UTC().Format(time.RFC3339)}}).expect(400, petstore.EValidationFailed)

	key, expires := a.expiringKey(t, clock, a.Customer)
	// Used (and so cached) while it lives...
	a.do(t, req{Method: "GET", Path: "/v1/pets", Key: key}).expect(200, "")
	clock.Set(expires)
	// ...it is refused from the moment it expires, from the cache too, in words that
	// say it expired rather than that it is unknown.
	for range 3 {
		res := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: key}).expect(401, petstore.EUnauthorized)
		if !strings.Contains(string(res.Body), "expired at "+expires.UTC().Format(time.RFC3339)) {
			t.Fatalf("the refusal of an expired key: %s", res.Body)
		}
	}
	unknown := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: "psk_" + strings.Repeat("a", 32)}).expect(401, petstore.EUnauthorized)
	if strings.Contains(string(unknown.Body), "expired") {
		t.Errorf("an unknown key reads as expired: %s", unknown.Body)
	}
	if got := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: key}).Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("an expired key's WWW-Authenticate is %q", got)
	}
}

// RFC 6750's challenge: a key sent that will not do is an invalid_token; no key at all
// (or another scheme) is a plain challenge. With the rate limit on, the limiter's key
// check is the one the answer comes from.
func TestAKeySentThatWillNotDoIsAnInvalidToken(t *testing.T) {
	for _, limit := range []int{0, 1000} {
		a := newTestAPI(t, func(c *httpapi.Config) { c.RateLimit = limit })
		for _, c := range []struct {
			name string
			r    req
			want string
		}{
			{"unknown", req{Method: "GET", Path: "/v1/pets", Key: "psk_" + strings.Repeat("a", 32)}, `Bearer error="invalid_token"`},
			{"malformed", req{Method: "GET", Path: "/v1/pets", Key: "not-a-key"}, `Bearer error="invalid_token"`},
			{"unknown, on an operation that also takes a password", req{Method: "GET", Path: "/v1/api-keys", Key: "psk_" + strings.Repeat("a", 32)}, `Bearer error="invalid_token"`},
			{"no", req{Method: "GET", Path: "/v1/pets"}, "Bearer"},
			{"another scheme's", req{Method: "GET", Path: "/v1/pets", Auth: "Token abc"}, "Bearer"},
		} {
			res := a.do(t, c.r).expect(401, petstore.EUnauthorized)
			if got := res.Header.Get("WWW-Authenticate"); got != c.want {
				t.Errorf("rate limit %d, %s key: WWW-Authenticate %q, want %q", limit, c.name, got, c.want)
			}
		}
	}
}

// The OWASP group of expiry: an admin key, cached by a use while it lived, gets 401 on
// every secured operation once expired, and changes nothing.
func TestOWASP_Scopes_AnExpiredKeyIsRefusedByEveryOperation(t *testing.T) {
	clock := &testClock{now: time.Now()}
	a := newTestAPI(t, func(c *httpapi.Config) { c.Now = clock.Now })
	w := newOWASPWorld(t, a)
	key, expires := a.expiringKey(t, clock, a.Admin)
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: key}).expect(200, "")
	before := a.state(t)
	clock.Set(expires)
	secured := 0
	for _, op := range a.documentOps(t) {
		if !op.Secured {
			continue
		}
		secured++
		res := a.do(t, w.request(t, op, key))
		if res.Status != 401 || !strings.Contains(string(res.Body), "expired") {
			t.Errorf("%s with an expired key: %d %s", op.ID, res.Status, res.Body)
		}
	}
	if secured != 44 {
		t.Errorf("%d secured operations; the document has 44", secured)
	}
	if after := a.state(t); !bytes.Equal(before, after) {
		t.Fatal("an expired key changed something")
	}
}

func TestTheOperatorsLongestKeyLifetime(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.KeyMaxLifetime = 24 * time.Hour })
	var k struct{ ExpiresAt time.Time }
	before := time.Now()
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: `{"name":"k"}`}).expect(201, "").JSON(&k)
	if d := k.ExpiresAt.Sub(before); d < 24*time.Hour-2*time.Second || d > 24*time.Hour+2*time.Second {
		t.Errorf("a key made without an expiry expires in %v, want the longest lifetime (24h)", d)
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: map[string]any{
		"name": "k", "expiresAt": time.Now().Add(25 * time.Hour).UTC().Format(time.RFC3339)}}).expect(400, petstore.EValidationFailed)
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: map[string]any{
		"name": "k", "expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}).expect(201, "")
}

// A key's uses reach GET /api-keys as lastUsedAt, to the minute, through the writer
// the service runs (RecordKeyUses), which writes the last ones as it stops; a key
// never used has none.
func TestAKeysLastUseIsRecordedToTheMinute(t *testing.T) {
	a := newTestAPI(t)
	used, _ := a.newKey("used@example.com", petstore.Customer)
	a.scopedKey(t, used, []string{"pets:read"}, time.Time{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Server.RecordKeyUses(ctx); close(done) }()
	from := time.Now().Truncate(time.Minute)
	for range 5 {
		a.do(t, req{Method: "GET", Path: "/v1/pets", Key: used}).expect(200, "")
	}
	stop()
	<-done
	to := time.Now()
	var keys []struct {
		Scopes     []string
		LastUsedAt *time.Time
	}
	a.do(t, req{Method: "GET", Path: "/v1/api-keys", Key: used}).expect(200, "").JSON(&keys)
	if len(keys) != 2 {
		t.Fatalf("%d keys, want 2", len(keys))
	}
	for _, k := range keys {
		if k.Scopes != nil { // the idle key
			if k.LastUsedAt != nil {
				t.Errorf("a key never used was last used at %v", k.LastUsedAt)
			}
			continue
		}
		at := k.LastUsedAt
		if at == nil || at.Before(from) || at.After(to) || !at.Equal(at.Truncate(time.Minute)) {
			t.Errorf("the used key's lastUsedAt = %v, want the minute of its uses (in %v…%v)", at, from, to)
		}
	}
}
