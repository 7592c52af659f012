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
