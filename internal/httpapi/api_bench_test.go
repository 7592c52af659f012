package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
	"github.com/acme-pets/petstore/internal/tracing"
)

// benchAPI is the full handler stack (middleware, auth, generated router and codecs,
// SQLite on a file) without a network in between.
type benchAPI struct {
	h     http.Handler
	admin string
	petID int64
}

func newBenchAPI(b *testing.B) *benchAPI { return newBenchAPIWith(b, nil) }

// newBenchAPIWith is newBenchAPI with tp as the tracer of the requests and the store.
func newBenchAPIWith(b *testing.B, tp trace.TracerProvider) *benchAPI {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	acct, _ := st.EnsureAccount(ctx, "admin@example.com", petstore.Admin)
	key, prefix, hash := auth.NewKey()
	if _, err := st.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: acct.ID, Name: "bench", Prefix: prefix, Hash: hash}); err != nil {
		b.Fatal(err)
	}
	c, _ := st.CreateCategory(ctx, petstore.Category{Name: "Dogs"})
	var first int64
	for i := range 50 {
		price := int64(999)
		p, err := st.CreatePet(ctx, petstore.PetFields{Name: fmt.Sprintf("pet %d", i), CategoryID: c.ID, Status: petstore.Available, Price: &price})
		if err != nil {
			b.Fatal(err)
		}
		if first == 0 {
			first = p.ID
		}
	}
	cfg := httpapi.Config{Store: st}
	if tp != nil {
		cfg.Tracer, cfg.Store = tp, tracing.Store(st, tp, "sqlite")
	}
	h, err := httpapi.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	// Enough stock for every order of BenchmarkPlaceOrder.
	if _, err := st.SetInventory(ctx, first, 1_000_000); err != nil {
		b.Fatal(err)
	}
	return &benchAPI{h: h, admin: key, petID: first}
}

func (a *benchAPI) run(b *testing.B, method, target, body string, want int) {
	b.ReportAllocs()
	for b.Loop() {
		var r *http.Request
		if body != "" {
			r = httptest.NewRequest(method, target, strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
		} else {
			r = httptest.NewRequest(method, target, nil)
		}
		r.Header.Set("Authorization", "Bearer "+a.admin)
		w := httptest.NewRecorder()
		a.h.ServeHTTP(w, r)
		if w.Code != want {
			b.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
	}
}

func BenchmarkGetPetByID(b *testing.B) {
	a := newBenchAPI(b)
	a.run(b, "GET", fmt.Sprintf("/v1/pets/%d", a.petID), "", http.StatusOK)
}

// BenchmarkGetPetByIDTraced is BenchmarkGetPetByID with every request traced
// (sampled, its spans ended but exported nowhere): the cost of tracing on, less the
// export's, beside tracing off.
func BenchmarkGetPetByIDTraced(b *testing.B) {
	for _, sampled := range []bool{true, false} {
		b.Run(fmt.Sprintf("sampled=%v", sampled), func(b *testing.B) {
			sampler := sdktrace.NeverSample()
			if sampled {
				sampler = sdktrace.AlwaysSample()
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler))
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			a := newBenchAPIWith(b, tp)
			a.run(b, "GET", fmt.Sprintf("/v1/pets/%d", a.petID), "", http.StatusOK)
		})
	}
}

func BenchmarkListPets20(b *testing.B) {
	a := newBenchAPI(b)
	a.run(b, "GET", "/v1/pets?limit=20", "", http.StatusOK)
}

func BenchmarkCreatePet(b *testing.B) {
	a := newBenchAPI(b)
	a.run(b, "POST", "/v1/pets", `{"name":"Rex","categoryId":1}`, http.StatusCreated)
}

func BenchmarkPlaceOrder(b *testing.B) {
	a := newBenchAPI(b)
	a.run(b, "POST", "/v1/store/orders", fmt.Sprintf(`{"petId":%d,"quantity":1}`, a.petID), http.StatusCreated)
}
