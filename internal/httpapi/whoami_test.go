package httpapi_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/api"
	"github.com/acme-pets/petstore/internal/petstore"
)

// callingKey is the key part of GET /accounts/me.
type callingKey struct {
	ID        int64      `json:"id"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

// GET /accounts/me tells what the calling key may do and until when, so that the
// console offers only that: a key made without scopes lists every scope of its role,
// a narrowed one its own, and a role the account loses takes its scopes along.
func TestTheCurrentAccountShowsTheCallingKey(t *testing.T) {
	a := newTestAPI(t)
	ops, err := api.Operations()
	if err != nil {
		t.Fatal(err)
	}
	roleScopes := func(role petstore.Role) []string {
		return slices.Sorted(slices.Values(api.RoleScopes(ops)[string(role)]))
	}
	me := func(t *testing.T, key string) (callingKey, bool) {
		t.Helper()
		var got struct {
			Key *callingKey `json:"key"`
		}
		a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Key: key}).expect(200, "").JSON(&got)
		if got.Key == nil {
			return callingKey{}, false
		}
		return *got.Key, true
	}
	// keyID finds key's id in its account's list, by its prefix.
	keyID := func(t *testing.T, key string) int64 {
		t.Helper()
		var keys []struct {
			ID     int64
			Prefix string
		}
		a.do(t, req{Method: "GET", Path: "/v1/api-keys", Key: key}).expect(200, "").JSON(&keys)
		for _, k := range keys {
			if strings.HasPrefix(key, k.Prefix) {
				return k.ID
			}
		}
		t.Fatalf("key %.12s… is not in its account's list", key)
		return 0
	}

	t.Run("a key made without scopes has every scope of its role and no end", func(t *testing.T) {
		for _, c := range []struct {
			key  string
			role petstore.Role
		}{{a.Admin, petstore.Admin}, {a.Customer, petstore.Customer}} {
			got, ok := me(t, c.key)
			if !ok {
				t.Fatalf("%s: no key in the answer", c.role)
			}
			if want := roleScopes(c.role); got.ID != keyID(t, c.key) || !slices.Equal(got.Scopes, want) || got.ExpiresAt != nil {
				t.Errorf("%s: key = %+v, want id %d, scopes %v, no expiry", c.role, got, keyID(t, c.key), want)
			}
		}
		if slices.Contains(roleScopes(petstore.Customer), "pets:write") {
			t.Error("the customer role has pets:write; the case above proves less than it says")
		}
	})
	t.Run("a narrowed key has its scopes and its end", func(t *testing.T) {
		expires := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
		key := a.scopedKey(t, a.Admin, []string{"pets:read", "account:read", "keys:manage"}, expires)
		got, ok := me(t, key)
		if want := []string{"account:read", "keys:manage", "pets:read"}; !ok || got.ID != keyID(t, key) ||
			!slices.Equal(got.Scopes, want) || got.ExpiresAt == nil || !got.ExpiresAt.Equal(expires) {
			t.Errorf("key = %+v (present %v), want scopes %v, expiring at %s", got, ok, want, expires)
		}
	})
	t.Run("a key without the scope of an operation does not list it", func(t *testing.T) {
		key := a.scopedKey(t, a.Admin, []string{"account:read"}, time.Time{})
		if got, _ := me(t, key); !slices.Equal(got.Scopes, []string{"account:read"}) || got.ExpiresAt != nil {
			t.Errorf("key = %+v, want only account:read, no expiry", got)
		}
	})
	t.Run("scopes the role no longer allows are not listed", func(t *testing.T) {
		admin, _ := a.newKey("demoted@example.com", petstore.Admin)
		key := a.scopedKey(t, admin, []string{"account:read", "pets:write"}, time.Time{})
		if got, _ := me(t, key); !slices.Equal(got.Scopes, []string{"account:read", "pets:write"}) {
			t.Fatalf("scopes = %v while admin", got.Scopes)
		}
		a.newKey("demoted@example.com", petstore.Customer)
		if got, _ := me(t, key); !slices.Equal(got.Scopes, []string{"account:read"}) {
			t.Errorf("scopes = %v after the demotion, want only account:read", got.Scopes)
		}
	})
	t.Run("a password has no key and is refused, as before", func(t *testing.T) {
		a.do(t, req{Method: "POST", Path: "/v1/accounts", Body: map[string]any{"email": "pat@example.com", "password": "correct horse battery"}}).expect(201, "")
		res := a.do(t, req{Method: "GET", Path: "/v1/accounts/me", Auth: basic("pat@example.com", "correct horse battery")}).expect(401, "unauthorized")
		if strings.Contains(string(res.Body), `"key"`) {
			t.Errorf("a refusal shows a key: %s", res.Body)
		}
	})
}
