package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestNextLinksKeepTheFiltersOfEveryList(t *testing.T) {
	a := newTestAPI(t)
	for i := range 3 {
		a.category(t, "c"+string(rune('a'+i)))
	}
	p := a.pet(t, "Rex", 50)
	other, _ := a.newKey("other@example.com", "customer")
	for range 3 {
		a.order(t, a.Customer, p.ID, 1)
		a.order(t, other, p.ID, 1)
	}
	quill := a.pet(t, "Quill", 0) // a second available pet
	sold := a.pet(t, "Ilex", 0)
	a.setStock(t, sold.ID, 0)
	a.pet(t, "Éxodus", 0)
	a.pet(t, "Chéx", 0)
	tests := []struct {
		name, first string
		want        int
		check       func(t *testing.T, body []byte)
	}{
		{"categories", "/v1/categories?limit=2", 8, nil},
		{"orders of one account, incomplete", path("/v1/store/orders?limit=2&complete=false&accountId=%d", a.CustomerID), 3, func(t *testing.T, body []byte) {
			if strings.Contains(string(body), `"complete":true`) {
				t.Fatalf("filter lost: %s", body)
			}
		}},
		{"orders placed, oldest first, from a date", "/v1/store/orders?limit=2&status=placed&sort=oldest&createdAfter=2000-01-01T00:00:00Z&createdBefore=2999-01-01T00:00:00%2B02:00", 6, func(t *testing.T, body []byte) {
			var items []order
			if err := json.Unmarshal(body, &items); err != nil {
				t.Fatal(err)
			}
			for i, o := range items {
				if o.Status != "placed" || i > 0 && o.ID < items[i-1].ID {
					t.Fatalf("filter or order lost: %s", body)
				}
			}
		}},
		{"inventory by status", "/v1/store/inventory?limit=1&status=available", 4, nil},
		{"inventory by status and ids", path("/v1/store/inventory?limit=1&status=available&ids=%d,%d&ids=%d", p.ID, quill.ID, sold.ID), 2, nil},
		{"pets by name", "/v1/pets?limit=1&name=" + url.QueryEscape("ÉX"), 2, nil},
	}
	for _, tt := range tests {
		t.Run("the next link of "+tt.name+" keeps the filters", func(t *testing.T) {
			seen, next := 0, tt.first
			for next != "" {
				res := a.do(t, req{Method: "GET", Path: next, Key: a.Admin}).expect(200, "")
				var items []map[string]any
				res.JSON(&items)
				seen += len(items)
				if tt.check != nil {
					tt.check(t, res.Body)
				}
				next = nextPath(t, res.Header.Get("Link"))
			}
			if seen != tt.want {
				t.Fatalf("walked %d items, want %d", seen, tt.want)
			}
		})
	}
}

func TestSeveralAuthorizationHeadersAre401(t *testing.T) {
	a := newTestAPI(t)
	r, _ := http.NewRequest("GET", a.URL+"/v1/pets", nil)
	r.Header.Add("Authorization", basic("customer@example.com", "whatever-password"))
	r.Header.Add("Authorization", "Bearer "+a.Customer)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("got %d, want 401", res.StatusCode)
	}
}

func TestDeprecationHeadersAreOnRateLimitedResponsesToo(t *testing.T) {
	a := newTestAPI(t, withRateLimit(1))
	a.do(t, req{Method: "GET", Path: "/v1/pets/1", Key: a.Customer}).expect(404, "not_found")
	res := a.do(t, req{Method: "GET", Path: "/v1/pets/1", Key: a.Customer}).expect(429, "rate_limited")
	for _, h := range []string{"Deprecation", "Sunset", "Link"} {
		if res.Header.Get(h) == "" {
			t.Errorf("429 without %s", h)
		}
	}
}

func TestAMessageIdOverItsLimitIsRefused(t *testing.T) {
	a := newTestAPI(t)
	a.do(t, req{Method: "GET", Path: "/v1/messages/" + strings.Repeat("m", 65), Key: a.Customer}).expect(400, "validation_failed")
	a.do(t, req{Method: "GET", Path: "/v1/messages/msg_unknown", Key: a.Customer}).expect(404, "not_found")
}
