// Command loadbench measures the petstore binary as shipped under load, with wrk
// (Debian's package): it builds ./cmd/petstore, starts `petstore serve` on a fresh
// database with its default settings (request log on at info, written to a file),
// makes its data through the API, and drives each scenario with wrk. It prints
// requests per second, the median and 99th percentile latency, the server's CPU and
// its peak resident memory per scenario, and writes the table as JSON.
//
//	go run ./scripts/loadbench                                  # SQLite, in a temporary file
//	go run ./scripts/loadbench -database 'postgres://…'          # a new schema, dropped afterwards
//	go run ./scripts/loadbench -duration 30s -scenarios orders-hot,mix
//
// Rate limiting is off (-rate-limit 0): the limiter is per client, and wrk speaks for
// many clients with one key.
//
// # The scale run
//
// -scale asks whether the cost stays flat as the shop grows. It builds two databases
// through the stores' own Go API (internal/sqlite, internal/postgres: CreatePet,
// SetInventory, PlaceOrder from many goroutines, so the placement loop batches the
// orders), which writes exactly the rows and events the API would, much faster than
// HTTP: a small one (-small-pets 1000, -small-orders 10000) and a large one (-pets
// 100000, -orders 1000000). Each has one customer account per 100 pets sharing the
// orders, 1% of its pets sold (the last ids, stock 0), the others with a stock of a
// million, and five pets named "Zephyr …" spread over the ids. SQLite builds on
// /dev/shm and copies the file to disk; PostgreSQL builds in a schema of its own per
// database with synchronous_commit off for the build's sessions, then vacuums and
// analyses it.
//
// It then runs, alternating small and large for -rounds rounds (medians shown), the
// reads pet-by-id (random ids), first-page, deep-page (a cursor nine tenths in),
// status (?status=sold), name-search (?name=zephyr), tag-search (?tag=friendly&tag=rare), my-orders (GET /v1/store/orders
// as a customer), orders-in-a-day (staff's completed orders of a past day),
// sales-by-day and sales-by-pet (the report of the last 90 days), events-feed and
// events-deep; then orders-spread on each; and
// prints each as large ÷ small, for req/s and p99. Last, on the small database:
// orders/s with 0, 1, 10 and 100 endpoints subscribed to order.placed (made with
// the admin API, the server started with --webhooks-allow-private), delivered to a
// receiver inside loadbench that answers 204 at once, or in 50 ms for 1 and 10
// endpoints; deliveries per second during the load and after it, and how long after
// the load the backlog was gone (the receiver has a delivery for every order the
// server counted, petstore_orders_placed_total, and petstore_webhook_queue_depth on
// the operator port is 0), or how many were pending -drain (10s) later.
//
//	go run ./scripts/loadbench -scale                                   # SQLite, full size
//	go run ./scripts/loadbench -scale -database 'postgres://…'           # PostgreSQL, two schemas
//	go run ./scripts/loadbench -scale -pets 10000 -orders 100000 -duration 5s
//	go run ./scripts/loadbench -scale -keep /tmp/lbdata -scenarios name-search,pet-by-id
//
// -server-cpus pins the server to a CPU list (taskset's) in the scale run; run
// loadbench itself under `taskset -c` on the other CPUs, so that wrk and the webhook
// receiver, which loadbench runs, keep off the server's. The hooks table also gives the
// receiver's CPU per order, for an account without pinning (docs/PERFORMANCE.md).
//
// -keep (SQLite) keeps the built files and reuses them in later runs (each run works
// on a copy); delete the folder when the schema changes. -scenarios takes the scale
// run's names too, and hooks-0, hooks-1, hooks-10, hooks-100, hooks-1-50ms,
// hooks-10-50ms.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/servetest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// scenario is one load: the wrk script that makes its requests.
type scenario struct {
	name, what string
	lua        string
}

// The scenarios. PET is the hot pet; LO and HI bound the ids of the 1,000 pets.
var scenarios = []scenario{
	{"pet-by-id", "GET /v1/pets/{id}, one pet", `
request = function() return wrk.format("GET", "/v1/pets/" .. PET) end`},
	{"page-of-20", "GET /v1/pets?limit=20", `
request = function() return wrk.format("GET", "/v1/pets?limit=20") end`},
	{"orders-hot", "POST /v1/store/orders, all on one pet", `
local body = '{"petId":' .. PET .. ',"quantity":1}'
request = function() return wrk.format("POST", "/v1/store/orders", nil, body) end`},
	{"orders-spread", "POST /v1/store/orders, over 1,000 pets", `
request = function()
  return wrk.format("POST", "/v1/store/orders", nil, '{"petId":' .. math.random(LO, HI) .. ',"quantity":1}')
end`},
	{"mix", "90% GET /v1/pets/{id}, 10% orders, over 1,000 pets", `
request = function()
  local pet = math.random(LO, HI)
  if math.random(10) == 1 then
    return wrk.format("POST", "/v1/store/orders", nil, '{"petId":' .. pet .. ',"quantity":1}')
  end
  return wrk.format("GET", "/v1/pets/" .. pet)
end`},
}

// result is one scenario's line of the table.
type result struct {
	Scenario string  `json:"scenario"`
	What     string  `json:"what"`
	Store    string  `json:"store"`
	Database string  `json:"database,omitempty"` // the scale run's small or large database
	Requests int     `json:"requests"`
	RPS      float64 `json:"requestsPerSecond"`
	P50ms    float64 `json:"p50Ms"`
	P99ms    float64 `json:"p99Ms"`
	Non2xx   int     `json:"non2xx"`
	CPU      float64 `json:"serverCpuPercent"`
	// CPUPerRequest is the server's CPU time (user and system) over the measured load
	// divided by the requests wrk counted, in microseconds: on a machine shared with
	// other work it moves less than req/s does.
	CPUPerRequest float64 `json:"serverCpuMicrosPerRequest"`
	PeakRSSMB     float64 `json:"peakRssMiB"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	database := fs.String("database", "", "postgres:// URL (a new schema is made and dropped); empty: a temporary SQLite file")
	duration := fs.Duration("duration", 10*time.Second, "length of each measured load")
	warmup := fs.Duration("warmup", 2*time.Second, "load before each measurement")
	conns := fs.Int("connections", 64, "wrk connections")
	threads := fs.Int("threads", 2, "wrk threads")
	only := fs.String("scenarios", "", "comma list of scenarios to run (default: all)")
	out := fs.String("out", "loadbench.json", "where to write the results as JSON")
	scale := fs.Bool("scale", false, "the scale run: reads on a small and a large database as ratios, then webhooks (see the package comment)")
	pets := fs.Int("pets", 100_000, "-scale: pets in the large database")
	orders := fs.Int("orders", 1_000_000, "-scale: orders in the large database")
	smallPets := fs.Int("small-pets", 1_000, "-scale: pets in the small database")
	smallOrders := fs.Int("small-orders", 10_000, "-scale: orders in the small database")
	rounds := fs.Int("rounds", 1, "-scale: rounds of small and large runs, alternating; medians are shown")
	drain := fs.Duration("drain", 10*time.Second, "-scale: how long to wait after the orders for the webhook backlog to clear")
	binary := fs.String("binary", "", "a petstore binary to measure instead of building ./cmd/petstore (to compare two builds in alternation)")
	profile := fs.String("profile", "", "-scale: write a CPU profile of the server during each webhook scenario's load into this folder (<scenario>.pprof)")
	serverCPUs := fs.String("server-cpus", "", "-scale: pin the server to these CPUs (taskset's list, e.g. 0); run loadbench itself under taskset -c 1 so that wrk and the webhook receiver keep to the other (docs/PERFORMANCE.md)")
	keep := fs.String("keep", "", "-scale on SQLite: keep the built databases in this folder and reuse them in later runs (delete it when the schema changes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sc := &scaleConfig{
		database: *database, rounds: max(1, *rounds), drain: *drain, keep: *keep, only: *only, out: *out, profile: *profile, serverCPUs: *serverCPUs,
		small: shape{"small", *smallPets, *smallOrders}, large: shape{"large", *pets, *orders},
		stdout: stdout, stderr: stderr,
	}
	if *scale {
		for _, s := range []shape{sc.small, sc.large} {
			if err := s.check(); err != nil {
				return err
			}
		}
		if *keep != "" && *database != "" {
			return errors.New("-keep is for SQLite only")
		}
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		return errors.New("wrk is missing: apt-get install -y wrk")
	}
	dir, err := os.MkdirTemp("", "loadbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	bin := *binary
	if bin == "" {
		bin = filepath.Join(dir, "petstore")
		fmt.Fprintln(stderr, "building ./cmd/petstore")
		if err := servetest.Build(ctx, bin); err != nil {
			return err
		}
	}
	b := &bench{dir: dir, threads: *threads, conns: *conns, duration: *duration, warmup: *warmup, stderr: stderr}
	if *scale {
		sc.bin, sc.logs = bin, filepath.Join(dir, "serve.log")
		return runScale(ctx, b, sc)
	}
	return runScenarios(ctx, b, bin, *database, *only, *out, stdout)
}

// runScenarios measures the scenarios named in only (all when empty) on a server
// with 1,000 pets, on a new schema of database or, when it is empty, on a new SQLite
// file; it prints their table and writes them to out.
func runScenarios(ctx context.Context, b *bench, bin, database, only, out string, stdout io.Writer) error {
	store, dsn := "sqlite", filepath.Join(b.dir, "bench.db")
	if database != "" {
		store = "postgres"
		var drop func()
		var err error
		if dsn, drop, err = newSchema(ctx, database, ""); err != nil {
			return err
		}
		defer drop()
	}
	key, err := exec.CommandContext(ctx, bin, "keys", "create", "--create", "--email", "bench@example.com", "--role", "admin", "--database", dsn).Output()
	if err != nil {
		return fmt.Errorf("keys create: %w", err)
	}
	srv, err := start(ctx, bin, dsn, filepath.Join(b.dir, "serve.log"))
	if err != nil {
		return err
	}
	defer srv.stop()
	c := &client{base: srv.base, key: strings.TrimSpace(string(key))}
	fmt.Fprintln(b.stderr, "making 1,000 pets with stock")
	hot, lo, hi, err := c.seed(ctx, 1000)
	if err != nil {
		return err
	}

	vars := fmt.Sprintf("PET, LO, HI = %d, %d, %d\nwrk.headers[\"Authorization\"] = \"Bearer %s\"\n", hot, lo, hi, c.key)
	var results []result
	for _, sc := range scenarios {
		if only != "" && !contains(strings.Split(only, ","), sc.name) {
			continue
		}
		r, err := b.measure(ctx, srv, sc, vars, b.warmup)
		if err != nil {
			return err
		}
		r.Store = store
		results = append(results, r)
	}

	fmt.Fprintf(stdout, "petstore as shipped on %s: wrk -t%d -c%d, %v per scenario after %v of warm-up\n\n", store, b.threads, b.conns, b.duration, b.warmup)
	fmt.Fprintln(stdout, "| scenario | store | req/s | p50 ms | p99 ms | non-2xx | server CPU | peak RSS |")
	fmt.Fprintln(stdout, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Fprintf(stdout, "| %s | %s | %.0f | %.2f | %.2f | %d | %.0f%% | %.0f MiB |\n",
			r.Scenario, r.Store, r.RPS, r.P50ms, r.P99ms, r.Non2xx, r.CPU, r.PeakRSSMB)
	}
	if err := writeJSON(out, results); err != nil {
		return err
	}
	// Refusals are cheaper than the work they refuse: a scenario with any measures
	// something else, and its numbers must not be quoted.
	var refused []string
	for _, r := range results {
		if r.Non2xx > 0 {
			refused = append(refused, fmt.Sprintf("%s (%d)", r.Scenario, r.Non2xx))
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("answers that were not 2xx in %s: those figures measure refusals", strings.Join(refused, ", "))
	}
	return nil
}

func writeJSON(file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// bench is what every measured load shares.
type bench struct {
	dir              string
	threads, conns   int
	duration, warmup time.Duration
	stderr           io.Writer
}

// measure drives scenario sc against srv with wrk, after warmup of the same load;
// vars is Lua that sets the globals the scenario's script reads.
func (b *bench) measure(ctx context.Context, srv *server, sc scenario, vars string, warmup time.Duration) (result, error) {
	script := filepath.Join(b.dir, sc.name+".lua")
	lua := vars + "wrk.headers[\"Content-Type\"] = \"application/json\"\n" + sc.lua + "\n"
	if err := os.WriteFile(script, []byte(lua), 0o600); err != nil {
		return result{}, err
	}
	wrk := func(d time.Duration) ([]byte, error) {
		out, err := exec.CommandContext(ctx, "wrk", "-t"+strconv.Itoa(b.threads), "-c"+strconv.Itoa(b.conns),
			"-d"+wrkDuration(d), "--latency", "-s", script, srv.base).Output()
		if e := (*exec.ExitError)(nil); errors.As(err, &e) {
			err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(append(out, e.Stderr...)))
		}
		return out, err
	}
	fmt.Fprintf(b.stderr, "%s: %s\n", sc.name, sc.what)
	if warmup > 0 {
		if _, err := wrk(warmup); err != nil {
			return result{}, fmt.Errorf("wrk: %w", err)
		}
	}
	srv.resetPeakRSS()
	cpu0 := srv.cpu()
	start := time.Now()
	text, err := wrk(b.duration)
	if err != nil {
		return result{}, fmt.Errorf("wrk: %w", err)
	}
	used := srv.cpu() - cpu0
	cpu := used.Seconds() / time.Since(start).Seconds() * 100
	r := parseWrk(string(text))
	r.Scenario, r.What, r.CPU, r.PeakRSSMB = sc.name, sc.what, cpu, srv.peakRSS()
	if r.Requests > 0 {
		r.CPUPerRequest = float64(used.Microseconds()) / float64(r.Requests)
	}
	return r, nil
}

// wrkDuration spells d as wrk reads it: whole seconds, at least one ("1m0s" and
// "500ms" are usage errors to it).
func wrkDuration(d time.Duration) string {
	return strconv.Itoa(max(1, int(d.Round(time.Second).Seconds()))) + "s"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if strings.TrimSpace(v) == s {
			return true
		}
	}
	return false
}

// server is the running binary.
type server struct {
	*servetest.Process
	base  string
	admin string // the operator port, when the run asked for one
}

// start runs `petstore serve` on dsn with its defaults but for the flags the
// benchmark needs and extra, and waits until it answers.
func start(ctx context.Context, bin, dsn, logFile string, extra ...string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child has its own copy
	args := append([]string{"--addr", addr, "--database", dsn, "--no-bootstrap", "--rate-limit", "0"}, extra...)
	p, err := servetest.Serve(bin, log, 30*time.Second, args...)
	if err != nil {
		return nil, err
	}
	return &server{Process: p, base: "http://" + addr}, nil
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (s *server) stop() { s.Stop(10 * time.Second) }

// cpu is the CPU time the server has used (user and system), from /proc.
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.Cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ is 100 on Linux
}

// resetPeakRSS starts the peak resident memory afresh (Linux: clear_refs 5).
func (s *server) resetPeakRSS() {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.Cmd.Process.Pid), []byte("5"), 0)
}

// peakRSS is the peak resident memory since the last reset, in MiB.
func (s *server) peakRSS() float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.Cmd.Process.Pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// client makes the benchmark's data through the API.
type client struct {
	base, key string
}

func (c *client) call(ctx context.Context, method, path, body string) (map[string]any, error) {
	r, err := http.NewRequestWithContext(ctx, method, c.base+"/v1"+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Authorization", "Bearer "+c.key)
	r.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNoContent {
		return nil, nil
	}
	var v map[string]any
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		return nil, fmt.Errorf("%s %s: %d", method, path, res.StatusCode)
	}
	if res.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %d %v", method, path, res.StatusCode, v["message"])
	}
	return v, nil
}

// seed makes a category and n pets with a large stock, and returns the id of the
// first (the hot pet) and the range of the ids.
func (c *client) seed(ctx context.Context, n int) (hot, lo, hi int64, err error) {
	cat, err := c.call(ctx, "POST", "/categories", `{"name":"Bench"}`)
	if err != nil {
		return 0, 0, 0, err
	}
	ids := make([]int64, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			// A price: a pet without one cannot be ordered (409), and a run of refusals
			// measures nothing.
			p, err := c.call(ctx, "POST", "/pets", fmt.Sprintf(`{"name":"Pet %d","categoryId":%v,"price":%d}`, i, cat["id"], 100+i%900))
			if err != nil {
				errs <- err
				return
			}
			ids[i] = int64(p["id"].(float64))
			if _, err := c.call(ctx, "PUT", fmt.Sprintf("/store/inventory/%d", ids[i]), `{"quantity":1000000}`); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, 0, err
	}
	lo, hi = ids[0], ids[0]
	for _, id := range ids {
		lo, hi = min(lo, id), max(hi, id)
	}
	if hi-lo+1 != int64(n) {
		return 0, 0, 0, fmt.Errorf("the pets' ids are not consecutive (%d to %d)", lo, hi)
	}
	return lo, lo, hi, nil
}

var requestsLine = regexp.MustCompile(`^\s*([0-9]+) requests in `)

var latencyLine = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)

// parseWrk reads wrk's --latency output.
func parseWrk(text string) result {
	var r result
	for _, line := range strings.Split(text, "\n") {
		if m := requestsLine.FindStringSubmatch(line); m != nil {
			r.Requests, _ = strconv.Atoi(m[1])
		}
		if v, ok := strings.CutPrefix(line, "Requests/sec:"); ok {
			r.RPS, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Non-2xx or 3xx responses:"); ok {
			r.Non2xx, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	for _, m := range latencyLine.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		switch m[3] {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		}
		if m[1] == "50" {
			r.P50ms = v
		} else {
			r.P99ms = v
		}
	}
	return r
}

// newSchema makes a new schema in the database at dbURL (pgtest.NewSchema) and
// returns a URL whose search_path is that schema, and a function that drops it. name
// tells apart the schemas of one run.
func newSchema(ctx context.Context, dbURL, name string) (string, func(), error) {
	u, drop, err := pgtest.NewSchema(ctx, dbURL, "loadbench_"+name)
	if err != nil {
		return "", nil, err
	}
	return u, func() { _ = drop() }, nil
}
