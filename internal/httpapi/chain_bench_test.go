package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// BenchmarkMiddlewareChain measures what the service adds around an operation:
// request id, key authentication (from the cache), rate limiting, metrics and the log
// line, with an operation that does nothing.
func BenchmarkMiddlewareChain(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	acct, _ := st.EnsureAccount(ctx, "bench@example.com", petstore.Customer)
	key, prefix, hash := auth.NewKey()
	if _, err := st.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: acct.ID, Name: "bench", Prefix: prefix, Hash: hash}); err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{
		Store:     st,
		Logger:    slog.New(slog.NewJSONHandler(io.Discard, nil)),
		RateLimit: 1_000_000_000,
	})
	if err != nil {
		b.Fatal(err)
	}
	noop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !info(r.Context()).key.done {
			b.Fatal("the key was not checked")
		}
		w.WriteHeader(http.StatusNoContent)
	})
	chain := s.outer(s.v1(noop))
	r := httptest.NewRequest("GET", "/v1/pets?limit=20", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		chain.ServeHTTP(w, r)
	}
}

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark measures the
// chain and not a recorder.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkFindPath measures one routing of the generated router, which is what a
// request no longer pays twice (Server.serveAPI).
func BenchmarkFindPath(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := New(Config{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/v1/pets/12345", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := s.api.FindPath(r.Method, r.URL); !ok {
			b.Fatal("no route")
		}
	}
}
