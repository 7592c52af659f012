package httpapi_test

import (
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

// TestInvitedStaffMadeACustomerIsMadeAdminAgain: staff who accepted an invitation and
// were made a customer are made admin again by PATCH; a sign-up still is not. Accounts
// say where their password came from.
func TestInvitedStaffMadeACustomerIsMadeAdminAgain(t *testing.T) {
	a := newTestAPI(t, noCredentialLimit)
	_, token := a.invite(t, "clerk@example.com", "admin")
	var s session
	a.accept(t, token, "correct horse battery").expect(201, "").JSON(&s)
	id := s.Account.ID

	var got struct {
		Role           string `json:"role"`
		PasswordSource string `json:"passwordSource"`
	}
	a.patchAccount(t, a.Admin, id, `{"role":"customer"}`).expect(200, "").JSON(&got)
	if got.Role != "customer" || got.PasswordSource != "invitation" {
		t.Fatalf("demoted: %+v", got)
	}
	a.patchAccount(t, a.Admin, id, `{"role":"admin"}`).expect(200, "").JSON(&got)
	if got.Role != "admin" || got.PasswordSource != "invitation" {
		t.Errorf("made admin again: %+v", got)
	}
	// The password still signs in, as an admin.
	var again session
	a.do(t, req{Method: "POST", Path: "/v1/sessions", Body: `{"email":"clerk@example.com","password":"correct horse battery"}`}).
		expect(201, "").JSON(&again)
	a.do(t, req{Method: "GET", Path: "/v1/accounts", Key: again.Key.Key}).expect(200, "")
	var me struct {
		PasswordSource string `json:"passwordSource"`
	}
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: again.Key.Key}).expect(200, "").JSON(&me)
	if me.PasswordSource != "invitation" {
		t.Errorf("GET /accounts/me says the password came from %q", me.PasswordSource)
	}

	// A sign-up is still not made admin.
	var signUp struct {
		ID             int64  `json:"id"`
		PasswordSource string `json:"passwordSource"`
	}
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: `{"email":"signed-up@example.com","password":"correct horse battery"}`}).
		expect(201, "").JSON(&signUp)
	if signUp.PasswordSource != "signup" {
		t.Errorf("a sign-up's password source %q", signUp.PasswordSource)
	}
	res := a.patchAccount(t, a.Admin, signUp.ID, `{"role":"admin"}`).expect(409, petstore.EConflict)
	if !strings.Contains(string(res.Body), "take it over first") {
		t.Errorf("the refusal says %s", res.Body)
	}
	// The harness's accounts sign in with keys alone.
	var listed []struct {
		Email          string `json:"email"`
		PasswordSource string `json:"passwordSource"`
	}
	a.do(t, req{Method: "GET", Path: path("/v1/accounts?ids=%d", a.CustomerID), Key: a.Admin}).expect(200, "").JSON(&listed)
	if len(listed) != 1 || listed[0].PasswordSource != "none" {
		t.Errorf("a key-only account listed as %+v", listed)
	}
}

// TestAKeyRevokesItselfWhateverItsScopes: revoking the calling key (signing out) needs
// no scope; revoking another key of the account still needs keys:manage.
func TestAKeyRevokesItselfWhateverItsScopes(t *testing.T) {
	a := newTestAPI(t)
	type created struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	var narrow, other created
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: map[string]any{"name": "reader", "scopes": []string{"pets:read"}}}).
		expect(201, "").JSON(&narrow)
	a.do(t, req{Method: "POST", Path: "/v1/api-keys", Key: a.Customer, Body: map[string]any{"name": "other"}}).expect(201, "").JSON(&other)

	res := a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", other.ID), Key: narrow.Key}).expect(403, petstore.EInsufficientScope)
	if h := res.Header.Get("WWW-Authenticate"); !strings.Contains(h, `scope="keys:manage"`) {
		t.Errorf("WWW-Authenticate %q", h)
	}
	// Nor is an unknown key's id the caller's own.
	a.do(t, req{Method: "DELETE", Path: "/v1/api-keys/999999", Key: narrow.Key}).expect(403, petstore.EInsufficientScope)
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: other.Key}).expect(200, "")

	a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", narrow.ID), Key: narrow.Key}).expect(204, "")
	a.do(t, req{Method: "GET", Path: "/v1/pets", Key: narrow.Key}).expect(401, petstore.EUnauthorized)
	a.do(t, req{Method: "DELETE", Path: path("/v1/api-keys/%d", narrow.ID), Key: narrow.Key}).expect(401, petstore.EUnauthorized)
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: other.Key}).expect(200, "")
}
