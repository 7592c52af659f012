package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The scale run's webhook part: endpoints subscribed to order.placed, a receiver that
// counts their deliveries, and what the deliveries cost the orders.

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
	// ReceiverCPUPerOrder is loadbench's own CPU time during the load (the receiver's
	// work: wrk is another process) per order, in microseconds: on a 2-core machine
	// the receiver takes the same cores as the server, so what it costs is told apart
	// from what the server's deliveries cost (CPUPerRequest).
	ReceiverCPUPerOrder float64 `json:"receiverCpuMicrosPerOrder"`
	// ReceiverConns counts the connections the receiver accepted during the load: a
	// sender that keeps its connections alive opens few.
	ReceiverConns int64 `json:"receiverConnections"`
}

// printHooks prints the table of the webhook runs.
func (c *scaleConfig) printHooks(b *bench, hooks []hookResult) {
	w := c.stdout
	fmt.Fprintf(w, "\nWebhooks on the small database: endpoints subscribed to order.placed, orders over its pets for %v, then up to %v for the rest\n\n", b.duration, c.drain)
	fmt.Fprintln(w, "| endpoints | receiver | orders/s | p99 ms | server CPU µs/order | receiver CPU µs/order | deliveries/s during | after | delivered / expected | backlog gone after | pending then | peak RSS MiB |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, h := range hooks {
		answers := "at once"
		if h.DelayMs > 0 {
			answers = fmt.Sprintf("in %.0f ms", h.DelayMs)
		}
		if h.Skipped != "" {
			fmt.Fprintf(w, "| %d | %s | skipped: %s |||||||||\n", h.Endpoints, answers, h.Skipped)
			continue
		}
		drained := "not within " + c.drain.String()
		if h.DrainedMs > 0 {
			drained = (time.Duration(h.DrainedMs) * time.Millisecond).String()
		}
		fmt.Fprintf(w, "| %d | %s | %.0f | %.2f | %.1f | %.1f | %.0f | %.0f | %d / %d | %s | %d | %.0f |\n", h.Endpoints, answers,
			h.RPS, h.P99ms, h.CPUPerRequest, h.ReceiverCPUPerOrder, h.DuringPerSec, h.AfterPerSec, h.During+h.After, h.Expected, drained, h.Pending, h.PeakRSSMB)
	}
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
	conns0 := rcv.conns.Load()
	sc := scenario{h.name(), fmt.Sprintf("POST /v1/store/orders with %d endpoints on order.placed, receiver answering after %v", h.endpoints, h.delay), ordersSpread}
	profiled := c.profileDuring(srv, h.name(), b.duration)
	loadStart, self0 := time.Now(), selfCPU()
	r, err := b.measure(ctx, srv, sc, d.vars(), 0) // the reads and orders before warmed the server
	if err != nil {
		return hr, err
	}
	if err := <-profiled; err != nil {
		fmt.Fprintf(c.stderr, "  profile: %v\n", err)
	}
	loadEnd := time.Now()
	hr.result = r
	if r.Requests > 0 {
		hr.ReceiverCPUPerOrder = float64((selfCPU() - self0).Microseconds()) / float64(r.Requests)
	}
	hr.Store, hr.Database = c.store, d.name
	hr.During = int(rcv.count())
	hr.ReceiverConns = rcv.conns.Load() - conns0
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
	// The peak since the load began, the drain (every worker at once) included.
	hr.PeakRSSMB = srv.peakRSS()
	hr.AfterPerSec = float64(hr.After) / time.Since(loadEnd).Seconds()
	fmt.Fprintf(c.stderr, "  %.0f orders/s; %d of %d delivered during the load, %d after; pending %d; server %.0f µs/order, receiver %.0f µs/order, %d connections; peak RSS %.0f MiB\n",
		r.RPS, hr.During, hr.Expected, hr.After, hr.Pending, r.CPUPerRequest, hr.ReceiverCPUPerOrder, hr.ReceiverConns, hr.PeakRSSMB)
	return hr, nil
}

// profileDuring takes a CPU profile of the server for most of a load of length d,
// from its operator port, into c.profile/name.pprof; the channel says how it went
// (nil at once when no profile was asked for).
func (c *scaleConfig) profileDuring(srv *server, name string, d time.Duration) <-chan error {
	done := make(chan error, 1)
	if c.profile == "" || srv.admin == "" {
		done <- nil
		return done
	}
	go func() {
		done <- func() error {
			if err := os.MkdirAll(c.profile, 0o755); err != nil {
				return err
			}
			secs := max(1, int((d - time.Second).Seconds()))
			res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", srv.admin, secs))
			if err != nil {
				return err
			}
			defer res.Body.Close()
			f, err := os.Create(filepath.Join(c.profile, name+".pprof"))
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, res.Body); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}()
	}()
	return done
}

// selfCPU is the CPU time loadbench itself has used (user and system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
	srv   *http.Server
	base  string
	n     atomic.Int64
	conns atomic.Int64 // connections accepted
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
	r.srv.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
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

func (r *receiver) reset() { r.n.Store(0) }

func (r *receiver) close() { r.srv.Close() }
