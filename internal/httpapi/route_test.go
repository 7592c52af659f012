package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/acme-pets/petstore/api"
	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// Every operation of the document is served by the route the middleware found for it
// (oas.Server.ServeRoute): the request is routed once, and no operation falls through
// to a second routing.
func TestEveryRouteIsDispatchedOnce(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "route.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	root, err := api.ParseTree(api.Source)
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	n := 0
	api.WalkOperations(root, func(path, method string, op *yaml.Node) {
		n++
		id := api.Scalar(op, "operationId")
		if api.IsTrue(op, "x-handwritten") {
			return // served outside the generated server (servePhoto); photos_test.go
		}
		target := apiPrefix + param.ReplaceAllString(path, "1")
		r := httptest.NewRequest(strings.ToUpper(method), target, nil)
		route, ok := s.api.FindPath(r.Method, r.URL)
		if !ok || route.OperationID() != id {
			t.Errorf("%s %s: FindPath found %q (%v), want %s", r.Method, target, route.OperationID(), ok, id)
			return
		}
		// Unauthenticated, every operation answers without reaching a store: a 401, or
		// the 400 of the one open operation's missing body.
		w := httptest.NewRecorder()
		if !s.api.ServeRoute(route, w, r.WithContext(withInfo(r.Context(), &requestInfo{route: route}))) {
			t.Errorf("%s: ServeRoute does not serve it", id)
		}
		if w.Code != http.StatusUnauthorized && w.Code != http.StatusBadRequest {
			t.Errorf("%s: answered %d without a key: %s", id, w.Code, w.Body)
		}
	})
	if ops, _ := api.Operations(); n != len(ops) || n == 0 {
		t.Errorf("walked %d operations, the document has %d", n, len(ops))
	}
	if s.api.ServeRoute(oas.Route{}, httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/nowhere", nil)) {
		t.Error("the zero Route was served")
	}
}

// apiFirst sends a request straight to the API exactly when ServeMux would have sent
// it there without a redirect: the shortcut changes no route, and a path ServeMux
// cleans still gets its redirect.
func TestAPIFirstRoutesAsTheMuxWould(t *testing.T) {
	marker := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Handler", name) })
	}
	mux := http.NewServeMux()
	mux.Handle(apiPrefix+"/", marker("api"))
	mux.Handle(photoPattern, marker("photo"))
	mux.Handle("/", marker("other"))
	short := apiFirst(marker("api"), mux)
	paths := []string{
		"/v1/pets/1", "/v1/pets", "/v1/", "/v1", "/v1/pets/", "/v1//pets/1", "/v1/pets/./1", "/v1/pets/../pets/1",
		"/v1/pets/1/..", "/v1/pets/1/.", "/v1/photos/ph_x/thumb", "/v1/photos/ph_x", "/v1/photos/", "/v1/photosx/1",
		"/v1/store/orders", "/v1/pets/%2e%2e/1", "/v1/a//", "/v1/./", "/docs", "/", "/v2/pets",
	}
	for _, method := range []string{"GET", "POST", "DELETE"} {
		for _, p := range paths {
			r := httptest.NewRequest(method, "http://shop.example"+p, nil)
			want, got := httptest.NewRecorder(), httptest.NewRecorder()
			mux.ServeHTTP(want, r)
			short.ServeHTTP(got, r.Clone(r.Context()))
			if got.Code != want.Code || got.Header().Get("X-Handler") != want.Header().Get("X-Handler") || got.Header().Get("Location") != want.Header().Get("Location") {
				t.Errorf("%s %s: apiFirst answers %d from %q (Location %q), ServeMux %d from %q (Location %q)", method, p,
					got.Code, got.Header().Get("X-Handler"), got.Header().Get("Location"),
					want.Code, want.Header().Get("X-Handler"), want.Header().Get("Location"))
			}
		}
	}
}
