package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

// BenchNameSearch measures the name filter on a catalogue of pets named "Pet <n>", of
// which five, spread over the ids, are named "Zephyr <n>": a rare text ("zephyr"), a
// common one ("pet 1": every tenth pet or so), and texts of one and two characters
// ("z", found in five pets, and "9"), each on the first page of 20, by 64 goroutines
// at once. open returns a new, empty store; sizes are the catalogues' sizes. The
// catalogue is built through the store (CreatePet, 16 at a time), before the timer;
// settle, when set, then runs on the store (the maintenance a database would have
// done by the time such a catalogue is searched).
func BenchNameSearch(b *testing.B, open func(b *testing.B) petstore.Store, settle func(b *testing.B, st petstore.Store), sizes ...int) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("%d pets", n), func(b *testing.B) {
			st := open(b)
			ctx := context.Background()
			cat, err := st.CreateCategory(ctx, petstore.Category{Name: "Bench"})
			if err != nil {
				b.Fatal(err)
			}
			var (
				next atomic.Int64
				wg   sync.WaitGroup
				fail atomic.Value
			)
			for range 16 {
				wg.Go(func() {
					for {
						i := next.Add(1) - 1
						if i >= int64(n) {
							return
						}
						name := fmt.Sprint("Pet ", i)
						if i%int64(n/5) == int64(n/10) {
							name = fmt.Sprint("Zephyr ", i)
						}
						if _, err := st.CreatePet(ctx, petstore.PetFields{Name: name, CategoryID: cat.ID, Status: petstore.Available}); err != nil {
							fail.Store(err)
							return
						}
					}
				})
			}
			wg.Wait()
			if err := fail.Load(); err != nil {
				b.Fatal(err)
			}
			if settle != nil {
				settle(b, st)
			}
			for _, q := range []string{"zephyr", "pet 1", "z", "9"} {
				b.Run(q, func(b *testing.B) {
					b.SetParallelism(benchParallelism)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if _, err := st.Pets(ctx, petstore.PetFilter{Name: q}, petstore.Page{Limit: 20}); err != nil {
								b.Error(err)
								return
							}
						}
					})
				})
			}
		})
	}
}

var benchParallelism = 1
