package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
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

// The metrics the webhook runs read from the operator port.
const (
	queueDepth   = "petstore_webhook_queue_depth"
	ordersPlaced = "petstore_orders_placed_total"
)

// hookRun is one webhook scenario: endpoints subscribed to order.placed whose
// receiver answers after delay, under the orders-spread load.
type hookRun struct {
	endpoints int
	delay     time.Duration
}

func (h hookRun) name() string {
	if h.delay > 0 {
		return fmt.Sprintf("hooks-%d-%s", h.endpoints, h.delay)
	}
	return fmt.Sprintf("hooks-%d", h.endpoints)
}

var hookRuns = []hookRun{{0, 0}, {1, 0}, {10, 0}, {100, 0}, {1, 50 * time.Millisecond}, {10, 50 * time.Millisecond}}

// hookResult is one webhook scenario's line.
type hookResult struct {
	result
	Endpoints    int     `json:"endpoints"`
	DelayMs      float64 `json:"receiverDelayMs"`
	Expected     int     `json:"expectedDeliveries"`
	During       int     `json:"deliveredDuringLoad"`
	DuringPerSec float64 `json:"deliveriesPerSecondDuringLoad"`
	After        int     `json:"deliveredAfterLoad"`
	AfterPerSec  float64 `json:"deliveriesPerSecondAfterLoad"`
	DrainedMs    float64 `json:"drainedAfterMs,omitempty"` // 0: not drained within the wait
	Pending      int     `json:"pendingAtEnd"`
	Skipped      string  `json:"skipped,omitempty"`
}

// scaleConfig is the scale run's part of the flags.
type scaleConfig struct {
	database       string // postgres:// URL, or empty for SQLite
	small, large   shape
	rounds         int
	drain          time.Duration
	keep           string // SQLite: where built databases are kept for later runs
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
	var dbs []*database
	for _, s := range []shape{c.small, c.large} {
		d, err := c.prepare(ctx, b, s)
		if err != nil {
			return fmt.Errorf("%s database: %w", s.name, err)
		}
		dbs = append(dbs, d)
	}
	small, large := dbs[0], dbs[1]

	type key struct{ scenario, db string }
	runs := map[key][]result{}
	var all []any
	phase := func(scs []scenario, warmup time.Duration) error {
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
					r, err := b.measure(ctx, srv, sc, d.vars(), warmup)
					if err != nil {
						srv.stop()
						return err
					}
					r.Store, r.Database = c.store, d.name
					runs[key{sc.name, d.name}] = append(runs[key{sc.name, d.name}], r)
					all = append(all, r)
				}
				srv.stop()
			}
		}
		return nil
	}
	if err := phase(scaleReads, b.warmup); err != nil {
		return err
	}
	// Orders change the databases, so they come after every read: the reads of a
	// later round see the databases as built.
	if err := phase(scaleWrites, b.warmup); err != nil {
		return err
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

	w := c.stdout
	fmt.Fprintf(w, "petstore at scale on %s: wrk -t%d -c%d, %v per scenario after %v of warm-up, %d round(s), medians\n\n",
		c.store, b.threads, b.conns, b.duration, b.warmup, c.rounds)
	fmt.Fprintf(w, "small: %d pets, %d orders (built in %v); large: %d pets, %d orders (built in %v)\n\n",
		small.pets, small.orders, small.took.Round(time.Second), large.pets, large.orders, large.took.Round(time.Second))
	header := true
	for _, sc := range append(slices.Clone(scaleReads), scaleWrites...) {
		s, l := runs[key{sc.name, small.name}], runs[key{sc.name, large.name}]
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
	if len(hooks) > 0 {
		fmt.Fprintf(w, "\nWebhooks on the small database: endpoints subscribed to order.placed, orders over its pets for %v, then up to %v for the rest\n\n", b.duration, c.drain)
		fmt.Fprintln(w, "| endpoints | receiver | orders/s | p99 ms | deliveries/s during | after | delivered / expected | backlog gone after | pending then |")
		fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, h := range hooks {
			answers := "at once"
			if h.DelayMs > 0 {
				answers = fmt.Sprintf("in %.0f ms", h.DelayMs)
			}
			if h.Skipped != "" {
				fmt.Fprintf(w, "| %d | %s | skipped: %s ||||||\n", h.Endpoints, answers, h.Skipped)
				continue
			}
			drained := "not within " + c.drain.String()
			if h.DrainedMs > 0 {
				drained = (time.Duration(h.DrainedMs) * time.Millisecond).String()
			}
			fmt.Fprintf(w, "| %d | %s | %.0f | %.2f | %.0f | %.0f | %d / %d | %s | %d |\n", h.Endpoints, answers,
				h.RPS, h.P99ms, h.DuringPerSec, h.AfterPerSec, h.During+h.After, h.Expected, drained, h.Pending)
		}
	}
	return writeJSON(c.out, all)
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

// webhooks runs every hookRun on d: it makes the endpoints through the admin API,
// drives orders for the benchmark's duration, then waits up to c.drain for the
// receiver to have every delivery and the server's queue to be empty, and removes
// the endpoints.
func (c *scaleConfig) webhooks(ctx context.Context, b *bench, d *database) ([]hookResult, error) {
	rcv, err := newReceiver()
	if err != nil {
		return nil, err
	}
	defer rcv.close()
	srv, err := c.serve(ctx, d)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	api := &client{base: srv.base, key: d.adminKey}
	var out []hookResult
	for _, h := range hookRuns {
		if !c.selected(h.name()) {
			continue
		}
		r, err := c.hookRun(ctx, b, srv, api, rcv, d, h)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.name(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (c *scaleConfig) hookRun(ctx context.Context, b *bench, srv *server, api *client, rcv *receiver, d *database, h hookRun) (hookResult, error) {
	hr := hookResult{Endpoints: h.endpoints, DelayMs: float64(h.delay) / 1e6}
	var ids []string
	defer func() {
		// Removing an endpoint removes its pending deliveries; what is in flight
		// finishes within the receiver's delay.
		for _, id := range ids {
			if _, err := api.call(context.WithoutCancel(ctx), "DELETE", "/webhooks/"+id, ""); err != nil {
				fmt.Fprintf(c.stderr, "  removing webhook %s: %v\n", id, err)
			}
		}
		time.Sleep(h.delay + 500*time.Millisecond)
	}()
	for i := range h.endpoints {
		w, err := api.call(ctx, "POST", "/webhooks", fmt.Sprintf(`{"url":%q,"events":["order.placed"],"description":"loadbench"}`, rcv.url(i, h.delay)))
		if err != nil {
			// A service that caps its endpoints below this run's count says so; the
			// other runs still tell something.
			hr.Skipped = fmt.Sprintf("endpoint %d of %d: %v", i+1, h.endpoints, err)
			fmt.Fprintf(c.stderr, "%s: skipped: %s\n", h.name(), hr.Skipped)
			return hr, nil
		}
		ids = append(ids, fmt.Sprint(w["id"]))
	}
	if depth, ok := srv.metric(queueDepth); ok && depth > 0 {
		fmt.Fprintf(c.stderr, "  %.0f deliveries were pending before the load\n", depth)
	}
	// wrk does not count the requests it leaves in flight when it stops, but the
	// server places those orders: the server's own count says what is owed.
	placed0, ok := srv.metric(ordersPlaced)
	if !ok {
		return hr, errors.New("the operator port does not serve " + ordersPlaced)
	}
	rcv.reset()
	sc := scenario{h.name(), fmt.Sprintf("POST /v1/store/orders with %d endpoints on order.placed, receiver answering after %v", h.endpoints, h.delay), ordersSpread}
	loadStart := time.Now()
	r, err := b.measure(ctx, srv, sc, d.vars(), 0) // the reads and orders before warmed the server
	if err != nil {
		return hr, err
	}
	loadEnd := time.Now()
	hr.result = r
	hr.Store, hr.Database = c.store, d.name
	hr.During = int(rcv.count())
	hr.DuringPerSec = float64(hr.During) / loadEnd.Sub(loadStart).Seconds()
	for {
		got := int(rcv.count())
		placed, _ := srv.metric(ordersPlaced)
		hr.Expected = int(placed-placed0) * h.endpoints
		depth, known := srv.metric(queueDepth)
		if got >= hr.Expected && (!known || depth == 0) {
			hr.DrainedMs = float64(max(time.Since(loadEnd), time.Millisecond).Milliseconds())
			break
		}
		if time.Since(loadEnd) >= c.drain || ctx.Err() != nil {
			hr.Pending = hr.Expected - got
			if known {
				hr.Pending = int(depth)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	hr.After = int(rcv.count()) - hr.During
	hr.AfterPerSec = float64(hr.After) / time.Since(loadEnd).Seconds()
	fmt.Fprintf(c.stderr, "  %.0f orders/s; %d of %d delivered during the load, %d after; pending %d\n",
		r.RPS, hr.During, hr.Expected, hr.After, hr.Pending)
	return hr, nil
}

// metric reads an unlabelled metric from the operator port; ok is false when the
// server does not serve it.
func (s *server) metric(name string) (v float64, ok bool) {
	if s.admin == "" {
		return 0, false
	}
	res, err := http.Get("http://" + s.admin + "/metrics")
	if err != nil {
		return 0, false
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if text, found := strings.CutPrefix(sc.Text(), name+" "); found {
			v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// receiver is the webhook endpoints' side: an HTTP server on loopback that counts
// the deliveries it answers with 204, after the delay its URL names.
type receiver struct {
	srv  *http.Server
	base string
	n    atomic.Int64
}

func newReceiver() (*receiver, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	r := &receiver{base: "http://" + addr}
	r.srv = &http.Server{Addr: addr, ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		if d, err := time.ParseDuration(req.URL.Query().Get("delay")); err == nil {
			time.Sleep(d)
		}
		r.n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})}
	ready := make(chan error, 1)
	go func() {
		ln, err := net.Listen("tcp", addr)
		ready <- err
		if err == nil {
			r.srv.Serve(ln)
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return r, nil
}

func (r *receiver) url(i int, delay time.Duration) string {
	return fmt.Sprintf("%s/hook/%d?delay=%s", r.base, i, delay)
}

func (r *receiver) count() int64 { return r.n.Load() }
func (r *receiver) reset()       { r.n.Store(0) }
func (r *receiver) close()       { r.srv.Close() }

// check refuses sizes that build cannot make: the rare name needs rarePets pets
// among at least as many others.
func (s shape) check() error {
	if s.pets < 2*rarePets || s.orders < 1 {
		return fmt.Errorf("-scale: the %s database needs at least %d pets and 1 order", s.name, 2*rarePets)
	}
	return nil
}
