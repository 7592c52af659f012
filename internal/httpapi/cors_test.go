package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/httpapi"
)

// corsHeaders lists the Access-Control-* headers of h.
func corsHeaders(h http.Header) []string {
	var out []string
	for k, v := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out = append(out, k+": "+strings.Join(v, ","))
		}
	}
	return out
}

// Without --cors-origins no answer carries a CORS header: not the generated server's
// Access-Control-Expose-Headers on answers with headers (401, 201 with Location, 429),
// nor its Access-Control-Allow-* on an OPTIONS request.
func TestNoCORSHeaderIsSentWithoutCORSOrigins(t *testing.T) {
	a := newTestAPI(t)
	limited := newTestAPI(t, func(c *httpapi.Config) { c.RateLimit = 1 })
	origin := map[string]string{"Origin": "https://shop.example"}
	for _, tt := range []struct {
		api    *testAPI
		r      req
		status int
	}{
		{a, req{Method: "GET", Path: "/v1/pets", Header: origin}, 401},
		{a, req{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: `{"name":"Birds"}`, Header: origin}, 201},
		{a, req{Method: "GET", Path: "/v1/pets", Key: a.Customer, Header: origin}, 200},
		{a, req{Method: "OPTIONS", Path: "/v1/pets", Header: map[string]string{"Origin": "https://shop.example", "Access-Control-Request-Method": "GET"}}, 405},
		{a, req{Method: "GET", Path: "/v1/no-such-route", Header: origin}, 404},
		{limited, req{Method: "GET", Path: "/v1/pets", Key: limited.Customer, Header: origin}, 200},
		{limited, req{Method: "GET", Path: "/v1/pets", Key: limited.Customer, Header: origin}, 429},
	} {
		res := tt.api.do(t, tt.r)
		if got := corsHeaders(res.Header); res.Status != tt.status || len(got) > 0 {
			t.Errorf("%s %s answered %d with %v, want %d and no CORS header", tt.r.Method, tt.r.Path, res.Status, got, tt.status)
		}
	}
}

// With --cors-origins the CORS layer alone decides the CORS headers: an answer with
// headers of its own (a 401's WWW-Authenticate) still exposes the whole list, which
// the generated server's Access-Control-Expose-Headers would replace.
func TestCORSHeadersAreTheCORSLayersOnAnswersWithHeaders(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.CORSOrigins = []string{"https://shop.example"} })
	origin := map[string]string{"Origin": "https://shop.example"}
	for _, r := range []req{
		{Method: "GET", Path: "/v1/pets", Header: origin},
		{Method: "POST", Path: "/v1/categories", Key: a.Admin, Body: `{"name":"Birds"}`, Header: origin},
		{Method: "GET", Path: "/v1/pets", Key: a.Customer, Header: origin},
	} {
		res := a.do(t, r)
		expose := res.Header.Get("Access-Control-Expose-Headers")
		if res.Header.Get("Access-Control-Allow-Origin") != "https://shop.example" || !strings.Contains(expose, "X-Request-Id") || !strings.Contains(expose, "Ratelimit") && !strings.Contains(expose, "RateLimit") {
			t.Errorf("%s %s answered %d with %v, want the CORS layer's whole list exposed", r.Method, r.Path, res.Status, corsHeaders(res.Header))
		}
	}
}
