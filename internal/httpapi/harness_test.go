package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/media"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// testAPI is the real handler stack on a real temporary SQLite file. Every response
// it receives for a documented route is checked against the served OpenAPI document,
// so no test can pass with a response the document does not describe.
type testAPI struct {
	t      testing.TB
	URL    string
	Store  petstore.Store
	router routers.Router
	// Admin and Customer are API keys of an admin and of a customer account;
	// CustomerID is the customer's account id.
	Admin, Customer string
	CustomerID      int64
	// Server is the handler under test, for what is not on the public listener
	// (Server.Metrics).
	Server *httpapi.Server
	// cors is whether the server was given CORS origins: without, no answer may carry
	// a CORS header.
	cors bool
	// mediaDir is where the server keeps the files of photos.
	mediaDir string
	// pgURL is the test database's URL when the store is PostgreSQL ("" on SQLite).
	pgURL string
}

type apiOption func(*httpapi.Config)

// cheapPasswords keeps argon2id fast in tests; the production parameters are the
// library defaults of package auth.
var cheapPasswords = auth.Passwords{Params: auth.PasswordParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}}

func newTestAPI(t testing.TB, opts ...apiOption) *testAPI {
	t.Helper()
	// PETSTORE_TEST_STORE=postgres runs the suite on a fresh PostgreSQL schema.
	var (
		st    petstore.Store
		dbURL string
		// The store wakes the server's event streams after its commits, as the
		// command wires it (the server is made after the store).
		woken atomic.Pointer[httpapi.Server]
		wake  = func() {
			if s := woken.Load(); s != nil {
				s.WakeStreams()
			}
		}
	)
	if os.Getenv("PETSTORE_TEST_STORE") == "postgres" {
		dbURL = os.Getenv(pgtest.EnvURL)
		if dbURL == "" {
			t.Fatalf("PETSTORE_TEST_STORE=postgres needs %s", pgtest.EnvURL)
		}
		st = pgtest.OpenWith(t, dbURL, postgres.Options{WakeFeed: wake})
	} else {
		db, err := sqlite.OpenWith(context.Background(), filepath.Join(t.TempDir(), "petstore.db"), sqlite.Options{WakeFeed: wake})
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		st = db
	}

	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	mediaDir := t.TempDir()
	files, err := media.NewDir(mediaDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.Config{Store: st, ServerURL: base, Passwords: cheapPasswords, Media: files}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := httpapi.New(cfg)
	if err != nil {
		t.Fatalf("httpapi.New: %v", err)
	}
	woken.Store(h)
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(h.CloseStreams)

	a := &testAPI{t: t, URL: base, Store: st, Server: h, cors: len(cfg.CORSOrigins) > 0, pgURL: dbURL, mediaDir: mediaDir}
	a.router = a.loadRouter()
	a.Admin, _ = a.newKey("admin@example.com", petstore.Admin)
	a.Customer, a.CustomerID = a.newKey("customer@example.com", petstore.Customer)
	return a
}

// servedDocument reads the document the server serves, as a client would: the one
// source of the tests that walk operations and schemas.
func (a *testAPI) servedDocument(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(a.servedJSON(t))
	if err != nil {
		t.Fatalf("load served document: %v", err)
	}
	return doc
}

// servedJSON is the raw /openapi.json the server serves.
func (a *testAPI) servedJSON(t testing.TB) []byte {
	t.Helper()
	res, err := http.Get(a.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return raw
}

// routedHost stands for each test server's own address in the documents routers are
// made of, so that servers serving the same document share one router.
const routedHost = "petstore.test"

// routerCache holds a router per served document (its server address replaced by
// routedHost). Servers differ in their address, and some in options that change the
// document (sunsets): loading and validating the document was most of what each test's
// server cost, though nearly all of them serve the same one.
var routerCache sync.Map // string → routers.Router

// loadRouter routes requests by the served document, which must be valid OpenAPI.
func (a *testAPI) loadRouter() routers.Router {
	a.t.Helper()
	key := strings.ReplaceAll(string(a.servedJSON(a.t)), strings.TrimPrefix(a.URL, "http://"), routedHost)
	if r, ok := routerCache.Load(key); ok {
		return r.(routers.Router)
	}
	doc, err := openapi3.NewLoader().LoadFromData([]byte(key))
	if err != nil {
		a.t.Fatalf("load served document: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		a.t.Fatalf("served document is not valid OpenAPI: %v", err)
	}
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		a.t.Fatal(err)
	}
	routerCache.Store(key, r)
	return r
}

// route finds the operation of a request sent to this test's server, by the router of
// its document (see routedHost).
func (a *testAPI) route(hr *http.Request) (*routers.Route, map[string]string, error) {
	routed := hr.Clone(hr.Context())
	routed.URL.Host, routed.Host = routedHost, routedHost
	return a.router.FindRoute(routed)
}

// newKey makes an account (if needed) with the role and returns a new key for it.
func (a *testAPI) newKey(email string, role petstore.Role) (string, int64) {
	a.t.Helper()
	ctx := context.Background()
	acct, err := a.Store.EnsureAccount(ctx, email, role)
	if err != nil {
		a.t.Fatal(err)
	}
	key, prefix, hash := auth.NewKey()
	if _, err := a.Store.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: acct.ID, Name: "test", Prefix: prefix, Hash: hash}); err != nil {
		a.t.Fatal(err)
	}
	return key, acct.ID
}

// response is what a test sees of an HTTP response.
type response struct {
	t      testing.TB
	Status int
	Header http.Header
	Body   []byte
}

// req describes a request: Key is sent as a Bearer key unless Auth sets the whole
// Authorization header; Body is sent as is when it is a string, as JSON otherwise.
type req struct {
	Method, Path string
	Key          string
	Auth         string
	Body         any
	Header       map[string]string
	// From is the loopback address (127.x.y.z) the request is sent from; empty:
	// the system's choice, 127.0.0.1.
	From string
}

// clientFrom returns a client whose connections leave from the loopback address
// from, so that one test can be many clients to the limits per address.
func clientFrom(t testing.TB, from string) *http.Client {
	if from == "" {
		return http.DefaultClient
	}
	ip := net.ParseIP(from)
	if ip == nil || !ip.IsLoopback() {
		t.Fatalf("From %q is not a loopback address", from)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

func (a *testAPI) do(t testing.TB, r req) *response {
	t.Helper()
	var body io.Reader
	var raw []byte
	binary := false
	switch b := r.Body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte: // an image: the test sets its Content-Type
		raw, binary = b, true
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(r.Method, a.URL+r.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	if raw != nil && !binary {
		hr.Header.Set("Content-Type", "application/json")
	}
	switch {
	case r.Auth != "":
		hr.Header.Set("Authorization", r.Auth)
	case r.Key != "":
		hr.Header.Set("Authorization", "Bearer "+r.Key)
	}
	for k, v := range r.Header {
		if k == "Host" {
			hr.Host = v // the client sends Request.Host, never a Host in Header
			continue
		}
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	res, err := clientFrom(t, r.From).Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	var in io.Reader = res.Body
	if res.Header.Get("Content-Type") == "text/event-stream" {
		// An event stream does not end: a request that opens one, as the tests that
		// walk every operation do, takes its opening message (stream_test.go reads
		// streams).
		in = io.LimitReader(res.Body, int64(len("retry: 2000\n: stream open\n\n")))
	}
	out, err := io.ReadAll(in)
	if err != nil {
		t.Fatal(err)
	}
	resp := &response{t: t, Status: res.StatusCode, Header: res.Header, Body: out}
	a.checkAgainstDocument(t, hr, resp)
	return resp
}

// checkAgainstDocument fails the test when a response of a documented operation is
// not what the document says (status, headers, body), and when any error response
// lacks the error body.
func (a *testAPI) checkAgainstDocument(t testing.TB, hr *http.Request, res *response) {
	t.Helper()
	if res.Status >= 400 {
		var e struct {
			Code    *string `json:"code"`
			Message *string `json:"message"`
			Status  *int    `json:"status"`
		}
		if err := json.Unmarshal(res.Body, &e); err != nil || e.Code == nil || e.Message == nil || e.Status == nil || *e.Status != res.Status {
			t.Errorf("%s %s: error response %d is not {code, message, status}: %s", hr.Method, hr.URL.Path, res.Status, res.Body)
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: error response has Content-Type %q", hr.Method, hr.URL.Path, ct)
		}
	}
	if res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s %s: no X-Content-Type-Options: nosniff", hr.Method, hr.URL.Path)
	}
	for name := range res.Header {
		if !a.cors && strings.HasPrefix(name, "Access-Control-") {
			t.Errorf("%s %s: %s is sent with no CORS origins configured", hr.Method, hr.URL.Path, name)
		}
	}
	route, params, err := a.route(hr)
	if err != nil {
		return // not an operation of the document (unknown path or method)
	}
	// The validator would accept any status through the default response; the
	// document must name each status an operation answers.
	if route.Operation.Responses.Status(res.Status) == nil {
		t.Errorf("%s %s answered %d, which the document does not list for %s", hr.Method, hr.URL.Path, res.Status, route.Operation.OperationID)
	}
	a.checkDeclaredHeaders(t, hr, route.Operation, res)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route},
		Status:                 res.Status,
		Header:                 res.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(res.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s: response %d disagrees with the document: %v\nbody: %s", hr.Method, hr.URL.Path, res.Status, err, res.Body)
	}
}

// transportHeaders are the response headers that are not part of the interface of
// one operation: HTTP's own, and those every response carries as the document's
// conventions describe. Every other header an answer carries must be declared for
// that answer: a list of the interface's headers would let a new one through unseen.
var transportHeaders = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Date": true, "Connection": true,
	"Transfer-Encoding": true, "Vary": true, "Cache-Control": true,
	"X-Content-Type-Options": true, "X-Request-Id": true,
}

// checkDeclaredHeaders fails the test when a response carries a header that the
// document does not declare for that response: a client generated from the document
// would never see it. The response's header names are canonical (read from the wire).
func (a *testAPI) checkDeclaredHeaders(t testing.TB, hr *http.Request, op *openapi3.Operation, res *response) {
	t.Helper()
	declared := op.Responses.Status(res.Status)
	if declared == nil {
		declared = op.Responses.Default()
	}
	if declared == nil || declared.Value == nil {
		return // the status check above reports it
	}
	for name := range res.Header {
		if transportHeaders[name] || strings.HasPrefix(name, "Access-Control-") {
			continue
		}
		// The deprecated operation sends its three headers on every answer, errors
		// included, as its description says; its errors are the shared responses,
		// which cannot name them for one operation only.
		if op.Deprecated && (name == "Deprecation" || name == "Sunset" || name == "Link") {
			continue
		}
		found := false
		for h := range declared.Value.Headers {
			found = found || http.CanonicalHeaderKey(h) == name
		}
		if !found {
			t.Errorf("%s %s: response %d carries %s, which the document does not declare for %s", hr.Method, hr.URL.Path, res.Status, name, op.OperationID)
		}
	}
}

// JSON decodes the body into v.
func (r *response) JSON(v any) {
	r.t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		r.t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Code is the error code of an error body, or "".
func (r *response) Code() string {
	var e struct{ Code string }
	_ = json.Unmarshal(r.Body, &e)
	return e.Code
}

// expect fails the test unless the response has the status and (for errors) code.
func (r *response) expect(status int, code string) *response {
	r.t.Helper()
	if r.Status != status || (code != "" && r.Code() != code) {
		r.t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.Code(), status, code, r.Body)
	}
	return r
}

// fixture helpers

type pet struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	CategoryID int64  `json:"categoryId"`
	Status     string `json:"status"`
	Price      *int64 `json:"price"`
	Currency   string `json:"currency"`
}

type category struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type inventory struct {
	PetID    int64  `json:"petId"`
	Quantity int    `json:"quantity"`
	Status   string `json:"status"`
}

type order struct {
	ID          int64      `json:"id"`
	PetID       int64      `json:"petId"`
	Quantity    int        `json:"quantity"`
	ShipDate    *time.Time `json:"shipDate"`
	Complete    bool       `json:"complete"`
	AccountID   int64      `json:"accountId"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"createdAt"`
	CompletedAt *time.Time `json:"completedAt"`
	CancelledAt *time.Time `json:"cancelledAt"`
	UnitPrice   *int64     `json:"unitPrice"`
	Total       *int64     `json:"total"`
	Currency    string     `json:"currency"`
	PetName     string     `json:"petName"`
}

func (a *testAPI) category(t testing.TB, name string) category {
	t.Helper()
	var c category
	a.do(t, req{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: map[string]any{"name": name}}).expect(201, "").JSON(&c)
	return c
}

// pet makes a pet in a new category with the given stock.
func (a *testAPI) pet(t testing.TB, name string, stock int) pet {
	t.Helper()
	c := a.category(t, "Category of "+name)
	var p pet
	a.do(t, req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: map[string]any{"name": name, "categoryId": c.ID, "price": 1999}}).expect(201, "").JSON(&p)
	if stock > 0 {
		a.setStock(t, p.ID, stock)
	}
	return p
}

func (a *testAPI) setStock(t testing.TB, petID int64, n int) inventory {
	t.Helper()
	var inv inventory
	a.do(t, req{Method: "PUT", Path: path("/v1/store/inventory/%d", petID), Key: a.Admin, Body: map[string]any{"quantity": n}}).expect(200, "").JSON(&inv)
	return inv
}

func (a *testAPI) order(t testing.TB, key string, petID int64, qty int) order {
	t.Helper()
	var o order
	a.do(t, req{Method: "POST", Path: "/v1/store/orders", Key: key, Body: map[string]any{"petId": petID, "quantity": qty}}).expect(201, "").JSON(&o)
	return o
}

func (a *testAPI) inventory(t testing.TB, petID int64) inventory {
	t.Helper()
	var inv inventory
	a.do(t, req{Method: "GET", Path: path("/v1/store/inventory/%d", petID), Key: a.Admin}).expect(200, "").JSON(&inv)
	return inv
}

// settleFeed waits, on PostgreSQL, until the event feed shows every event committed
// so far: the feed stops short of the oldest transaction still running anywhere,
// other tests' included (pgtest.SettleFeed). On SQLite the feed is never behind.
func (a *testAPI) settleFeed(t testing.TB) {
	t.Helper()
	if a.pgURL != "" {
		pgtest.SettleFeed(t, a.pgURL)
	}
}
