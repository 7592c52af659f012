package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/storetest"
)

// BenchmarkBatchSQLFloor measures what PostgreSQL alone allows orders of one hot pet:
// the SQL of a batch (postgres.BareBatchForTest: the statements placeBatch sends, in
// its two pipelined round trips) sent back to back on one connection, as one placement
// loop sends them, with nothing of Go's order path in between. Per order it reports
// orders/s and the CPU of the connection's server process (pg-µs/order, read from
// /proc, so on the machine that runs PostgreSQL only). "lock-only" sends BEGIN, the
// pet's lock, its UPDATE and the COMMIT: the floor of any batch that changes a pet
// durably, whatever it writes besides.
func BenchmarkBatchSQLFloor(b *testing.B) {
	url := pgtest.Schema(b, pgtest.URL(b))
	ctx := context.Background()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	a, err := db.CreateAccount(ctx, "floor@example.com", "", petstore.Customer)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := db.CreateCategory(ctx, petstore.Category{Name: "Floor"})
	if err != nil {
		b.Fatal(err)
	}
	p, err := db.CreatePet(ctx, petstore.PetFields{Name: "Bo", CategoryID: cat.ID, Status: petstore.Available, Price: storetest.Price(1999)})
	if err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var seq int64
	for _, lockOnly := range []bool{false, true} {
		for _, size := range []int{1, 8, 16, 32, 64} {
			name := fmt.Sprintf("batch of %d", size)
			if lockOnly {
				name = "lock-only " + name
			}
			b.Run(name, func(b *testing.B) {
				if _, err := db.SetInventory(ctx, p.ID, petstore.MaxStock); err != nil {
					b.Fatal(err)
				}
				cpu0 := backendCPU(b, conn)
				start := time.Now()
				orders := 0
				for b.Loop() {
					if err := postgres.BareBatchForTest(ctx, conn, p.ID, a.ID, cat.ID, size, lockOnly, &seq); err != nil {
						b.Fatal(err)
					}
					orders += size
				}
				el := time.Since(start)
				b.ReportMetric(float64(orders)/el.Seconds(), "orders/s")
				if cpu := backendCPU(b, conn) - cpu0; cpu >= 0 {
					b.ReportMetric(float64(cpu.Microseconds())/float64(orders), "pg-µs/order")
				}
			})
		}
	}
}

// backendCPU is the CPU time (user and system) of conn's server process so far, or
// -1 when /proc does not show it (PostgreSQL on another machine).
func backendCPU(b *testing.B, conn *pgx.Conn) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", conn.PgConn().PID()))
	if err != nil {
		return -1
	}
	// The fields after the command's closing parenthesis; utime and stime are the
	// 14th and 15th of the line, in clock ticks (100 a second on Linux).
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond
}
