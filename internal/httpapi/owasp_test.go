package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/media/phototest"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/ratelimit"
)

// The OWASP API Security Top 10 (2023), one test per item, named after it. Each tries
// every operation of the served document the item applies to: the operations come
// from the document, not from a list kept here, so a new operation is attacked too
// (TestOWASPFixturesCoverEveryOperation fails until it has a fixture).

// docOp is an operation of the served document.
type docOp struct {
	ID, Method, Path string
	// Secured is false only for the operation open to all (security: []).
	Secured bool
	// AdminOnly is set when the document's x-roles admits admins only.
	AdminOnly bool
	HasBody   bool
	// Basic is set when the operation also takes HTTP Basic (an account's password).
	Basic bool
	// Lists take limit and cursor.
	List bool
	// Scope is the one scope of its x-scopes.
	Scope string
}

func (a *testAPI) documentOps(t testing.TB) []docOp {
	t.Helper()
	doc := a.servedDocument(t)
	var ops []docOp
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			d := docOp{ID: op.OperationID, Method: method, Path: path, Secured: op.Security == nil || len(*op.Security) > 0}
			roles, _ := op.Extensions["x-roles"].([]any)
			d.AdminOnly = len(roles) == 1 && roles[0] == "admin"
			if scopes, _ := op.Extensions["x-scopes"].([]any); len(scopes) == 1 {
				d.Scope, _ = scopes[0].(string)
			}
			d.HasBody = op.RequestBody != nil
			if op.Security != nil {
				for _, req := range *op.Security {
					_, basic := req["basicAuth"]
					d.Basic = d.Basic || basic
				}
			}
			for _, p := range op.Parameters {
				d.List = d.List || p.Value.Name == "cursor"
			}
			ops = append(ops, d)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].ID < ops[j].ID })
	return ops
}

// owaspWorld is what the requests of the groups point at: objects of the customer
// (a.Customer) that another customer must not reach.
type owaspWorld struct {
	a         *testAPI
	pet       pet
	category  category
	order     order
	keyID     int64
	messageID string
	// photoID is a photo of pet, and photo the bytes of an image to upload.
	photoID string
	photo   []byte
	// webhook is an endpoint with one delivery (of a test event); eventID is an
	// event of the feed (the world's order placed one).
	webhook    webhook
	deliveryID int64
	eventID    string
	// Other is the key of a second customer.
	Other string
	// invitation and reset are open one-time tokens: an invitation of
	// invitee@example.com and a reset of reset@example.com's password.
	invitation, reset string
}

func newOWASPWorld(t *testing.T, a *testAPI) *owaspWorld {
	t.Helper()
	w := &owaspWorld{a: a}
	w.category = a.category(t, "Dogs")
	w.pet = a.pet(t, "Rex", 50)
	w.order = a.order(t, a.Customer, w.pet.ID, 1)
	w.photo = phototest.PNG(t, 40, 30)
	var ph struct{ ID string }
	a.upload(t, w.pet.ID, "image/png", w.photo, 201, "").JSON(&ph)
	w.photoID = ph.ID
	var k struct{ ID int64 }
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: `{"name":"laptop"}`}).expect(201, "").JSON(&k)
	w.keyID = k.ID
	var m struct{ ID string }
	a.do(t, req{Method: "POST", Path: "/v1/messages", Key: a.Customer, Body: `{"message":"hello"}`}).expect(201, "").JSON(&m)
	w.messageID = m.ID
	w.Other, _ = a.newKey("other@example.com", petstore.Customer)
	w.invitation, w.reset = worldTokens(t, a.Store)
	// The endpoint, its delivery and the event come from the store: the world is also
	// made under a rate limit of 5 a second (API4).
	ctx := context.Background()
	ws := a.Store
	hook, err := ws.CreateWebhook(ctx, petstore.Webhook{URL: "https://hooks.example.com/petstore", Events: petstore.MaskAll, Secret: "whsec_world"})
	if err != nil {
		t.Fatal(err)
	}
	w.webhook = webhook{ID: hook.ID, URL: hook.URL}
	d, err := ws.SendTestEvent(ctx, hook.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.deliveryID = d.ID
	// PostgreSQL shows an event once every transaction begun before it has ended, on
	// the whole server: another process's moment may hold it back.
	var placed []petstore.Event
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		placed, err = ws.Events(ctx, petstore.EventFilter{Type: petstore.OrderPlaced}, petstore.Page{Limit: 1})
		if err != nil || len(placed) == 1 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || len(placed) != 1 {
		t.Fatalf("the world's order placed %d events (%v)", len(placed), err)
	}
	w.eventID = placed[0].ID
	return w
}

// worldTokens stores an invitation of invitee@example.com and a reset of the
// password of a new reset@example.com, and returns their tokens.
func worldTokens(t testing.TB, st petstore.Store) (invitation, reset string) {
	t.Helper()
	ctx := context.Background()
	invitation, hash := auth.NewToken(auth.InvitationPrefix)
	if _, err := st.CreateInvitation(ctx, petstore.NewToken{Kind: petstore.TokenInvitation, Email: "invitee@example.com",
		Role: petstore.Customer, Hash: hash, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAccount(ctx, "reset@example.com", "$argon2id$stand-in", petstore.Customer); err != nil {
		t.Fatal(err)
	}
	reset, hash = auth.NewToken(auth.ResetPrefix)
	if err := st.CreatePasswordReset(ctx, petstore.NewToken{Kind: petstore.TokenReset, Email: "reset@example.com",
		Hash: hash, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return invitation, reset
}

// request is a valid request of op on the world's objects, with key.
func (w *owaspWorld) request(t testing.TB, op docOp, key string) req {
	t.Helper()
	path := "/v1" + strings.NewReplacer(
		"{petId}", fmt.Sprint(w.pet.ID),
		"{categoryId}", fmt.Sprint(w.category.ID),
		"{orderId}", fmt.Sprint(w.order.ID),
		"{keyId}", fmt.Sprint(w.keyID),
		"{messageId}", w.messageID,
		"{webhookId}", fmt.Sprint(w.webhook.ID),
		"{deliveryId}", fmt.Sprint(w.deliveryID),
		"{eventId}", w.eventID,
		"{accountId}", fmt.Sprint(w.a.CustomerID),
		"{photoId}", w.photoID,
		"{size}", "thumb",
	).Replace(op.Path)
	bodies := map[string]string{
		"createAccount":   `{"email":"new@example.com","password":"correct horse battery"}`,
		"createApiKey":    `{"name":"k"}`,
		"sendMessage":     `{"message":"hi"}`,
		"createPet":       fmt.Sprintf(`{"name":"Max","categoryId":%d}`, w.category.ID),
		"replacePet":      fmt.Sprintf(`{"name":"Rex","categoryId":%d}`, w.category.ID),
		"updatePet":       `{"name":"Rex"}`,
		"createCategory":  `{"name":"Cats"}`,
		"replaceCategory": `{"name":"Dogs"}`,
		"setInventory":    `{"quantity":50}`,
		"placeOrder":      fmt.Sprintf(`{"petId":%d,"quantity":1}`, w.pet.ID),
		"updateOrder":     `{"complete":false}`,
		"createWebhook":   `{"url":"https://hooks.example.com/other","events":["order.placed"]}`,
		"updateWebhook":   `{"description":"Order desk"}`,
		// Enabling the enabled customer again: a change the groups may repeat freely.
		"updateAccount": `{"disabled":false}`,
		// Its body is optional; the groups send one, which is what they test.
		"rotateWebhookSecret": `{"overlapSeconds":3600}`,
		// Sign-in and the one-time links: a wrong password, and the world's tokens
		// (each works once: the first request that gets through uses it).
		"createSession":        `{"email":"customer@example.com","password":"not the password"}`,
		"createInvitation":     `{"email":"invitee@example.com","role":"admin"}`,
		"acceptInvitation":     `{"token":"` + w.invitation + `","password":"correct horse battery"}`,
		"requestPasswordReset": `{"email":"customer@example.com"}`,
		"resetPassword":        `{"token":"` + w.reset + `","password":"correct horse battery"}`,
		"reorderPetPhotos":     `{"photoIds":["` + w.photoID + `"]}`,
	}
	r := req{Method: op.Method, Path: path, Key: key}
	if op.ID == uploadPetPhoto { // an image, not JSON
		r.Body, r.Header = w.photo, map[string]string{"Content-Type": "image/png"}
		return r
	}
	if op.HasBody {
		body, ok := bodies[op.ID]
		if !ok {
			t.Fatalf("no body for %s: add one to owaspWorld.request", op.ID)
		}
		r.Body = body
	}
	return r
}

// uploadPetPhoto is the one operation whose body is not JSON but an image.
const uploadPetPhoto = "uploadPetPhoto"

// ownedByAccount are the operations on one account's object (its order, key or
// message), by the parameter that names it.
// credentialOperations are the operations open to all that take a password.
var credentialOperations = map[string]bool{"createAccount": true, "createSession": true, "acceptInvitation": true,
	"requestPasswordReset": true, "resetPassword": true}

var ownedByAccount = map[string]bool{"getOrder": true, "cancelOrder": true, "revokeApiKey": true, "getMessage": true}

// TestOWASPFixturesCoverEveryOperation keeps the groups honest: every operation of
// the document has a request, and the document's "Admin only" agrees with the role
// table the server enforces (API5 checks the enforcement).
func TestOWASPFixturesCoverEveryOperation(t *testing.T) {
	a := newTestAPI(t)
	w := newOWASPWorld(t, a)
	ops := a.documentOps(t)
	if len(ops) < 25 {
		t.Fatalf("the document has %d operations; the groups expect at least 25", len(ops))
	}
	for _, op := range ops {
		_ = w.request(t, op, a.Customer)
	}
}

// API1:2023 Broken Object Level Authorization. Another customer reaching the
// customer's order, key or message by id gets the 404 of a missing object, and the
// object is unchanged; lists show a customer only its own.
func TestOWASP_API1_BrokenObjectLevelAuthorization(t *testing.T) {
	a := newTestAPI(t)
	w := newOWASPWorld(t, a)
	before := a.state(t)
	tried := 0
	for _, op := range a.documentOps(t) {
		if !ownedByAccount[op.ID] {
			continue
		}
		tried++
		t.Run(op.ID, func(t *testing.T) {
			other := a.do(t, w.request(t, op, w.Other)).expect(404, "not_found")
			missing := w.request(t, op, w.Other)
			missing.Path = missing.Path[:strings.LastIndex(missing.Path, "/")+1] + "999999"
			if op.ID == "getMessage" {
				missing.Path = missing.Path[:strings.LastIndex(missing.Path, "/")+1] + "msg_00000000000000000000000000"
			}
			gone := a.do(t, missing).expect(404, "not_found")
			if other.Code() != gone.Code() || shape(messageOf(other)) != shape(messageOf(gone)) {
				t.Errorf("another's object and a missing one answer differently: %s / %s", other.Body, gone.Body)
			}
		})
	}
	if tried != len(ownedByAccount) {
		t.Fatalf("tried %d operations on owned objects, want %d", tried, len(ownedByAccount))
	}
	if after := a.state(t); !bytes.Equal(before, after) {
		t.Fatalf("another customer changed the customer's objects:\n%s\n%s", before, after)
	}
	// Lists: the other customer's orders and keys are its own only, whatever it asks.
	for _, path := range []string{"/v1/store/orders", path("/v1/store/orders?accountId=%d", a.CustomerID), "/v1/api-keys"} {
		body := string(a.do(t, req{Method: "GET", Path: path, Key: w.Other}).expect(200, "").Body)
		if strings.Contains(body, fmt.Sprintf(`"id":%d,`, w.order.ID)) && strings.Contains(path, "orders") ||
			strings.Contains(body, fmt.Sprintf(`"id":%d,`, w.keyID)) && strings.Contains(path, "keys") {
			t.Errorf("GET %s shows the customer's objects to another: %s", path, body)
		}
	}
}

func messageOf(r *response) string {
	var e struct{ Message string }
	_ = json.Unmarshal(r.Body, &e)
	return e.Message
}

var wholeKey = regexp.MustCompile(`psk_[a-z2-7]{32}`)

// passwordSource is an account's passwordSource member, which names where its password
// came from and is no secret; the search for secrets in answers looks past it alone.
var passwordSource = regexp.MustCompile(`"passwordsource":"(none|signup|invitation)"`)

// shape is a message with its ids blanked, to compare two answers but for the id.
var digits = regexp.MustCompile(`msg_[0-9a-z]+|[0-9]+`)

func shape(s string) string { return digits.ReplaceAllString(s, "#") }

// API2:2023 Broken Authentication. Every secured operation refuses a request
// without a key, with a malformed, unknown or revoked key, with a key in the wrong
// scheme or letter case, and with HTTP Basic where only keys are taken: 401 with
// WWW-Authenticate, before the body is read, changing nothing.
func TestOWASP_API2_BrokenAuthentication(t *testing.T) {
	// The limits on passwords would answer 429 after ten tries; API4 and API6 try them.
	a := newTestAPI(t, func(c *httpapi.Config) { c.CredentialLimit, c.FailedLoginLimit = -1, -1 })
	w := newOWASPWorld(t, a)
	revoked, _ := a.newKey("revoked@example.com", petstore.Customer)
	var keys []struct{ ID int64 }
	a.do(t, req{Method: "GET", Path: "/v1/api-keys", Key: revoked}).expect(200, "").JSON(&keys)
	a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", keys[0].ID), Key: revoked}).expect(204, "")
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"kate@example.com","password":"correct horse battery"}`}).expect(201, "")
	before := a.state(t)
	bad := map[string]string{
		"no header":               "",
		"malformed key":           "Bearer not-a-key",
		"unknown key":             "Bearer psk_" + strings.Repeat("a", 32),
		"revoked key":             "Bearer " + revoked,
		"lower-case, revoked key": "bearer " + revoked,
		"two spaces":              "Bearer  " + a.Customer,
		"another scheme":          "Token " + a.Customer,
		"empty bearer":            "Bearer ",
		"wrong password":          basic("kate@example.com", "not the password"),
		"unknown account":         basic("nobody@example.com", "correct horse battery"),
	}
	for _, op := range a.documentOps(t) {
		if !op.Secured {
			continue
		}
		for name, authz := range bad {
			t.Run(op.ID+"/"+name, func(t *testing.T) {
				r := w.request(t, op, "")
				r.Auth = authz
				if r.Body != nil {
					r.Body = `{"not json` // 401 comes before the body is read
				}
				res := a.do(t, r)
				if res.Status != 401 || res.Code() != "unauthorized" || res.Header.Get("WWW-Authenticate") == "" {
					t.Fatalf("answered %d %s (WWW-Authenticate %q), want 401", res.Status, res.Body, res.Header.Get("WWW-Authenticate"))
				}
			})
		}
		if !op.Basic {
			// The password opens only the operations on keys, as the document says.
			r := w.request(t, op, "")
			r.Auth = basic("kate@example.com", "correct horse battery")
			if res := a.do(t, r); res.Status != 401 {
				t.Errorf("%s with the right password answered %d, want 401: keys only", op.ID, res.Status)
			}
		}
	}
	if after := a.state(t); !bytes.Equal(before, after) {
		t.Fatal("an unauthenticated request changed the state")
	}
}

// API3:2023 Broken Object Property Level Authorization. No body may set what its
// sender does not own (an id, an account, a role, a completion, a stock), and no
// answer shows a secret (a password or its hash, a key's hash, another's key).
func TestOWASP_API3_BrokenObjectPropertyLevelAuthorization(t *testing.T) {
	a := newTestAPI(t)
	w := newOWASPWorld(t, a)
	before := a.state(t)
	massAssign := map[string][]string{
		"createAccount":    {`"role":"admin"`, `"id":1`, `"createdAt":"2020-01-01T00:00:00Z"`},
		"createApiKey":     {`"accountId":1`, `"prefix":"psk_aaaa"`, `"key":"psk_` + strings.Repeat("a", 32) + `"`},
		"placeOrder":       {`"accountId":1`, `"complete":true`, `"id":1`, `"status":"delivered"`},
		"createPet":        {`"id":1`, `"stock":100`, `"quantity":100`},
		"replacePet":       {`"id":1`, `"stock":100`},
		"updatePet":        {`"id":1`, `"stock":100`},
		"updateOrder":      {`"accountId":1`, `"quantity":100`, `"petId":1`},
		"sendMessage":      {`"status":"sent"`, `"id":"msg_x"`},
		"createWebhook":    {`"secret":"whsec_chosen"`, `"enabled":false`, `"id":1`, `"disabledReason":"x"`},
		"updateWebhook":    {`"secret":"whsec_chosen"`, `"previousSecretExpiresAt":"2099-01-01T00:00:00Z"`, `"failingSince":"2020-01-01T00:00:00Z"`, `"id":1`},
		"createSession":    {`"role":"admin"`, `"expiresAt":"2099-01-01T00:00:00Z"`, `"accountId":1`},
		"createInvitation": {`"url":"https://evil.example/console/accept"`, `"mailed":true`, `"expiresAt":"2099-01-01T00:00:00Z"`, `"id":1`},
		"acceptInvitation": {`"role":"admin"`, `"email":"other@example.com"`},
		"resetPassword":    {`"email":"admin@example.com"`, `"accountId":1`},
	}
	tried := 0
	for _, op := range a.documentOps(t) {
		for _, extra := range massAssign[op.ID] {
			tried++
			t.Run(op.ID+"/"+extra, func(t *testing.T) {
				key := a.Customer
				if op.AdminOnly {
					key = a.Admin
				}
				r := w.request(t, op, key)
				body := r.Body.(string)
				r.Body = body[:len(body)-1] + "," + extra + "}"
				res := a.do(t, r).expect(400, "validation_failed")
				if !strings.Contains(string(res.Body), "is not a known field") {
					t.Errorf("refused without naming the field: %s", res.Body)
				}
			})
		}
	}
	if tried < 20 {
		t.Fatalf("tried %d mass assignments", tried)
	}
	if after := a.state(t); !bytes.Equal(before, after) {
		t.Fatal("a refused body changed the state")
	}
	// Every answer of every operation, to its owner and to an admin, shows no secret.
	for _, op := range a.documentOps(t) {
		// The sign-up and the sign-in calls ask for a password and name it in their
		// answers; what they show is checked in sessions_test.go.
		if op.Method == "DELETE" || op.ID == "cancelOrder" || credentialOperations[op.ID] {
			continue
		}
		for _, key := range []string{a.Customer, a.Admin} {
			res := a.do(t, w.request(t, op, key))
			low := passwordSource.ReplaceAllString(strings.ToLower(string(res.Body)), "")
			for _, secret := range []string{"password", "hash", "argon2"} {
				if strings.Contains(low, secret) {
					t.Errorf("%s answered %d showing %q: %s", op.ID, res.Status, secret, res.Body)
				}
			}
			// A whole key is shown once, to whoever made it; lists show its prefix.
			if wholeKey.Match(res.Body) && !(op.ID == "createApiKey" && res.Status == 201) {
				t.Errorf("%s answered %d showing a whole key: %s", op.ID, res.Status, res.Body)
			}
			// A webhook secret is shown when it is made, and nowhere else: not in
			// lists, reads, updates, test events or deliveries.
			if strings.Contains(low, "whsec_") && !((op.ID == "createWebhook" || op.ID == "rotateWebhookSecret") && res.Status < 300) {
				t.Errorf("%s answered %d showing a webhook secret: %s", op.ID, res.Status, res.Body)
			}
		}
	}
}

// API4:2023 Unrestricted Resource Consumption. Every operation that takes a body
// refuses one over the limit (413), every list refuses a page over 100, the batch
// lookup more than 100 ids, a caller over the rate limit gets 429 on any operation, and
// an account holds at most 25 live keys.
func TestOWASP_API4_UnrestrictedResourceConsumption(t *testing.T) {
	a := newTestAPI(t)
	w := newOWASPWorld(t, a)
	huge := `{"name":"` + strings.Repeat("x", httpapi.DefaultBodyLimit) + `"}`
	for _, op := range a.documentOps(t) {
		key := a.Customer
		if op.AdminOnly {
			key = a.Admin
		}
		if op.HasBody {
			t.Run(op.ID+"/body over the limit", func(t *testing.T) {
				r := w.request(t, op, key)
				r.Body = huge
				if op.ID == uploadPetPhoto { // an image may be 10 MiB
					r.Body = append(append([]byte{}, w.photo...), make([]byte, httpapi.MaxPhotoBytes)...)
				}
				a.do(t, r).expect(413, "payload_too_large")
			})
		}
		if op.List {
			t.Run(op.ID+"/page over 100", func(t *testing.T) {
				r := w.request(t, op, key)
				r.Path += "?limit=101"
				a.do(t, r).expect(400, "validation_failed")
				r.Path = strings.Replace(r.Path, "101", "100", 1)
				a.do(t, r).expect(200, "")
			})
		}
	}
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = fmt.Sprint(i + 1)
	}
	a.do(t, req{Method: "GET", Path: "/v1/pets?ids=" + strings.Join(ids, ","), Key: a.Customer}).expect(400, "validation_failed")
	a.do(t, req{Method: "GET", Path: "/v1/store/inventory?ids=" + strings.Join(ids, ","), Key: a.Customer}).expect(400, "validation_failed")
	a.do(t, req{Method: "GET", Path: "/v1/pets?name=" + strings.Repeat("x", 101), Key: a.Customer}).expect(400, "validation_failed")

	// Keys: the customer has two (the harness's and the world's); 23 more, then 409.
	for i := range petstore.MaxKeysPerAccount - 2 {
		a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: fmt.Sprintf(`{"name":"k%d"}`, i)}).expect(201, "")
	}
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: `{"name":"one too many"}`}).expect(409, "conflict")

	// The rate limit holds on every operation, the open one included.
	limited := newTestAPI(t, withRateLimit(5))
	lw := newOWASPWorld(t, limited)
	for _, op := range limited.documentOps(t) {
		t.Run(op.ID+"/over the rate limit", func(t *testing.T) {
			key := limited.Customer
			if op.AdminOnly {
				key = limited.Admin
			}
			r := lw.request(t, op, key)
			if op.ID == "getPhoto" {
				// A photo served from memory is not counted (it costs next to nothing);
				// one the server must look for is: an unknown one, every time.
				r.Path = "/v1/photos/ph_" + strings.Repeat("a", 26) + "/thumb"
			}
			for range 7 {
				if res := limited.do(t, r); res.Status == 429 {
					if res.Header.Get("Retry-After") == "" {
						t.Fatal("429 without Retry-After")
					}
					return
				}
			}
			t.Fatal("seven calls in a row at 5/s were all let through")
		})
	}
}

// API5:2023 Broken Function Level Authorization. Every operation whose x-roles admits
// admins only answers 403 to a customer (before reading the body, changing nothing)
// while an admin's same request reaches validation, and every other secured operation
// is open to a customer.
func TestOWASP_API5_BrokenFunctionLevelAuthorization(t *testing.T) {
	a := newTestAPI(t)
	w := newOWASPWorld(t, a)
	before := a.state(t)
	admin := 0
	for _, op := range a.documentOps(t) {
		if !op.AdminOnly {
			continue
		}
		admin++
		t.Run(op.ID, func(t *testing.T) {
			r := w.request(t, op, a.Customer)
			a.do(t, r).expect(403, "forbidden")
			if op.HasBody {
				r.Body, r.Header = `{"not json`, nil
				a.do(t, r).expect(403, "forbidden")
				r.Key = a.Admin
				if op.ID == uploadPetPhoto {
					a.do(t, r).expect(415, "unsupported_media_type") // JSON is not an image
				} else {
					a.do(t, r).expect(400, "invalid_json")
				}
			}
		})
	}
	if admin != 28 {
		t.Errorf("the document marks %d operations admin only; the role table has 28", admin)
	}
	if after := a.state(t); !bytes.Equal(before, after) {
		t.Fatal("a customer changed what only admins may")
	}
	for _, op := range a.documentOps(t) {
		if op.AdminOnly || !op.Secured || op.Method == "DELETE" || op.ID == "cancelOrder" {
			continue
		}
		if res := a.do(t, w.request(t, op, a.Customer)); res.Status == 403 {
			t.Errorf("%s is open to customers in the document, but answered 403", op.ID)
		}
	}
}

// API6:2023 Unrestricted Access to Sensitive Business Flows. Buying up the stock
// concurrently sells exactly the stock; one order takes at most 100; a retried order
// with its Idempotency-Key is placed once; sign-ups from one address are limited.
func TestOWASP_API6_SensitiveBusinessFlows(t *testing.T) {
	a := newTestAPI(t)
	p := a.pet(t, "Rex", 7)
	var wg sync.WaitGroup
	placed := make(chan int, 40)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			placed <- a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: fmt.Sprintf(`{"petId":%d,"quantity":1}`, p.ID)}).Status
		}()
	}
	wg.Wait()
	close(placed)
	n := 0
	for s := range placed {
		if s == 201 {
			n++
		}
	}
	if inv := a.inventory(t, p.ID); n != 7 || inv.Quantity != 0 {
		t.Fatalf("40 buyers of a stock of 7: %d placed, %d left", n, inv.Quantity)
	}
	q := a.pet(t, "Max", 500)
	a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: fmt.Sprintf(`{"petId":%d,"quantity":101}`, q.ID)}).expect(400, "validation_failed")
	for range 3 {
		a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: fmt.Sprintf(`{"petId":%d,"quantity":5}`, q.ID), Header: map[string]string{"Idempotency-Key": "buy-once"}}).expect(201, "")
	}
	if inv := a.inventory(t, q.ID); inv.Quantity != 495 {
		t.Fatalf("three retries with one Idempotency-Key left %d of 500", inv.Quantity)
	}
	for i := range httpapi.DefaultCredentialLimit {
		a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: fmt.Sprintf(`{"email":"bot%d@example.com","password":"correct horse battery"}`, i)}).expect(201, "")
	}
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"bot-more@example.com","password":"correct horse battery"}`}).expect(429, "rate_limited")
}

// API7:2023 Server Side Request Forgery. The service fetches nothing a client names
// but a webhook endpoint's URL, which is guarded: no other schema has a URL field, text
// that holds a URL is kept as text and never dialled, and the links the service writes
// (Location, Link, the document's server) are built from its configured URL, never
// from the request's Host.
func TestOWASP_API7_ServerSideRequestForgery(t *testing.T) {
	a := newTestAPI(t)
	doc := a.servedDocument(t)
	// A webhook endpoint's URL is the one URL the service fetches: webhook.Sender
	// checks every address it dials (after DNS) and follows no redirect, and the URL
	// is checked when it is set (below).
	// An invitation's url is a link the service builds from its configured public
	// URL (never the request's Host; TestInvitationLinksIgnoreTheHostHeader) and
	// never fetches.
	fetched := map[string]bool{"NewWebhook.url": true, "WebhookPatch.url": true, "Webhook.url": true, "Invitation.url": true}
	for name, schema := range doc.Components.Schemas {
		for prop, p := range schema.Value.Properties {
			if f := p.Value.Format; (f == "uri" || f == "url" || strings.HasSuffix(strings.ToLower(prop), "url")) && !fetched[name+"."+prop] {
				t.Errorf("schema %s has a URL field %s: whatever fetches it must guard against SSRF", name, prop)
			}
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialed := make(chan struct{}, 1)
	go func() {
		if conn, err := ln.Accept(); err == nil {
			conn.Close()
			dialed <- struct{}{}
		}
	}()
	target := "http://" + ln.Addr().String() + "/internal"
	c := a.category(t, "Dogs")
	var p pet
	a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: fmt.Sprintf(`{"name":%q,"categoryId":%d,"price":100}`, target, c.ID)}).expect(201, "").JSON(&p)
	a.do(t, req{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: fmt.Sprintf(`{"name":"Links","description":%q}`, target)}).expect(201, "")
	a.do(t, req{Method: "POST", Path: "/v1/messages", Key: a.Customer, Body: fmt.Sprintf(`{"message":%q}`, target)}).expect(201, "")
	a.setStock(t, p.ID, 5)
	placed := a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: a.Customer, Body: fmt.Sprintf(`{"petId":%d,"quantity":1}`, p.ID), Header: map[string]string{"Host": ln.Addr().String(), "X-Forwarded-Host": ln.Addr().String()}}).expect(201, "")
	listed := a.do(t, req{Method: "GET", Path: "/v1/categories?limit=1", Key: a.Customer, Header: map[string]string{"Host": ln.Addr().String()}}).expect(200, "")
	for _, link := range []string{placed.Header.Get("Location"), listed.Header.Get("Link")} {
		if strings.Contains(link, ln.Addr().String()) {
			t.Errorf("a link was built from the request's Host: %q", link)
		}
	}
	// An endpoint URL on the operator's own network is refused when it is set, before
	// anything could be sent to it: the listener, a private and a link-local address.
	for _, url := range []string{target, "https://" + ln.Addr().String() + "/internal", "https://10.0.0.1/", "https://169.254.169.254/latest/meta-data"} {
		a.do(t, req{Method: "POST", Path: "/v1/webhooks", Key: a.Admin, Body: fmt.Sprintf(`{"url":%q,"events":["*"]}`, url)}).expect(400, "validation_failed")
	}
	select {
	case <-dialed:
		t.Fatal("the service connected to a URL a client gave it")
	case <-time.After(300 * time.Millisecond):
	}
}

// API8:2023 Security Misconfiguration. Every operation's answers carry nosniff and
// no-store; no origin is allowed by default; TRACE is not served; the operator's
// routes are not on the public port; errors show no internals.
func TestOWASP_API8_SecurityMisconfiguration(t *testing.T) {
	a := newTestAPI(t)
	w := newOWASPWorld(t, a)
	for _, op := range a.documentOps(t) {
		if op.Method == "DELETE" || op.ID == "cancelOrder" {
			continue
		}
		key := a.Customer
		if op.AdminOnly {
			key = a.Admin
		}
		r := w.request(t, op, key)
		r.Header = map[string]string{"Origin": "https://evil.example"}
		res := a.do(t, r)
		cache := "no-store"
		if op.ID == "getPhoto" { // a photo never changes: public, cached for good
			cache = "public, max-age=31536000, immutable"
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Cache-Control") != cache {
			t.Errorf("%s: nosniff %q, Cache-Control %q", op.ID, res.Header.Get("X-Content-Type-Options"), res.Header.Get("Cache-Control"))
		}
		if v := res.Header.Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("%s allows origin %q by default", op.ID, v)
		}
		if res.Header.Get("Server") != "" || res.Header.Get("X-Powered-By") != "" {
			t.Errorf("%s names its software: %v", op.ID, res.Header)
		}
	}
	a.do(t, req{Method: "TRACE", Path: "/v1/pets", Key: a.Customer}).expect(405, "method_not_allowed")
	for _, p := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/goroutine?debug=2", "/debug/vars"} {
		if res := a.do(t, req{Method: "GET", Path: p}); res.Status != 404 {
			t.Errorf("GET %s on the public port answered %d", p, res.Status)
		}
	}
	res := a.do(t, req{Method: "GET", Path: "/v1/pets/not-a-number", Key: a.Customer}).expect(400, "validation_failed")
	for _, leak := range []string{"strconv", "ogen", "goroutine", ".go:", "sql"} {
		if strings.Contains(string(res.Body), leak) {
			t.Errorf("an error shows %q: %s", leak, res.Body)
		}
	}
}

// API9:2023 Improper Inventory Management. Only the document's operations are
// served: other versions and undocumented paths answer 404; the document is the one
// served, at 1.0.0; the deprecated operation says so on every answer.
func TestOWASP_API9_ImproperInventoryManagement(t *testing.T) {
	a := newTestAPI(t)
	w := newOWASPWorld(t, a)
	for _, p := range []string{"/v2/pets", "/v0/pets", "/v1/admin", "/v1/internal/accounts", "/v1/accounts/1/password", "/v1/pets/1/orders", "/v1/store/orders/1/complete", "/api/v1/pets", "/v1/debug", "/v1/users"} {
		a.do(t, req{Method: "GET", Path: p, Key: a.Admin}).expect(404, "not_found")
	}
	var doc struct {
		Info struct{ Version string }
	}
	a.do(t, req{Method: "GET", Path: "/openapi.json"}).expect(200, "").JSON(&doc)
	if doc.Info.Version != "1.0.0" {
		t.Errorf("the served document is version %q", doc.Info.Version)
	}
	for _, op := range a.documentOps(t) {
		if op.ID != "getPetById" {
			continue
		}
		res := a.do(t, w.request(t, op, a.Customer)).expect(200, "")
		if res.Header.Get("Deprecation") == "" || res.Header.Get("Sunset") == "" {
			t.Errorf("the deprecated operation answered without Deprecation and Sunset: %v", res.Header)
		}
	}
}

// API10:2023 Unsafe Consumption of APIs. What the service takes from others is not
// trusted blindly: X-Forwarded-For from a peer that is not a trusted proxy does not
// change who the caller is (no fresh rate-limit allowance), and a Redis that does not
// answer neither fails requests nor lifts any limit: each is counted in the process's
// memory until Redis answers.
func TestOWASP_API10_UnsafeConsumptionOfAPIs(t *testing.T) {
	a := newTestAPI(t, withRateLimit(2))
	spoofed := 0
	for i := range 5 {
		res := a.do(t, req{Method: "GET", Path: "/v1/pets", Header: map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.113.%d", i)}})
		if res.Status != 429 {
			spoofed++
		}
	}
	if spoofed > 2 {
		t.Errorf("%d of 5 calls with made-up X-Forwarded-For got through a limit of 2", spoofed)
	}

	down := ratelimit.InRedis(unreachableRedis(t), "petstore-test:")
	general := newTestAPI(t, func(c *httpapi.Config) {
		c.RateLimit = 3
		c.Limits = down
	})
	for range 3 {
		general.do(t, req{Method: "GET", Path: "/v1/pets", Key: general.Customer}).expect(200, "")
	}
	general.do(t, req{Method: "GET", Path: "/v1/pets", Key: general.Customer}).expect(429, "rate_limited")
	b := newTestAPI(t, func(c *httpapi.Config) { c.Limits = down })
	for i := range httpapi.DefaultCredentialLimit {
		b.do(t, req{Method: "POST", Path: "/v1/accounts", Body: fmt.Sprintf(`{"email":"r%d@example.com","password":"correct horse battery"}`, i)}).expect(201, "")
	}
	b.do(t, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"r-more@example.com","password":"correct horse battery"}`}).expect(429, "rate_limited")
}

// The text group, beside the ten: forged log lines and spoofed display. Every text
// field of every request body the document has (found as TestEveryTextFieldFollowsThePolicyOfItsKind
// finds them, never listed here) refuses what the red team sent (issue 21): a
// bidirectional override, a newline that starts a fake log record and an ESC that
// colours a terminal, and a terminal hyperlink (OSC 8) that shows one address and
// opens another; nothing is stored.
func TestOWASP_Text_ForgedLogLinesAndSpoofedDisplayAreRefused(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.CredentialLimit = -1 })
	w := newOWASPWorld(t, a)
	payloads := map[string]string{
		"a forged log line":    "a\u202eb\nlevel=ERROR msg=fake\u001b[31m",
		"a terminal hyperlink": "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07",
	}
	before := a.state(t)
	tried := map[string]bool{}
	for _, f := range a.requestStrings(t) {
		if !f.Policed() {
			continue
		}
		tried[f.String()] = true
		for name, p := range payloads {
			t.Run(f.String()+"/"+name, func(t *testing.T) {
				r := w.request(t, f.Op, a.keyFor(f.Op))
				r.Body = withField(t, r.Body.(string), f.Path, sample(f.Kind, p))
				res := a.do(t, r).expect(400, "validation_failed")
				if want := fmt.Sprintf(`"field":%q`, f.Field()); !strings.Contains(string(res.Body), want) {
					t.Errorf("the refusal does not name %s: %s", f.Field(), res.Body)
				}
			})
		}
	}
	// What the red team found must be among what the document gave.
	for _, f := range []string{"createWebhook/url", "createWebhook/description", "updateWebhook/url", "updateWebhook/description"} {
		if !tried[f] {
			t.Errorf("the document gave no field %s; tried %v", f, tried)
		}
	}
	if after := a.state(t); !bytes.Equal(before, after) {
		t.Fatalf("a refused request changed the state:\n%s\n%s", before, after)
	}
}

// unreachableRedis is a client of a Redis that is not there.
func unreachableRedis(t *testing.T) *redis.Client {
	opt, _ := redis.ParseURL("redis://127.0.0.1:1/0")
	opt.MaxRetries, opt.DialerRetries = -1, 1
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}
