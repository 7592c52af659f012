package storetest

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

// BenchPlacement measures placing orders of one unit through a store's placement loop
// (batched, group commit): one after another; 64 goroutines at once on one pet (a
// flash sale, where every order takes the same pet's stock); and 64 goroutines at
// once spread over 1,000 pets. open returns a new, empty store.
func BenchPlacement(b *testing.B, open func(b *testing.B) petstore.Store) {
	cases := []struct {
		name       string
		goroutines int
		pets       int
	}{
		{"serial", 1, 1},
		{"64 concurrent on one pet", 64, 1},
		{"64 concurrent on 1000 pets", 64, 1000},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			st := open(b)
			ctx := context.Background()
			a, err := st.CreateAccount(ctx, "bench@example.com", "", petstore.Customer)
			if err != nil {
				b.Fatal(err)
			}
			cat, err := st.CreateCategory(ctx, petstore.Category{Name: "Bench"})
			if err != nil {
				b.Fatal(err)
			}
			pets := make([]int64, c.pets)
			for i := range pets {
				p, err := st.CreatePet(ctx, petstore.PetFields{Name: fmt.Sprint("Pet ", i), CategoryID: cat.ID, Status: petstore.Available, Price: Price(500)})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := st.SetInventory(ctx, p.ID, petstore.MaxStock); err != nil {
					b.Fatal(err)
				}
				pets[i] = p.ID
			}
			var next atomic.Int64
			order := func() {
				pet := pets[int(next.Add(1))%len(pets)]
				if _, err := st.PlaceOrder(ctx, petstore.NewOrder{AccountID: a.ID, PetID: pet, Quantity: 1}); err != nil {
					b.Error(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			if c.goroutines == 1 {
				for b.Loop() {
					order()
				}
				return
			}
			b.SetParallelism((c.goroutines + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					order()
				}
			})
		})
	}
}
