// Command purgebench measures what a purge of old events costs the orders placed
// while it runs, on SQLite, in one process as the server runs them: 64 goroutines
// place orders over 1,000 pets through the store's placement loop (group commit,
// synchronous=FULL) for a few seconds, then the store purges -events old events
// while they go on. It prints the orders' latency before and during the purge (p50,
// p99, p99.9, max) and the write-ahead log's largest size.
//
//	go run ./scripts/purgebench [-events 1000000] [-rounds 2] [-dir /var/tmp/purgebench]
//	go run ./scripts/purgebench -database postgres://… (in a new schema each round)
//
// The SQLite database is built once in -dir (pets through the store, old events with
// one INSERT) and copied for each round. -dir must be on the disk the server would
// use: an fsync on tmpfs costs nothing.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/sqlite"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "purgebench:", err)
		os.Exit(1)
	}
}

type config struct {
	events, pets, workers, rounds int
	dir, database                 string
	warmup, before                time.Duration
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var c config
	flags := flag.NewFlagSet("purgebench", flag.ContinueOnError)
	flags.IntVar(&c.events, "events", 1_000_000, "old events to purge")
	flags.IntVar(&c.pets, "pets", 1000, "pets the orders spread over")
	flags.IntVar(&c.workers, "workers", 64, "goroutines placing orders")
	flags.IntVar(&c.rounds, "rounds", 1, "rounds")
	flags.StringVar(&c.database, "database", "", "a postgres:// URL to measure PostgreSQL instead")
	flags.StringVar(&c.dir, "dir", "/var/tmp/purgebench", "where the databases are made (a disk, not tmpfs)")
	flags.DurationVar(&c.warmup, "warmup", time.Second, "orders before the measured window")
	flags.DurationVar(&c.before, "before", 5*time.Second, "orders measured before the purge starts")
	if err := flags.Parse(args); err != nil {
		return err
	}
	open := c.openPostgres
	if c.database == "" {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return err
		}
		template := filepath.Join(c.dir, fmt.Sprintf("template-%d-%d.db", c.pets, c.events))
		if _, err := os.Stat(template); errors.Is(err, fs.ErrNotExist) {
			if err := buildTemplate(ctx, c, template); err != nil {
				return fmt.Errorf("build: %w", err)
			}
		}
		open = func(ctx context.Context) (store, error) { return c.openSQLite(ctx, template) }
	}
	fmt.Fprintf(out, "| round | window | orders | orders/s | p50 ms | p99 ms | p99.9 ms | max ms | purge s | largest WAL MiB |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for r := range c.rounds {
		if err := round(ctx, c, open, r+1, out); err != nil {
			return fmt.Errorf("round %d: %w", r+1, err)
		}
	}
	return nil
}

// buildTemplate makes c.pets pets through the store, then c.events old events (a
// copy of a real order.placed event's data) with one INSERT, and dates every event
// in 2020 so that a purge takes them all.
func buildTemplate(ctx context.Context, c config, path string) error {
	tmp := path + ".tmp"
	for _, f := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		os.Remove(f)
	}
	st, err := sqlite.Open(ctx, tmp)
	if err != nil {
		return err
	}
	if err := populate(ctx, c, st); err != nil {
		st.Close()
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	raw, err := sql.Open("sqlite", "file:"+tmp+"?_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE TEMP TABLE model AS SELECT type, data FROM events WHERE type = 'order.placed' LIMIT 1`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		 INSERT INTO events (id, type, created_at, data) SELECT printf('evt_2020_%010d', i), model.type, '2020-01-01T00:00:00.000000000Z', model.data FROM n, model`,
		`UPDATE events SET created_at = '2020-01-01T00:00:00.000000000Z'`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
	} {
		var args []any
		if strings.Contains(q, "?") {
			args = []any{c.events}
		}
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("%.40s: %w", q, err)
		}
	}
	if err := raw.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// populate makes c.pets pets with a large stock, and one order, whose events give
// the old ones their data.
func populate(ctx context.Context, c config, st petstore.Store) error {
	cat, err := st.CreateCategory(ctx, petstore.Category{Name: "Bench"})
	if err != nil {
		return err
	}
	acc, err := st.EnsureAccount(ctx, "bench@example.com", petstore.Customer)
	if err != nil {
		return err
	}
	price := int64(100)
	for i := range c.pets {
		p, err := st.CreatePet(ctx, petstore.PetFields{Name: fmt.Sprintf("Pet %d", i), CategoryID: cat.ID, Status: petstore.Available, Price: &price})
		if err != nil {
			return err
		}
		if _, err := st.SetInventory(ctx, p.ID, 1_000_000); err != nil {
			return err
		}
		if i == 0 {
			if _, err := st.PlaceOrder(ctx, petstore.NewOrder{AccountID: acc.ID, PetID: p.ID, Quantity: 1}); err != nil {
				return err
			}
		}
	}
	return nil
}

// store is a round's store: the pets are firstPet and the c.pets-1 after it, and
// logSize, when set, says how large the write-ahead log is.
type store struct {
	petstore.Store
	firstPet int64
	logSize  func() int64
	close    func() error
}

func (c config) openSQLite(ctx context.Context, template string) (store, error) {
	file := filepath.Join(c.dir, "run.db")
	for _, f := range []string{file, file + "-wal", file + "-shm"} {
		os.Remove(f)
	}
	if err := copyFile(template, file); err != nil {
		return store{}, err
	}
	st, err := sqlite.Open(ctx, file)
	if err != nil {
		return store{}, err
	}
	wal := func() int64 {
		fi, err := os.Stat(file + "-wal")
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	// The template's pets are the first rows of a new table.
	return store{Store: st, firstPet: 1, logSize: wal, close: st.Close}, nil
}

// openPostgres makes a new schema with the pets and c.events old events (seq below
// any that a transaction id gives, dated 2020).
func (c config) openPostgres(ctx context.Context) (store, error) {
	dsn, drop, err := pgtest.NewSchema(ctx, c.database, "purgebench_")
	if err != nil {
		return store{}, err
	}
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		drop()
		return store{}, err
	}
	closeAll := func() error { st.Close(); return drop() }
	fail := func(err error) (store, error) { closeAll(); return store{}, err }
	if err := populate(ctx, c, st); err != nil {
		return fail(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fail(err)
	}
	defer conn.Close(ctx)
	var first int64
	if err := conn.QueryRow(ctx, `SELECT min(id) FROM pets`).Scan(&first); err != nil {
		return fail(err)
	}
	for _, q := range []string{
		`INSERT INTO events (seq, id, type, created_at, data)
		 SELECT i, 'evt_2020_' || i, m.type, '2020-01-01T00:00:00Z', m.data
		 FROM generate_series(1, $1::bigint) i, (SELECT type, data FROM events WHERE type = 'order.placed' LIMIT 1) m`,
		`VACUUM ANALYZE events`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = []any{c.events}
		}
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			return fail(fmt.Errorf("%.40s: %w", q, err))
		}
	}
	return store{Store: st, firstPet: first, close: closeAll}, nil
}

// sample is one order: when it was sent, relative to the round's start, and how
// long it took.
type sample struct{ at, took time.Duration }

func round(ctx context.Context, c config, open func(context.Context) (store, error), n int, out io.Writer) error {
	st, err := open(ctx)
	if err != nil {
		return err
	}
	defer st.close()
	acc, err := st.EnsureAccount(ctx, "bench@example.com", petstore.Customer)
	if err != nil {
		return err
	}
	firstPet := st.firstPet

	start := time.Now()
	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		mu      sync.Mutex
		samples []sample
		failed  atomic.Int64
	)
	for w := range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []sample
			for i := 0; !stop.Load(); i++ {
				pet := firstPet + int64((w*7919+i*104729)%c.pets)
				t := time.Now()
				_, err := st.PlaceOrder(ctx, petstore.NewOrder{AccountID: acc.ID, PetID: pet, Quantity: 1})
				if err != nil {
					failed.Add(1)
					continue
				}
				mine = append(mine, sample{at: t.Sub(start), took: time.Since(t)})
			}
			mu.Lock()
			samples = append(samples, mine...)
			mu.Unlock()
		}()
	}
	var walMax atomic.Int64
	walDone := make(chan struct{})
	go func() {
		defer close(walDone)
		for !stop.Load() && st.logSize != nil {
			if size := st.logSize(); size > walMax.Load() {
				walMax.Store(size)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	time.Sleep(c.warmup + c.before)
	purgeFrom := time.Since(start)
	purged, perr := st.PurgeEvents(ctx, time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC))
	purgeTo := time.Since(start)
	stop.Store(true)
	wg.Wait()
	<-walDone
	if perr != nil {
		return fmt.Errorf("purge: %w", perr)
	}
	if purged < int64(c.events) {
		return fmt.Errorf("purged %d events, want at least %d", purged, c.events)
	}
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("%d orders failed", f)
	}
	printWindows(out, n, samples, c.warmup, purgeFrom, purgeTo, float64(walMax.Load())/(1<<20))
	return nil
}

// printWindows prints a line of the orders sent before the purge (from warmup) and one
// of those sent during it, with the purge's length and the log's largest size (MiB).
func printWindows(out io.Writer, n int, samples []sample, warmup, purgeFrom, purgeTo time.Duration, wal float64) {
	for _, w := range []struct {
		name     string
		from, to time.Duration
	}{{"before", warmup, purgeFrom}, {"purge", purgeFrom, purgeTo}} {
		var took []time.Duration
		for _, s := range samples {
			if s.at >= w.from && s.at < w.to {
				took = append(took, s.took)
			}
		}
		slices.Sort(took)
		if len(took) == 0 {
			continue
		}
		q := func(p float64) float64 { return ms(took[min(len(took)-1, int(p*float64(len(took))))]) }
		fmt.Fprintf(out, "| %d | %s | %d | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", n, w.name, len(took),
			float64(len(took))/(w.to-w.from).Seconds(), q(0.5), q(0.99), q(0.999), ms(took[len(took)-1]), (purgeTo - purgeFrom).Seconds(), wal)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
