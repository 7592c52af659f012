package main

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
)

// TestAStockSetThroughOneServerShowsOnAnotherWithinTheBound runs two binaries on one
// PostgreSQL schema, each with its own pet cache. A stock set through B shows in A's
// GET /v1/pets/{id}: no GET that A began later than the cache's time after B's answer
// shows the old stock (the bound USING.md states), and usually one a few
// milliseconds later shows the new one (B's notice).
func TestAStockSetThroughOneServerShowsOnAnotherWithinTheBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dsn := pgtest.Schema(t, pgtest.URL(t))
	bin := buildPetstore(t)
	key := adminKey(t, bin, dsn)
	server := func() adminClient {
		addr := freeAddr(t)
		startBinary(t, bin, "--database", dsn, "--no-bootstrap", "--rate-limit", "0", "--addr", addr, "--admin-addr", freeAddr(t))
		return adminClient{t: t, base: "http://" + addr + "/v1", key: key}
	}
	a, b := server(), server()
	pet := b.pet(5)
	var took []time.Duration
	for stock := 10; stock < 30; stock++ {
		a.must(http.StatusOK, "GET", fmt.Sprintf("/pets/%d", pet), "") // now cached in A
		b.must(http.StatusOK, "PUT", fmt.Sprintf("/store/inventory/%d", pet), fmt.Sprintf(`{"quantity":%d}`, stock))
		changed := time.Now()
		for {
			began := time.Now()
			got := a.must(http.StatusOK, "GET", fmt.Sprintf("/pets/%d", pet), "")
			if int(got["stock"].(float64)) == stock {
				took = append(took, began.Sub(changed))
				break
			}
			if began.Sub(changed) > postgres.DefaultPetCacheTTL {
				t.Fatalf("a GET begun %v after the change shows the stock %v, want %d", began.Sub(changed), got["stock"], stock)
			}
			time.Sleep(time.Millisecond)
		}
	}
	slices.Sort(took)
	t.Logf("A showed B's stock after %v (median), %v (most)", took[len(took)/2], took[len(took)-1])
}
