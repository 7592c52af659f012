package petstore_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

// documentScopes reads the scopes of ../../api/openapi.yaml twice: the Scope schema's
// enum (what a key may be made with) and the bearerAuth scheme's x-scopes catalogue.
func documentScopes(t *testing.T) (enum, catalogue []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				Scope struct {
					Enum []string `yaml:"enum"`
				} `yaml:"Scope"`
			} `yaml:"schemas"`
			SecuritySchemes struct {
				BearerAuth struct {
					Scopes yaml.Node `yaml:"x-scopes"`
				} `yaml:"bearerAuth"`
			} `yaml:"securitySchemes"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	scopes := doc.Components.SecuritySchemes.BearerAuth.Scopes.Content // a mapping: name, description, …
	for i := 0; i < len(scopes); i += 2 {
		catalogue = append(catalogue, scopes[i].Value)
	}
	if len(doc.Components.Schemas.Scope.Enum) == 0 || len(catalogue) == 0 {
		t.Fatal("api/openapi.yaml has no Scope enum or no bearerAuth x-scopes")
	}
	return doc.Components.Schemas.Scope.Enum, catalogue
}

// scopeConstants reads the Scope constants of models.go, by value: constants cannot be
// listed at run time.
func scopeConstants(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "models.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			v := spec.(*ast.ValueSpec)
			if typ, ok := v.Type.(*ast.Ident); !ok || typ.Name != "Scope" {
				continue
			}
			for i, name := range v.Names {
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s is not a string literal", name.Name)
				}
				value, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				consts[value] = name.Name
			}
		}
	}
	return consts
}

// Every scope of the document has its constant, and every constant is a scope of the
// document; the Scope enum and the catalogue agree.
func TestEveryScopeHasAConstant(t *testing.T) {
	enum, catalogue := documentScopes(t)
	if a, b := slices.Sorted(slices.Values(enum)), slices.Sorted(slices.Values(catalogue)); !slices.Equal(a, b) {
		t.Errorf("the Scope enum %v and the bearerAuth x-scopes %v differ", a, b)
	}
	consts := scopeConstants(t)
	for _, scope := range catalogue {
		if _, ok := consts[scope]; !ok {
			t.Errorf("the scope %s has no constant: add Scope%s to models.go", scope, constName(scope))
		} else if consts[scope] != "Scope"+constName(scope) {
			t.Errorf("the constant of %s is %s, want Scope%s", scope, consts[scope], constName(scope))
		}
	}
	for value, name := range consts {
		if !slices.Contains(catalogue, value) {
			t.Errorf("%s = %q is not a scope of the document", name, value)
		}
	}
}

// constName is the constant's name for a scope after "Scope": pets:read → PetsRead.
func constName(scope string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(scope, func(r rune) bool { return r == ':' || r == '_' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// What CreateAPIKey sends for each way of asking, and every field of a key read back.
func TestAPIKeyCallsSendAndReadEveryField(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	c := fake(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(body))
		mu.Unlock()
		if r.Method == http.MethodPost {
			answer(w, 201, `{"id":3,"name":"shop","key":"psk_x","prefix":"psk_x","createdAt":"2026-11-21T12:00:00Z",`+
				`"scopes":["pets:read","pets:adopt"],"expiresAt":"2027-01-01T00:00:00Z"}`)
			return
		}
		answer(w, 200, `[{"id":3,"name":"shop","prefix":"psk_x","createdAt":"2026-11-21T12:00:00Z","scopes":["pets:read"],`+
			`"expiresAt":"2027-01-01T00:00:00Z","lastUsedAt":"2026-11-24T09:31:00Z"},`+
			`{"id":4,"name":"laptop","prefix":"psk_y","createdAt":"2026-11-21T12:00:00Z"}]`)
	})
	ctx := context.Background()
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }

	expiry := at("2027-01-01T00:00:00Z")
	for _, key := range []petstore.NewAPIKey{
		{Name: "all"},
		{Name: "shop", Scopes: []petstore.Scope{petstore.ScopePetsRead, petstore.ScopeOrdersWrite}, ExpiresAt: expiry},
		{Name: "none", Scopes: []petstore.Scope{}}, // sent, for the service to refuse: never every scope
	} {
		if _, err := c.CreateAPIKey(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`{"name":"all"}`,
		`{"expiresAt":"2027-01-01T00:00:00Z","name":"shop","scopes":["pets:read","orders:write"]}`,
		`{"name":"none","scopes":[]}`,
	}
	if !slices.Equal(bodies, want) {
		t.Errorf("bodies = %q\nwant     %q", bodies, want)
	}

	created, err := c.CreateAPIKey(ctx, petstore.NewAPIKey{Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if created.Key != "psk_x" || !slices.Equal(created.Scopes, []petstore.Scope{petstore.ScopePetsRead, "pets:adopt"}) ||
		!created.ExpiresAt.Equal(expiry) || !created.LastUsedAt.IsZero() {
		t.Errorf("created = %+v: want its scopes (an unknown one as it came) and expiry", created)
	}
	keys, err := collect(c.ListAPIKeys(ctx, nil))
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys = %v, %v", keys, err)
	}
	if k := keys[0]; !slices.Equal(k.Scopes, []petstore.Scope{petstore.ScopePetsRead}) || !k.ExpiresAt.Equal(expiry) ||
		!k.LastUsedAt.Equal(at("2026-11-24T09:31:00Z")) {
		t.Errorf("keys[0] = %+v", k)
	}
	if k := keys[1]; k.Scopes != nil || !k.ExpiresAt.IsZero() || !k.LastUsedAt.IsZero() {
		t.Errorf("keys[1] = %+v: want nil scopes (every scope of the role), no expiry, never used", k)
	}
}

// The scope an insufficient_scope answer names comes from its WWW-Authenticate
// challenge, however the header is written.
func TestInsufficientScopeNamesTheScope(t *testing.T) {
	for header, want := range map[string]petstore.Scope{
		`Bearer error="insufficient_scope", scope="orders:write"`:                                   petstore.ScopeOrdersWrite,
		`Bearer error=insufficient_scope,scope="orders:write"`:                                      petstore.ScopeOrdersWrite,
		`bearer ERROR = "insufficient_scope" , Scope = "orders:write"`:                              petstore.ScopeOrdersWrite,
		`Basic realm="scope=\"pets:read\", x", Bearer error="insufficient_scope", scope="a\"b"`:     `a"b`,
		`Basic dXNlcjpwYXNz==, Bearer scope="pets:write"`:                                           petstore.ScopePetsWrite,
		`Basic realm="shop", scope="pets:read"`:                                                     "", // another scheme's
		`Bearer`:                                                                                    "",
		`Bearer error="insufficient_scope", scope="orders:wri`:                                      "", // no closing quote
		`Bearer realm="petstore", error="insufficient_scope", error_description="No.", scope="x y"`: "x y",
	} {
		c := fake(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", header)
			answer(w, 403, `{"code":"insufficient_scope","message":"This API key lacks the scope orders:write, which this operation needs.","status":403}`)
		}, petstore.WithRetries(0))
		_, err := c.PlaceOrder(context.Background(), petstore.NewOrder{PetID: 1, Quantity: 1})
		var apiErr *petstore.Error
		if !errors.As(err, &apiErr) || apiErr.Code != petstore.CodeInsufficientScope || apiErr.Scope != want {
			t.Errorf("WWW-Authenticate: %s\nerr = %#v, want insufficient_scope with the scope %q", header, err, want)
		}
	}
}

// Against the real service: a key made with some scopes and an expiry has them, may
// make the calls of its scopes, and is refused the others with the scope they need.
func TestAKeyWithScopesIsRefusedTheOthers(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	email, password := "scopes+"+suffix+"@example.com", "correct horse battery staple"
	must(service(t, rec, "").CreateAccount(ctx, petstore.NewAccount{Email: email, Password: password}))(t)
	keys := service(t, rec, "").WithPassword(email, password)

	expiry := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	created := must(keys.CreateAPIKey(ctx, petstore.NewAPIKey{
		Name: "storefront", Scopes: []petstore.Scope{petstore.ScopePetsRead}, ExpiresAt: expiry,
	}))(t)
	if !slices.Equal(created.Scopes, []petstore.Scope{petstore.ScopePetsRead}) || !created.ExpiresAt.Equal(expiry) {
		t.Errorf("created = %+v, want pets:read until %s", created.APIKey, expiry)
	}
	storefront := service(t, rec, created.Key)
	if _, err := collect(storefront.ListPets(ctx, &petstore.ListPetsOptions{Limit: 1})); err != nil {
		t.Errorf("ListPets with pets:read: %v", err)
	}

	_, err := storefront.PlaceOrder(ctx, petstore.NewOrder{PetID: 1, Quantity: 1})
	var apiErr *petstore.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden || apiErr.Code != petstore.CodeInsufficientScope ||
		apiErr.Scope != petstore.ScopeOrdersWrite {
		t.Fatalf("PlaceOrder with pets:read: err = %#v, want a 403 insufficient_scope naming orders:write", err)
	}
	if !strings.Contains(apiErr.Message, "orders:write") || apiErr.RequestID == "" {
		t.Errorf("the error = %q (request %q): want its message to name the scope, and a request id", apiErr.Message, apiErr.RequestID)
	}
	// A key may not pass on a scope it lacks: the refusal names the scope keys:manage.
	if _, err := storefront.CreateAPIKey(ctx, petstore.NewAPIKey{Name: "more"}); !errors.As(err, &apiErr) ||
		apiErr.Code != petstore.CodeInsufficientScope || apiErr.Scope != petstore.ScopeKeysManage {
		t.Errorf("CreateAPIKey with pets:read: err = %v, want insufficient_scope naming keys:manage", err)
	}

	// Neither no scope at all nor one beyond the role makes a key.
	for _, scopes := range [][]petstore.Scope{{}, {petstore.ScopeWebhooksManage}} {
		if _, err := keys.CreateAPIKey(ctx, petstore.NewAPIKey{Name: "refused", Scopes: scopes}); !errors.As(err, &apiErr) ||
			apiErr.Code != petstore.CodeValidationFailed || len(apiErr.Details) == 0 || apiErr.Details[0].Field != "scopes" {
			t.Errorf("a customer's key with the scopes %q: err = %v, want validation_failed on scopes", scopes, err)
		}
	}

	// The list shows each key's scopes and expiry; a key made without has every scope.
	whole := must(keys.CreateAPIKey(ctx, petstore.NewAPIKey{Name: "whole"}))(t)
	listed := map[int64]*petstore.APIKey{}
	for k, err := range keys.ListAPIKeys(ctx, nil) {
		listed[must(k, err)(t).ID] = k
	}
	if k := listed[created.ID]; k == nil || !slices.Equal(k.Scopes, created.Scopes) || !k.ExpiresAt.Equal(expiry) {
		t.Errorf("listed storefront key = %+v, want pets:read until %s", k, expiry)
	}
	if k := listed[whole.ID]; k == nil || k.Scopes != nil || !k.ExpiresAt.IsZero() {
		t.Errorf("listed whole key = %+v, want nil scopes and no expiry", k)
	}
}

// Against the real service: a key that lived its lifetime answers 401 unauthorized,
// saying that it expired.
func TestAnExpiredKeyIsUnauthorized(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	email, password := "expiry+"+suffix+"@example.com", "correct horse battery staple"
	must(service(t, rec, "").CreateAccount(ctx, petstore.NewAccount{Email: email, Password: password}))(t)

	expiry := time.Now().Add(2 * time.Second)
	created := must(service(t, rec, "").WithPassword(email, password).CreateAPIKey(ctx, petstore.NewAPIKey{Name: "brief", ExpiresAt: expiry}))(t)
	client := service(t, rec, created.Key)
	if _, err := client.GetCurrentAccount(ctx); err != nil {
		t.Fatalf("before its expiry: %v", err) // and the service has the key in its cache now
	}
	time.Sleep(time.Until(created.ExpiresAt) + 100*time.Millisecond)
	_, err := client.GetCurrentAccount(ctx)
	var apiErr *petstore.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || apiErr.Code != petstore.CodeUnauthorized ||
		!strings.Contains(apiErr.Message, "expired") || apiErr.Scope != "" {
		t.Errorf("after its expiry: err = %v, want 401 unauthorized saying the key expired", err)
	}
}
