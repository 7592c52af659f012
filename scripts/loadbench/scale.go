package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// The scale run (-scale) asks whether the service's cost stays flat as the shop
// grows: the same reads on a small and a large database, as ratios taken in one run
// (figures on a shared machine move by a fifth from run to run; ratios much less),
// then what webhook endpoints cost the orders and how fast their deliveries go.

// The scale run's Lua globals: ADMIN and CUSTOMER are keys; LO–HI are every pet,
// ALO–AHI the available ones; PCURSOR and ECURSOR are cursors nine tenths into the
// pets and the feed.
var scaleReads = []scenario{
	{"pet-by-id", "GET /v1/pets/{id}, ids over every pet", `
request = function() return wrk.format("GET", "/v1/pets/" .. math.random(LO, HI)) end`},
	{"first-page", "GET /v1/pets", `
request = function() return wrk.format("GET", "/v1/pets") end`},
	{"deep-page", "GET /v1/pets?cursor=… nine tenths in", `
request = function() return wrk.format("GET", "/v1/pets?cursor=" .. PCURSOR) end`},
	{"status", "GET /v1/pets?status=sold (the last 1% of the pets)", `
request = function() return wrk.format("GET", "/v1/pets?status=sold") end`},
	{"name-search", "GET /v1/pets?name=" + rareName + " (5 pets)", `
request = function() return wrk.format("GET", "/v1/pets?name=` + rareName + `") end`},
	{"tag-search", "GET /v1/pets?tag=friendly&tag=" + rareTag + " (5 pets, one tag on half of all)", `
request = function() return wrk.format("GET", "/v1/pets?tag=friendly&tag=` + rareTag + `") end`},
	{"my-orders", "GET /v1/store/orders as a customer (~1,000 orders of its own)", `
wrk.headers["Authorization"] = "Bearer " .. CUSTOMER
request = function() return wrk.format("GET", "/v1/store/orders") end`},
	{"orders-in-a-day", "GET /v1/store/orders?status=completed&createdAfter=…&createdBefore=… (a day long past: none)", `
request = function() return wrk.format("GET", "/v1/store/orders?status=completed&createdAfter=2020-01-01T00:00:00Z&createdBefore=2020-01-02T00:00:00Z") end`},
	{"sales-by-day", "GET /v1/store/sales?groupBy=day over the last 90 days", `
request = function()
  return wrk.format("GET", "/v1/store/sales?groupBy=day&from=" .. os.date("!%Y-%m-%d", os.time() - 89 * 86400) .. "&to=" .. os.date("!%Y-%m-%d"))
end`},
	{"sales-by-pet", "GET /v1/store/sales?groupBy=pet over the last 90 days (the 100 best sellers)", `
request = function()
  return wrk.format("GET", "/v1/store/sales?groupBy=pet&from=" .. os.date("!%Y-%m-%d", os.time() - 89 * 86400) .. "&to=" .. os.date("!%Y-%m-%d"))
end`},
	{"events-feed", "GET /v1/events", `
request = function() return wrk.format("GET", "/v1/events") end`},
	{"events-deep", "GET /v1/events?cursor=… nine tenths in", `
request = function() return wrk.format("GET", "/v1/events?cursor=" .. ECURSOR) end`},
}

var scaleWrites = []scenario{
	{"orders-spread", "POST /v1/store/orders over the available pets", ordersSpread},
}

const ordersSpread = `
request = function()
  return wrk.format("POST", "/v1/store/orders", nil, '{"petId":' .. math.random(ALO, AHI) .. ',"quantity":1}')
end`

// scaleConfig is the scale run's part of the flags.
type scaleConfig struct {
	database       string // postgres:// URL, or empty for SQLite
	small, large   shape
	rounds         int
	drain          time.Duration
	keep           string // SQLite: where built databases are kept for later runs
	profile        string // where the webhook scenarios' CPU profiles go; empty: none
	serverCPUs     string // taskset's CPU list the server is pinned to; empty: not pinned
	only           string
	out, logs      string
	bin            string
	stdout, stderr io.Writer

	store       string
	dropSchemas []func()
}

// database is one built database, ready for the server.
type database struct {
	built
	dsn                 string
	adminKey, customKey string
}

func (d *database) vars() string {
	return fmt.Sprintf("ADMIN, CUSTOMER = %q, %q\nLO, HI, ALO, AHI = %d, %d, %d, %d\nPCURSOR, ECURSOR = %q, %q\n"+
		"wrk.headers[\"Authorization\"] = \"Bearer \" .. ADMIN\n",
		d.adminKey, d.customKey, d.lo, d.hi, d.lo, d.soldFrom-1, d.deepPets, d.deepEvents)
}

func runScale(ctx context.Context, b *bench, c *scaleConfig) error {
	c.store = "sqlite"
	if c.database != "" {
		c.store = "postgres"
	}
	defer func() {
		for _, drop := range c.dropSchemas {
			drop()
		}
	}()
	// The large database takes minutes to build and only the reads and orders
	// compare against it: a run of webhook scenarios alone builds the small one.
	shapes := []shape{c.small}
	if c.wants(scaleReads) || c.wants(scaleWrites) {
		shapes = append(shapes, c.large)
	} else {
		fmt.Fprintln(c.stderr, "no scenario needs the large database: not building it")
	}
	var dbs []*database
	for _, s := range shapes {
		d, err := c.prepare(ctx, b, s)
		if err != nil {
			return fmt.Errorf("%s database: %w", s.name, err)
		}
		dbs = append(dbs, d)
	}
	small := dbs[0]

	runs := map[scaleKey][]result{}
	var all []any
	// Orders change the databases, so they come after every read: the reads of a
	// later round see the databases as built.
	for _, scs := range [][]scenario{scaleReads, scaleWrites} {
		if err := c.phase(ctx, b, dbs, scs, runs, &all); err != nil {
			return err
		}
	}
	var hooks []hookResult
	if slices.ContainsFunc(hookRuns, func(h hookRun) bool { return c.selected(h.name()) }) {
		var err error
		if hooks, err = c.webhooks(ctx, b, small); err != nil {
			return err
		}
		for _, h := range hooks {
			all = append(all, h)
		}
	}

	if len(dbs) > 1 {
		c.printScale(b, small, dbs[1], runs)
	}
	if len(hooks) > 0 {
		c.printHooks(b, hooks)
	}
	return writeJSON(c.out, all)
}

// scaleKey names the runs of one scenario on one database.
type scaleKey struct{ scenario, db string }

// phase measures the selected scenarios of scs on each database, c.rounds times,
// with a server started afresh for each round and database; it adds the results to
// runs and to all.
func (c *scaleConfig) phase(ctx context.Context, b *bench, dbs []*database, scs []scenario, runs map[scaleKey][]result, all *[]any) error {
	for round := range c.rounds {
		for _, d := range dbs {
			if !c.wants(scs) {
				continue
			}
			fmt.Fprintf(c.stderr, "round %d of %d, %s database\n", round+1, c.rounds, d.name)
			srv, err := c.serve(ctx, d)
			if err != nil {
				return err
			}
			for _, sc := range scs {
				if !c.selected(sc.name) {
					continue
				}
				r, err := b.measure(ctx, srv, sc, d.vars(), b.warmup)
				if err != nil {
					srv.stop()
					return err
				}
				r.Store, r.Database = c.store, d.name
				runs[scaleKey{sc.name, d.name}] = append(runs[scaleKey{sc.name, d.name}], r)
				*all = append(*all, r)
			}
			srv.stop()
		}
	}
	return nil
}

// printScale prints the table of the scenarios measured on both databases: the
// medians of each, and their ratios.
func (c *scaleConfig) printScale(b *bench, small, large *database, runs map[scaleKey][]result) {
	w := c.stdout
	fmt.Fprintf(w, "petstore at scale on %s: wrk -t%d -c%d, %v per scenario after %v of warm-up, %d round(s), medians\n\n",
		c.store, b.threads, b.conns, b.duration, b.warmup, c.rounds)
	fmt.Fprintf(w, "small: %d pets, %d orders (built in %v); large: %d pets, %d orders (built in %v)\n\n",
		small.pets, small.orders, small.took.Round(time.Second), large.pets, large.orders, large.took.Round(time.Second))
	header := true
	for _, sc := range append(slices.Clone(scaleReads), scaleWrites...) {
		s, l := runs[scaleKey{sc.name, small.name}], runs[scaleKey{sc.name, large.name}]
		if len(s) == 0 || len(l) == 0 {
			continue
		}
		if header {
			fmt.Fprintln(w, "| scenario | small req/s | large req/s | large ÷ small | small p99 ms | large p99 ms | p99 large ÷ small | non-2xx |")
			fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
			header = false
		}
		sr, lr := median(s, func(r result) float64 { return r.RPS }), median(l, func(r result) float64 { return r.RPS })
		sp, lp := median(s, func(r result) float64 { return r.P99ms }), median(l, func(r result) float64 { return r.P99ms })
		non2xx := 0
		for _, r := range append(slices.Clone(s), l...) {
			non2xx += r.Non2xx
		}
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.3f | %.2f | %.2f | %.2f | %d |\n", sc.name, sr, lr, lr/sr, sp, lp, lp/sp, non2xx)
	}
}

func (c *scaleConfig) selected(name string) bool {
	return c.only == "" || contains(strings.Split(c.only, ","), name)
}

func (c *scaleConfig) wants(scs []scenario) bool {
	for _, sc := range scs {
		if c.selected(sc.name) {
			return true
		}
	}
	return false
}

func median(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// serve starts the binary on d with a webhook receiver on loopback allowed and the
// operator port on a free port, for the queue's depth.
func (c *scaleConfig) serve(ctx context.Context, d *database) (*server, error) {
	admin, err := freeAddr()
	if err != nil {
		return nil, err
	}
	srv, err := start(ctx, c.bin, d.dsn, c.logs, "--webhooks-allow-private", "--admin-addr", admin)
	if err != nil {
		return nil, err
	}
	srv.admin = admin
	if c.serverCPUs != "" {
		// Every thread the runtime has started (-a), and those it starts later inherit
		// it: the receiver's CPU, in loadbench, is then out of the server's.
		pid := strconv.Itoa(srv.Cmd.Process.Pid)
		if out, err := exec.CommandContext(ctx, "taskset", "-a", "-p", "-c", c.serverCPUs, pid).CombinedOutput(); err != nil {
			srv.stop()
			return nil, fmt.Errorf("taskset %s: %v: %s", c.serverCPUs, err, out)
		}
	}
	return srv, nil
}

// prepare builds (or, with -keep, reuses) a database of shape s and makes its keys.
func (c *scaleConfig) prepare(ctx context.Context, b *bench, s shape) (*database, error) {
	d := &database{}
	var err error
	if c.database == "" {
		err = c.prepareSQLite(ctx, b, s, d)
	} else {
		err = c.preparePostgres(ctx, s, d)
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c.stderr, "%s database: %d pets, %d orders, built in %v\n", s.name, s.pets, s.orders, d.took.Round(100*time.Millisecond))
	for _, k := range []struct {
		to          *string
		email, role string
	}{{&d.adminKey, "bench@example.com", "admin"}, {&d.customKey, customerMail, "customer"}} {
		out, err := exec.CommandContext(ctx, c.bin, "keys", "create", "--email", k.email, "--role", k.role, "--database", d.dsn).Output()
		if err != nil {
			return nil, fmt.Errorf("keys create: %w", err)
		}
		*k.to = strings.TrimSpace(string(out))
	}
	return d, nil
}

// keptBuild is what -keep stores beside a built SQLite file.
type keptBuild struct {
	Lo, Hi, SoldFrom     int64
	DeepPets, DeepEvents string
	Took                 time.Duration
}

// prepareSQLite builds on tmpfs when there is one: the store commits with
// synchronous=FULL, and there a sync costs nothing, while the bytes written are the
// same. The file is then copied next to the benchmark's, onto the disk the server
// runs on.
func (c *scaleConfig) prepareSQLite(ctx context.Context, b *bench, s shape, d *database) error {
	d.dsn = filepath.Join(b.dir, s.name+".db")
	kept := ""
	if c.keep != "" {
		kept = filepath.Join(c.keep, fmt.Sprintf("%s-%d-%d.db", s.name, s.pets, s.orders))
		if meta, err := os.ReadFile(kept + ".json"); err == nil {
			var k keptBuild
			if err := json.Unmarshal(meta, &k); err != nil {
				return fmt.Errorf("%s.json: %w", kept, err)
			}
			fmt.Fprintf(c.stderr, "%s database: reusing %s\n", s.name, kept)
			d.built = built{shape: s, lo: k.Lo, hi: k.Hi, soldFrom: k.SoldFrom, deepPets: k.DeepPets, deepEvents: k.DeepEvents, took: k.Took}
			return copyFile(kept, d.dsn)
		}
	}
	tmp := b.dir
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if tmp, err = os.MkdirTemp("/dev/shm", "loadbench"); err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
	}
	file := filepath.Join(tmp, s.name+"-build.db")
	// The server's batch bound, not a larger one (20% faster to build): a batch
	// writes one stock event per pet, so its size decides which events exist.
	st, err := sqlite.Open(ctx, file)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "building the %s database (%d pets, %d orders) in %s\n", s.name, s.pets, s.orders, tmp)
	d.built, err = build(ctx, st, s, c.stderr)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Close checkpointed the log into the file and truncated it: the file is all.
	start := time.Now()
	if err := copyFile(file, d.dsn); err != nil {
		return err
	}
	d.took += time.Since(start)
	if kept != "" {
		if err := os.MkdirAll(c.keep, 0o755); err != nil {
			return err
		}
		if err := copyFile(file, kept); err != nil {
			return err
		}
		meta, _ := json.Marshal(keptBuild{Lo: d.lo, Hi: d.hi, SoldFrom: d.soldFrom, DeepPets: d.deepPets, DeepEvents: d.deepEvents, Took: d.took})
		return os.WriteFile(kept+".json", meta, 0o644)
	}
	return nil
}

// preparePostgres builds in a new schema, with synchronous_commit off for the
// build's sessions only: a commit then does not wait for the log to reach the disk,
// which changes nothing of what is written. The tables are then vacuumed and
// analysed, as autovacuum would do soon after such a load; without it the first
// minutes of the run measure the statistics' lag rather than the design.
func (c *scaleConfig) preparePostgres(ctx context.Context, s shape, d *database) error {
	dsn, drop, err := newSchema(ctx, c.database, s.name+"_")
	if err != nil {
		return err
	}
	c.dropSchemas = append(c.dropSchemas, drop)
	d.dsn = dsn
	fast := dsn + "&synchronous_commit=off"
	st, err := postgres.Open(ctx, fast)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "building the %s database (%d pets, %d orders) in PostgreSQL\n", s.name, s.pets, s.orders)
	d.built, err = build(ctx, st, s, c.stderr)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	start := time.Now()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT quote_ident(table_name) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := conn.Exec(ctx, "VACUUM (ANALYZE) "+t); err != nil {
			return fmt.Errorf("vacuum %s: %w", t, err)
		}
	}
	d.took += time.Since(start)
	return nil
}

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

// check refuses sizes that build cannot make: the rare name needs rarePets pets
// among at least as many others.
func (s shape) check() error {
	if s.pets < 2*rarePets || s.orders < 1 {
		return fmt.Errorf("-scale: the %s database needs at least %d pets and 1 order", s.name, 2*rarePets)
	}
	return nil
}
