//go:build unix

package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/groupcommit"
	"github.com/acme-pets/petstore/internal/petstore"
)

// BenchmarkBatchFloor is the storage's floor for orders on one hot pet: placeBatch,
// the transaction a batch of the placement loop runs (the server's schema, pragmas,
// statements and synchronous=FULL commit), called back to back from one goroutine
// with batches of a fixed size, without HTTP, the group commit's goroutines or
// another request in the way. Every order goes through the single writer, so
// orders/s here bounds what the server can place on this machine whatever the HTTP
// side costs (docs/PERFORMANCE.md, "The floor").
func BenchmarkBatchFloor(b *testing.B) {
	for _, size := range []int{1, 16, 64, 128} {
		b.Run(fmt.Sprintf("batch %d", size), func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(ctx, filepath.Join(b.TempDir(), "petstore.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			acct, err := db.CreateAccount(ctx, "floor@example.com", "", petstore.Customer)
			if err != nil {
				b.Fatal(err)
			}
			cat, err := db.CreateCategory(ctx, petstore.Category{Name: "Floor"})
			if err != nil {
				b.Fatal(err)
			}
			price := int64(1999)
			pet, err := db.CreatePet(ctx, petstore.PetFields{Name: "Bo", CategoryID: cat.ID, Status: petstore.Available, Price: &price})
			if err != nil {
				b.Fatal(err)
			}
			reqs := make([]petstore.NewOrder, size)
			for i := range reqs {
				reqs[i] = petstore.NewOrder{AccountID: acct.ID, PetID: pet.ID, Quantity: 1}
			}
			out := make([]groupcommit.Outcome[petstore.PlacedOrder], size)
			stock, placed := 0, 0
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for ; placed < b.N; placed += size {
				if stock < size { // off the clock: a sold-out pet would refuse, which costs less
					b.StopTimer()
					if _, err := db.SetInventory(ctx, pet.ID, petstore.MaxStock); err != nil {
						b.Fatal(err)
					}
					stock = petstore.MaxStock
					b.StartTimer()
				}
				if err := db.placeBatch(ctx, reqs, out); err != nil {
					b.Fatal(err)
				}
				if out[0].Err != nil {
					b.Fatal(out[0].Err)
				}
				stock -= size
			}
			cpu := cpuTime(b) - cpu0
			b.StopTimer()
			b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "orders/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(placed), "cpu-µs/order")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system: on a shared machine
// the wall time per order measures the neighbours as much as the work.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
