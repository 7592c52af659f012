package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
)

// servedAPI is the handler `petstore serve` builds, from the same flags, with its
// request log (text, info level, batched) written to nowhere: the hot paths as they
// ship, without the network. --rate-limit 0 as in ../shared/peers/compare, whose
// ratios the performance goals are written in; PETSTORE_BENCH_DATABASE runs them on
// PostgreSQL.
type servedAPI struct {
	h     http.Handler
	auth  string
	petID int64
}

func newServedAPI(b *testing.B) *servedAPI {
	b.Helper()
	db := os.Getenv("PETSTORE_BENCH_DATABASE")
	if db == "" {
		db = filepath.Join(b.TempDir(), "petstore.db")
	}
	c, err := parseServeConfig([]string{"--database", db, "--no-bootstrap", "--rate-limit", "0", "--media-dir", b.TempDir()},
		func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	logs := newLogWriter(io.Discard, logFlushInterval)
	b.Cleanup(func() { logs.Close() })
	log, err := newLogger(logs, c.logFormat, c.logLevel)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	d, err := openDeps(ctx, c, log, new(bytes.Buffer), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(d.close)
	api, err := httpapi.New(c.api(d, "http://127.0.0.1:8080"))
	if err != nil {
		b.Fatal(err)
	}

	st := d.store
	acct, err := st.EnsureAccount(ctx, fmt.Sprintf("bench-%d@example.com", os.Getpid()), petstore.Admin)
	if err != nil {
		b.Fatal(err)
	}
	key, prefix, hash := auth.NewKey()
	if _, err := st.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: acct.ID, Name: "bench", Prefix: prefix, Hash: hash}); err != nil {
		b.Fatal(err)
	}
	cat, err := st.CreateCategory(ctx, petstore.Category{Name: fmt.Sprintf("Bench %d", os.Getpid())})
	if err != nil {
		b.Fatal(err)
	}
	price := int64(1999)
	p, err := st.CreatePet(ctx, petstore.PetFields{Name: "Bo", CategoryID: cat.ID, Status: petstore.Available, Price: &price,
		Description: "A calm beagle who loves long walks.", Tags: []string{"calm", "house-trained"}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.SetInventory(ctx, p.ID, 1_000_000); err != nil {
		b.Fatal(err)
	}
	return &servedAPI{h: api, auth: "Bearer " + key, petID: p.ID}
}

// run serves method target (with body) b.N times from 32 goroutines per core, as the
// 64 connections of ../shared/peers/compare's wrk would on two cores.
func (a *servedAPI) run(b *testing.B, method, target, body string, want int) {
	b.ReportAllocs()
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var r *http.Request
			if body != "" {
				r = httptest.NewRequest(method, target, bytes.NewReader([]byte(body)))
				r.Header.Set("Content-Type", "application/json")
			} else {
				r = httptest.NewRequest(method, target, nil)
			}
			r.Header.Set("Authorization", a.auth)
			w := httptest.NewRecorder()
			a.h.ServeHTTP(w, r)
			if w.Code != want {
				b.Errorf("%s %s: %d %s", method, target, w.Code, w.Body)
				return
			}
		}
	})
}

// BenchmarkServedGetPet is GET /v1/pets/{id} through the handler serve builds.
func BenchmarkServedGetPet(b *testing.B) {
	a := newServedAPI(b)
	a.run(b, "GET", fmt.Sprintf("/v1/pets/%d", a.petID), "", http.StatusOK)
}

// BenchmarkServedPlaceOrder is POST /v1/store/orders (one hot pet) through the handler
// serve builds: group commit, FULL sync, its events.
func BenchmarkServedPlaceOrder(b *testing.B) {
	a := newServedAPI(b)
	a.run(b, "POST", "/v1/store/orders", fmt.Sprintf(`{"petId":%d,"quantity":1}`, a.petID), http.StatusCreated)
}
