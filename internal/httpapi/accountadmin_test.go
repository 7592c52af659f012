package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

type adminAccount struct {
	ID       int64  `json:"id"`
	Email    string `json:"email"`
	Role     string `json:"role"`
	Disabled *bool  `json:"disabled"`
}

func (a *testAPI) patchAccount(t *testing.T, key string, id int64, body string) *response {
	t.Helper()
	return a.do(t, req{Method: "PATCH", Path: fmt.Sprintf("/v1/accounts/%d", id), Key: key, Body: body,
		Header: map[string]string{"Content-Type": "application/merge-patch+json"}})
}

func TestAnAdminChangesARoleAndDisablesAnAccount(t *testing.T) {
	a := newTestAPI(t)
	var got adminAccount
	a.patchAccount(t, a.Admin, a.CustomerID, `{"role":"admin"}`).expect(200, "").JSON(&got)
	if got.ID != a.CustomerID || got.Role != "admin" || got.Disabled == nil || *got.Disabled {
		t.Errorf("promoted: %+v", got)
	}
	// The promotion holds from the next request: the key is no longer cached as a customer's.
	a.do(t, req{Method: "GET", Path: "/v1/accounts", Key: a.Customer}).expect(200, "")

	a.patchAccount(t, a.Admin, a.CustomerID, `{"role":"customer","disabled":true}`).expect(200, "").JSON(&got)
	if got.Role != "customer" || got.Disabled == nil || !*got.Disabled {
		t.Errorf("demoted and disabled: %+v", got)
	}
	res := a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer}).expect(401, petstore.EUnauthorized)
	if !strings.Contains(string(res.Body), "disabled") {
		t.Errorf("the refusal does not say the account is disabled: %s", res.Body)
	}
	var listed []adminAccount
	a.do(t, req{Method: "GET", Path: fmt.Sprintf("/v1/accounts?ids=%d", a.CustomerID), Key: a.Admin}).expect(200, "").JSON(&listed)
	if len(listed) != 1 || listed[0].Disabled == nil || !*listed[0].Disabled {
		t.Errorf("listed: %+v", listed)
	}

	a.patchAccount(t, a.Admin, a.CustomerID, `{"disabled":false}`).expect(200, "")
	a.do(t, req{Method: "GET", Path: "/v1/pets", Key: a.Customer}).expect(200, "")
}

func TestAnAccountChangeIsRefused(t *testing.T) {
	a := newTestAPI(t)
	var me adminAccount
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: a.Admin}).expect(200, "").JSON(&me)
	tests := []struct {
		name   string
		key    string
		id     int64
		body   string
		status int
		code   string
	}{
		{"the last admin demoted", a.Admin, me.ID, `{"role":"customer"}`, 409, petstore.ELastAdmin},
		{"the last admin disabled", a.Admin, me.ID, `{"disabled":true}`, 409, petstore.ELastAdmin},
		{"an unknown account", a.Admin, 999999, `{"disabled":true}`, 404, petstore.ENotFound},
		{"an unknown role", a.Admin, a.CustomerID, `{"role":"owner"}`, 400, petstore.EValidationFailed},
		{"a null", a.Admin, a.CustomerID, `{"disabled":null}`, 400, petstore.EValidationFailed},
		{"an unknown field", a.Admin, a.CustomerID, `{"password":"x"}`, 400, petstore.EValidationFailed},
		{"a customer", a.Customer, a.CustomerID, `{"role":"admin"}`, 403, petstore.EForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.patchAccount(t, tt.key, tt.id, tt.body).expect(tt.status, tt.code)
		})
	}
	var after adminAccount
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: a.Admin}).expect(200, "").JSON(&after)
	if after.Role != "admin" || after.Disabled == nil || *after.Disabled {
		t.Errorf("the last admin is now %+v", after)
	}
	a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: a.Customer}).expect(200, "")
}

func TestADisabledAccountsPasswordOpensNothing(t *testing.T) {
	a := newTestAPI(t)
	var acct adminAccount
	a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "ada@example.com", "password": "correct horse battery"}}).
		expect(201, "").JSON(&acct)
	a.patchAccount(t, a.Admin, acct.ID, `{"disabled":true}`).expect(200, "")
	res := a.do(t, req{Method: "GET", Path: "/v1/api-keys", Auth: basic("ada@example.com", "correct horse battery")}).expect(401, petstore.EUnauthorized)
	if !strings.Contains(string(res.Body), "disabled") {
		t.Errorf("the refusal does not say the account is disabled: %s", res.Body)
	}
	// A wrong password is told as wrong, not as disabled: being disabled is said only to
	// whoever knows the password.
	res = a.do(t, req{Method: "GET", Path: "/v1/api-keys", Auth: basic("ada@example.com", "wrong horse battery")}).expect(401, petstore.EUnauthorized)
	if strings.Contains(string(res.Body), "disabled") {
		t.Errorf("a wrong password learns the account is disabled: %s", res.Body)
	}
}

// TestADisabledAccountsKeyStopsOnOtherProcessesWithinASecond is the revocation test's
// twin (revoke_test.go): two servers on one database, the account disabled on one.
func TestADisabledAccountsKeyStopsOnOtherProcessesWithinASecond(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	server := func(now func() time.Time) (string, petstore.Store) {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		h, err := httpapi.New(httpapi.Config{Store: st, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL, st
	}
	clockB := &testClock{now: time.Now()}
	urlA, st := server(time.Now)
	urlB, _ := server(clockB.Now)
	newKey := func(email string, role petstore.Role) (string, int64) {
		acct, err := st.EnsureAccount(ctx, email, role)
		if err != nil {
			t.Fatal(err)
		}
		key, prefix, hash := auth.NewKey()
		if _, err := st.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: acct.ID, Name: "k", Prefix: prefix, Hash: hash}); err != nil {
			t.Fatal(err)
		}
		return key, acct.ID
	}
	admin, _ := newKey("admin@example.com", petstore.Admin)
	key, id := newKey("two@example.com", petstore.Customer)
	call := func(method, url, key, body string) int {
		r, _ := http.NewRequest(method, url, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if call("GET", urlB+"/v1/pets", key, "") != 200 { // B now holds the key in its cache
		t.Fatal("the key does not work on B")
	}
	if code := call("PATCH", fmt.Sprintf("%s/v1/accounts/%d", urlA, id), admin, `{"disabled":true}`); code != 200 {
		t.Fatalf("disable on A: %d", code)
	}
	if code := call("GET", urlA+"/v1/pets", key, ""); code != 401 {
		t.Fatalf("A still accepts the key of the account it disabled: %d", code)
	}
	clockB.Set(clockB.Now().Add(time.Second))
	if code := call("GET", urlB+"/v1/pets", key, ""); code != 401 {
		t.Fatalf("B still accepts the disabled account's key a second later: %d", code)
	}
}
