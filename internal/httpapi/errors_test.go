package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

func TestEveryLayerAnswersWithTheErrorBody(t *testing.T) {
	a := newTestAPI(t)
	big := `{"message":"` + strings.Repeat("x", 64<<10) + `"}`
	tests := []struct {
		name   string
		r      req
		status int
		code   string
	}{
		{"an unknown path is 404", req{Method: "GET", Path: "/v1/unicorns", Key: a.Customer}, 404, "not_found"},
		{"a path outside /v1 is 404", req{Method: "GET", Path: "/pets"}, 404, "not_found"},
		{"a wrong method is 405", req{Method: "DELETE", Path: "/v1/pets", Key: a.Customer}, 405, "method_not_allowed"},
		{"a body over 64 KiB is 413", req{Method: "POST", Path: "/v1/messages", Key: a.Customer, Body: big}, 413, "payload_too_large"},
		{"a non-numeric path id is 400", req{Method: "GET", Path: "/v1/categories/abc", Key: a.Customer}, 400, "validation_failed"},
		{"a zero path id is 400", req{Method: "GET", Path: "/v1/store/orders/0", Key: a.Customer}, 400, "validation_failed"},
		{"a malformed boolean query is 400", req{Method: "GET", Path: "/v1/store/orders?complete=maybe", Key: a.Customer}, 400, "validation_failed"},
		{"a customer changing a pet is 403 before the body is validated", req{Method: "POST", Path: "/v1/pets", Key: a.Customer, Body: `{not json`}, 403, "forbidden"},
		{"no key on an admin operation is 401 before the body is validated", req{Method: "POST", Path: "/v1/pets", Body: `{not json`}, 401, "unauthorized"},
		{"a body that is not JSON is 400", req{Method: "POST", Path: "/v1/pets", Key: a.Admin, Body: `{not json`}, 400, "invalid_json"},
		{"trailing data is 400", req{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: `{"name":"a"}x`}, 400, "invalid_json"},
		{"an array instead of an object is 400", req{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: `[]`}, 400, "validation_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := a.do(t, tt.r).expect(tt.status, tt.code)
			if tt.status == 405 && res.Header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
	t.Run("a body of exactly 64 KiB is read", func(t *testing.T) {
		body := `{"name":"x","description":"` + strings.Repeat("y", 64<<10-len(`{"name":"x","description":""}`)) + `"}`
		// Within the size limit, so the answer is about the description's length.
		a.do(t, req{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: body}).expect(400, "validation_failed")
	})
}

// failingStore fails or panics on Pet, to reach the service's last line of defence.
type failingStore struct {
	petstore.Store
	panics bool
}

func (s failingStore) Pet(ctx context.Context, id int64) (petstore.Pet, error) {
	if s.panics {
		panic("database exploded at /var/lib/secret.db")
	}
	return petstore.Pet{}, errors.New("sql: connection refused at 10.0.0.7:5432")
}

func TestUnexpectedFailuresRevealNothing(t *testing.T) {
	for _, panics := range []bool{false, true} {
		name := "an internal error is 500 internal"
		if panics {
			name = "a panic is 500 internal"
		}
		t.Run(name, func(t *testing.T) {
			a := newTestAPI(t, func(c *httpapi.Config) { c.Store = failingStore{Store: c.Store, panics: panics} })
			res := a.do(t, req{Method: "GET", Path: "/v1/pets/1", Key: a.Customer}).expect(500, "internal")
			for _, secret := range []string{"secret.db", "10.0.0.7", "sql:", "panic"} {
				if strings.Contains(string(res.Body), secret) {
					t.Fatalf("500 reveals %q: %s", secret, res.Body)
				}
			}
			a.do(t, req{Method: "GET", Path: "/v1/categories", Key: a.Customer}).expect(200, "")
		})
	}
}

func TestServiceEndpoints(t *testing.T) {
	a := newTestAPI(t)
	a.do(t, req{Method: "GET", Path: "/healthz"}).expect(200, "")
	a.do(t, req{Method: "GET", Path: "/readyz"}).expect(200, "")
	t.Run("HEAD answers like GET without a body", func(t *testing.T) {
		r, _ := http.NewRequest("HEAD", a.URL+"/v1/pets", nil)
		r.Header.Set("Authorization", "Bearer "+a.Customer)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Type") == "" {
			t.Fatalf("HEAD /v1/pets = %d %v", res.StatusCode, res.Header)
		}
	})
	for _, page := range []string{"/docs", "/console", "/shop"} {
		t.Run(page+"/ leads to the page", func(t *testing.T) {
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := client.Get(a.URL + page + "/")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != page {
				t.Fatalf("GET %s/ = %d to %q", page, res.StatusCode, res.Header.Get("Location"))
			}
			a.do(t, req{Method: "GET", Path: page}).expect(200, "")
		})
	}
	t.Run("the document names the address the server listens on", func(t *testing.T) {
		for _, p := range []string{"/openapi.yaml", "/openapi.json"} {
			res := a.do(t, req{Method: "GET", Path: p}).expect(200, "")
			if !strings.Contains(string(res.Body), a.URL+"/v1") {
				t.Errorf("%s does not name %s/v1", p, a.URL)
			}
		}
	})
	t.Run("every /v1 response is no-store and carries a request id", func(t *testing.T) {
		res := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer}).expect(200, "")
		if res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("X-Request-Id") == "" {
			t.Fatalf("headers: %v", res.Header)
		}
	})
	t.Run("a sane X-Request-Id is echoed and a wild one replaced", func(t *testing.T) {
		res := a.do(t, req{Method: "GET", Path: "/healthz", Header: map[string]string{"X-Request-Id": "abc-123"}})
		if res.Header.Get("X-Request-Id") != "abc-123" {
			t.Errorf("X-Request-Id = %q", res.Header.Get("X-Request-Id"))
		}
		res = a.do(t, req{Method: "GET", Path: "/healthz", Header: map[string]string{"X-Request-Id": "a b\tc"}})
		if id := res.Header.Get("X-Request-Id"); id == "" || strings.Contains(id, " ") {
			t.Errorf("X-Request-Id = %q", id)
		}
	})
}
