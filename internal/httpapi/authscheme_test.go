package httpapi_test

import (
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/httpapi"
)

// The scheme of an Authorization header is case-insensitive (RFC 9110, 11.1): a key
// or a password is accepted under "bearer", "BEARER", "basic" as under "Bearer" and
// "Basic". (Until issue 32 the contract asked for the exact spelling.)
func TestAuthorizationSchemesInAnyLetterCase(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.RateLimit = 1000 })
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"kate@example.com","password":"correct horse battery"}`}).expect(201, "")
	for _, scheme := range []string{"bearer", "BEARER", "bEaReR"} {
		res := a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Auth: scheme + " " + a.Customer}).expect(200, "")
		// The rate limit counts a valid key by its account, whatever the scheme's case.
		if got := res.Header.Get("RateLimit"); !strings.HasPrefix(got, `"default";r=`) {
			t.Errorf("%s: RateLimit = %q", scheme, got)
		}
	}
	for _, scheme := range []string{"basic", "BASIC"} {
		authz := strings.Replace(basic("kate@example.com", "correct horse battery"), "Basic", scheme, 1)
		a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: authz, Body: `{"name":"k ` + scheme + `"}`}).expect(201, "")
		a.do(t, req{Method: "POST", Path: "/v1/api-keys", Auth: strings.Replace(basic("kate@example.com", "wrong password!"), "Basic", scheme, 1), Body: `{"name":"k"}`}).
			expect(401, "unauthorized")
	}
	// A wrong key is as wrong in lower case, and says so (RFC 6750).
	res := a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Auth: "bearer psk_" + strings.Repeat("a", 32)}).expect(401, "unauthorized")
	if got := res.Header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}
}
