package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// TestARevokedKeyStopsWorkingOnOtherProcessesWithinASecond runs two servers on one
// database file, as two processes would, revokes a key through one and measures how long
// the other still accepts it, on the other's clock.
func TestARevokedKeyStopsWorkingOnOtherProcessesWithinASecond(t *testing.T) {
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

	acct, _ := st.EnsureAccount(ctx, "two@example.com", petstore.Customer)
	key, prefix, hash := auth.NewKey()
	k, err := st.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: acct.ID, Name: "k", Prefix: prefix, Hash: hash})
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, url string) int {
		r, _ := http.NewRequest(method, url, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if call("GET", urlB+"/v1/pets") != 200 { // B now holds the key in its cache
		t.Fatal("the key does not work on B")
	}
	if code := call("DELETE", urlA+"/v1/api-keys/"+itoa(k.ID)); code != 204 {
		t.Fatalf("revoke on A: %d", code)
	}
	if code := call("GET", urlA+"/v1/pets"); code != 401 {
		t.Fatalf("A still accepts the key it revoked: %d", code)
	}
	clockB.Set(clockB.Now().Add(time.Second))
	if code := call("GET", urlB+"/v1/pets"); code != 401 {
		t.Fatalf("B still accepts the revoked key a second later: %d", code)
	}
}
