package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The console's staff and customers screens: GET /accounts?role= lists the accounts of
// one role, a page at a time, the next link keeping the role.
func TestAccountsAreListedByRole(t *testing.T) {
	a := newTestAPI(t)
	ctx := context.Background()
	for _, email := range []string{"c2@example.com", "c3@example.com"} {
		if _, err := a.Store.CreateAccount(ctx, email, "", petstore.Customer); err != nil {
			t.Fatal(err)
		}
	}
	var list []adminAccount
	a.do(t, req{Method: "GET", Path: "/v1/accounts?role=admin", Key: a.Admin}).expect(200, "").JSON(&list)
	if len(list) == 0 {
		t.Fatal("role=admin lists no account")
	}
	for _, got := range list {
		if got.Role != "admin" {
			t.Errorf("role=admin lists %+v", got)
		}
	}

	var seen []adminAccount
	next := "/v1/accounts?role=customer&limit=2"
	for next != "" && len(seen) < 10 {
		res := a.do(t, req{Method: "GET", Path: next, Key: a.Admin}).expect(200, "")
		res.JSON(&list)
		seen = append(seen, list...)
		next = ""
		if link := res.Header.Get("Link"); link != "" {
			target := strings.TrimPrefix(strings.SplitN(link, ">", 2)[0], "<")
			if !strings.Contains(target, "role=customer") {
				t.Errorf("the next link %q drops the role", link)
			}
			next = target[strings.Index(target, "/v1/"):]
		}
	}
	if len(seen) != 3 || seen[0].ID != a.CustomerID {
		t.Errorf("customers by pages of 2 = %+v, want the 3 customers", seen)
	}
	for _, got := range seen {
		if got.Role != "customer" {
			t.Errorf("role=customer lists %+v", got)
		}
	}

	a.do(t, req{Method: "GET", Path: "/v1/accounts?role=manager", Key: a.Admin}).expect(200, "").JSON(&list)
	if len(list) != 0 {
		t.Errorf("role=manager lists %+v", list)
	}
	a.do(t, req{Method: "GET", Path: "/v1/accounts?role=customer", Key: a.Customer}).expect(403, petstore.EForbidden)
}
