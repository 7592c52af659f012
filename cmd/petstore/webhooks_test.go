package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/postgres/pgtest"
	"github.com/acme-pets/petstore/internal/webhook"
)

// receiver is a webhook endpoint for the tests: it checks every delivery's signature
// and records what arrived, in order. When hang is set, the first delivery to arrive
// is taken and never answered (until the test ends).
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	secret []byte
	hang   bool
	// slow, when set, holds the first delivery this long before answering 204.
	slow time.Duration
	got  []delivered
	hung chan struct{} // closed when a delivery hangs
	done chan struct{}
}

// delivered is one delivery as the receiver saw it.
type delivered struct {
	id, typ string
	object  int64 // data.id (an order's id), or data.petId
	at      time.Time
	// signature is the Petstore-Signature header, and body what it signs.
	signature string
	body      []byte
	// traceparent is the delivery's W3C traceparent header, "" when it had none.
	traceparent string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, hung: make(chan struct{}), done: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() { close(r.done); r.srv.CloseClientConnections(); r.srv.Close() })
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	r.mu.Lock()
	secret, hang := r.secret, r.hang
	r.mu.Unlock()
	if ua, ct := req.Header.Get("User-Agent"), req.Header.Get("Content-Type"); ua != "petstore-webhooks/1" || ct != "application/json" {
		r.t.Errorf("a delivery came with User-Agent %q and Content-Type %q, want the document's", ua, ct)
	}
	if err := webhook.Verify(req.Header.Get("Petstore-Signature"), body, secret, time.Now(), webhook.DefaultTolerance); err != nil {
		r.t.Errorf("a delivery's signature does not verify: %v (%s)", err, body)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var e struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			ID    int64 `json:"id"`
			PetID int64 `json:"petId"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.ID == "" || e.ID != req.Header.Get("Petstore-Event-Id") {
		r.t.Errorf("a delivery is not an event with its id in Petstore-Event-Id: %v %s", err, body)
	}
	if r.slow > 0 {
		r.mu.Lock()
		first := r.hang
		r.hang = false
		r.mu.Unlock()
		if first {
			close(r.hung)
			time.Sleep(r.slow)
		}
	} else if hang {
		// Only the first delivery hangs: two arriving together both read hang, and
		// the one that does not take it is answered as usual.
		r.mu.Lock()
		first := r.hang
		r.hang = false
		r.mu.Unlock()
		if first {
			close(r.hung)
			<-r.done
			return
		}
	}
	r.mu.Lock()
	r.got = append(r.got, delivered{id: e.ID, typ: e.Type, object: max(e.Data.ID, e.Data.PetID), at: time.Now(),
		signature: req.Header.Get("Petstore-Signature"), body: body, traceparent: req.Header.Get("Traceparent")})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// received returns the deliveries of type typ so far, in the order they arrived.
func (r *receiver) received(typ string) []delivered {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []delivered
	for _, d := range r.got {
		if d.typ == typ {
			out = append(out, d)
		}
	}
	return out
}

// waitFor waits until n deliveries of typ arrived, or fails the test.
func (r *receiver) waitFor(typ string, n int, within time.Duration) []delivered {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := r.received(typ)
		if len(distinct(got)) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d distinct %s events arrived within %v, want %d", len(distinct(got)), typ, within, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// distinct counts the deliveries of each event id.
func distinct(ds []delivered) map[string]int {
	m := map[string]int{}
	for _, d := range ds {
		m[d.id]++
	}
	return m
}

// adminClient calls the API of a running binary with an admin key.
type adminClient struct {
	t    *testing.T
	base string // http://host:port/v1
	key  string
}

func (c adminClient) call(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var v map[string]any
	json.Unmarshal(raw, &v)
	return res.StatusCode, v
}

func (c adminClient) must(want int, method, path, body string) map[string]any {
	c.t.Helper()
	code, v := c.call(method, path, body)
	if code != want {
		c.t.Fatalf("%s %s: %d %v, want %d", method, path, code, v, want)
	}
	return v
}

// subscribe creates an endpoint at the receiver for order.placed and gives the
// receiver its secret.
func (c adminClient) subscribe(r *receiver) int64 {
	c.t.Helper()
	w := c.must(http.StatusCreated, "POST", "/webhooks", fmt.Sprintf(`{"url":%q,"events":["order.placed"]}`, r.srv.URL+"/hook"))
	r.mu.Lock()
	r.secret = []byte(w["secret"].(string))
	r.mu.Unlock()
	return int64(w["id"].(float64))
}

// pet makes a pet with stock and returns its id.
func (c adminClient) pet(stock int) int64 {
	c.t.Helper()
	cat := c.must(http.StatusCreated, "POST", "/categories", fmt.Sprintf(`{"name":"Hooks %d"}`, time.Now().UnixNano()))
	pet := c.must(http.StatusCreated, "POST", "/pets", fmt.Sprintf(`{"name":"Rex","categoryId":%v,"price":1999}`, cat["id"]))
	id := int64(pet["id"].(float64))
	c.must(http.StatusOK, "PUT", fmt.Sprintf("/store/inventory/%d", id), fmt.Sprintf(`{"quantity":%d}`, stock))
	return id
}

func (c adminClient) order(pet int64) int64 {
	c.t.Helper()
	o := c.must(http.StatusCreated, "POST", "/store/orders", fmt.Sprintf(`{"petId":%d,"quantity":1}`, pet))
	return int64(o["id"].(float64))
}

// deliveryStatuses lists the status and attempts of every delivery of an endpoint.
func (c adminClient) deliveryStatuses(webhookID int64) []string {
	c.t.Helper()
	var out []string
	path := fmt.Sprintf("/webhooks/%d/deliveries?limit=100", webhookID)
	for {
		req, _ := http.NewRequest("GET", c.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+c.key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			c.t.Fatal(err)
		}
		var page []struct {
			Status   string `json:"status"`
			Attempts int    `json:"attempts"`
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || json.Unmarshal(raw, &page) != nil {
			c.t.Fatalf("deliveries: %d %s", res.StatusCode, raw)
		}
		for _, d := range page {
			out = append(out, fmt.Sprintf("%s/%d", d.Status, d.Attempts))
		}
		next := nextLinkPath(res.Header.Get("Link"))
		if next == "" {
			return out
		}
		path = strings.TrimPrefix(next, "/v1")
	}
}

// deliveries returns the first page of an endpoint's deliveries.
func (c adminClient) deliveries(webhookID int64) []map[string]any {
	c.t.Helper()
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/webhooks/%d/deliveries", c.base, webhookID), nil)
	req.Header.Set("Authorization", "Bearer "+c.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var page []map[string]any
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil || res.StatusCode != http.StatusOK {
		c.t.Fatalf("deliveries: %d %v", res.StatusCode, err)
	}
	return page
}

// nextLinkPath reads the target of a Link header's rel="next", or "".
func nextLinkPath(link string) string {
	for _, part := range strings.Split(link, ",") {
		if strings.Contains(part, `rel="next"`) {
			start, end := strings.Index(part, "<"), strings.Index(part, ">")
			if start >= 0 && end > start {
				return part[start+1 : end]
			}
		}
	}
	return ""
}

// adminKey makes an admin key in the database with the binary's own command.
func adminKey(t *testing.T, bin, dsn string) string {
	t.Helper()
	out, err := exec.Command(bin, "keys", "create", "--create", "--email", "ops@example.com", "--role", "admin", "--database", dsn).Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestADeliveryCutByKill9IsMadeAfterARestart kills the binary while a receiver holds
// a delivery unanswered (the others, sent beside it, answered and recorded), restarts
// it on the same database, and checks on both stores that every event arrives, the
// interrupted one again once its lease runs out, with no other repeat.
func TestADeliveryCutByKill9IsMadeAfterARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildPetstore(t)
	stores := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "p.db") },
		"postgres": func(t *testing.T) string { return pgtest.Schema(t, pgtest.URL(t)) },
	}
	for name, dsn := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := dsn(t)
			key := adminKey(t, bin, dsn)
			addr := freeAddr(t)
			args := []string{"--addr", addr, "--admin-addr", "off", "--database", dsn, "--no-bootstrap", "--rate-limit", "0", "--webhooks-allow-private"}
			cmd := startBinary(t, bin, args...)
			api := adminClient{t: t, base: "http://" + addr + "/v1", key: key}
			r := newReceiver(t)
			r.hang = true
			hook := api.subscribe(r)
			pet := api.pet(100)
			var orders []int64
			for range 5 {
				orders = append(orders, api.order(pet))
			}
			select {
			case <-r.hung:
			case <-time.After(30 * time.Second):
				t.Fatal("no delivery reached the receiver in 30 s")
			}
			// The others go beside it, in its window: the kill waits for their
			// records, so that it cuts the hung attempt alone.
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				st := api.deliveryStatuses(hook)
				slices.Sort(st)
				if slices.Equal(st, append([]string{"pending/0"}, slices.Repeat([]string{"succeeded/1"}, len(orders)-1)...)) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("deliveries are %v, want one pending (the hung one), the others succeeded", st)
				}
			}
			cmd.Kill()
			killed := time.Now()

			startBinary(t, bin, args...)
			got := r.waitFor("order.placed", len(orders), webhook.DefaultLease+45*time.Second)
			var objects []int64
			for _, d := range got {
				objects = append(objects, d.object)
			}
			if !slices.Equal(slices.Sorted(slices.Values(objects)), orders) {
				t.Errorf("order.placed arrived for orders %v, want %v, once each", objects, orders)
			}
			// Another process may finish an attempt a moment after the receiver answers.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				st := api.deliveryStatuses(hook)
				if slices.Equal(st, slices.Repeat([]string{"succeeded/1"}, len(orders))) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("deliveries are %v, want every one succeeded at its first recorded attempt", st)
				}
			}
			t.Logf("%s: the delivery cut by kill -9 arrived %v after the kill (lease %v)", name, got[len(got)-1].at.Sub(killed).Round(time.Millisecond), webhook.DefaultLease)
		})
	}
}

// TestSIGTERMLetsADeliveryInFlightEnd stops the binary with SIGTERM while a slow
// receiver holds a delivery: the process waits for the attempt, records it and exits
// cleanly, so that after a restart the delivery stands succeeded at its one attempt
// and the receiver is not sent it again.
func TestSIGTERMLetsADeliveryInFlightEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own database, ports and receiver; it waits on deliveries more than it computes
	bin := buildPetstore(t)
	dsn := filepath.Join(t.TempDir(), "p.db")
	key := adminKey(t, bin, dsn)
	addr := freeAddr(t)
	args := []string{"--addr", addr, "--admin-addr", "off", "--database", dsn, "--no-bootstrap", "--rate-limit", "0", "--webhooks-allow-private"}
	cmd := startBinary(t, bin, args...)
	api := adminClient{t: t, base: "http://" + addr + "/v1", key: key}
	r := newReceiver(t)
	r.hang, r.slow = true, 2*time.Second
	hook := api.subscribe(r)
	order := api.order(api.pet(10))
	select {
	case <-r.hung:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery reached the receiver in 30 s")
	}
	if err := cmd.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("petstore serve exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("petstore serve still runs 40 s after SIGTERM")
	}
	if got := r.received("order.placed"); len(got) != 1 || got[0].object != order {
		t.Fatalf("the receiver got %+v, want the order.placed of order %d once", got, order)
	}
	startBinary(t, bin, args...)
	if st := api.deliveryStatuses(hook); !slices.Equal(st, []string{"succeeded/1"}) {
		t.Errorf("after the restart the deliveries are %v, want the one in flight at SIGTERM succeeded at its one attempt", st)
	}
	time.Sleep(time.Second) // a wrong retry would be due at once
	if got := r.received("order.placed"); len(got) != 1 {
		t.Errorf("the receiver got %d deliveries, want 1", len(got))
	}
}

// TestThreeProcessesOnOnePostgresDeliverEveryOrderOnce runs three binaries on one
// database, places 300 orders through all of them at once, and checks that the
// receiver gets every order.placed exactly once.
func TestThreeProcessesOnOnePostgresDeliverEveryOrderOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own database, ports and receiver; it waits on deliveries more than it computes
	deliverEveryOrderOnce(t, pgtest.Schema(t, pgtest.URL(t)), 3)
}

// TestOneProcessOnSQLiteDeliversEveryOrderOnce is the same on the default store.
func TestOneProcessOnSQLiteDeliversEveryOrderOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own database, ports and receiver; it waits on deliveries more than it computes
	deliverEveryOrderOnce(t, filepath.Join(t.TempDir(), "p.db"), 1)
}

// deliverEveryOrderOnce starts processes binaries on dsn, places 300 orders through
// all of them at once, and checks that the receiver gets every order.placed exactly
// once. It logs the throughput of delivery and the latency from an order's answer to
// its event's arrival, at idle and under the load.
func deliverEveryOrderOnce(t *testing.T, dsn string, processes int) {
	bin := buildPetstore(t)
	key := adminKey(t, bin, dsn)
	var apis []adminClient
	for range processes {
		addr := freeAddr(t)
		startBinary(t, bin, "--addr", addr, "--admin-addr", "off", "--database", dsn, "--no-bootstrap", "--rate-limit", "0", "--webhooks-allow-private")
		apis = append(apis, adminClient{t: t, base: "http://" + addr + "/v1", key: key})
	}
	r := newReceiver(t)
	apis[0].subscribe(r)
	pet := apis[0].pet(10_000)

	// At idle: one order, then its event.
	var idle []time.Duration
	for i := range 5 {
		start := time.Now()
		id := apis[i%processes].order(pet)
		got := r.waitFor("order.placed", i+1, 10*time.Second)
		if got[len(got)-1].object != id {
			t.Fatalf("the last event is of order %d, want %d", got[len(got)-1].object, id)
		}
		idle = append(idle, got[len(got)-1].at.Sub(start))
	}

	const workers, each = 30, 10
	var (
		mu       sync.Mutex
		answered = map[int64]time.Time{}
		wg       sync.WaitGroup
	)
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := apis[(w+i)%processes].order(pet)
				mu.Lock()
				answered[id] = time.Now()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r.waitFor("order.placed", 5+workers*each, 60*time.Second)
	elapsed := time.Since(start)
	time.Sleep(2 * time.Second) // a second delivery of an event would arrive by now
	got := r.received("order.placed")
	for id, n := range distinct(got) {
		if n != 1 {
			t.Errorf("event %s arrived %d times", id, n)
		}
	}
	var lat []time.Duration
	for _, d := range got {
		if at, ok := answered[d.object]; ok {
			lat = append(lat, d.at.Sub(at))
			delete(answered, d.object)
		}
	}
	if len(answered) != 0 {
		t.Fatalf("%d orders have no order.placed delivered", len(answered))
	}
	slices.Sort(lat)
	slices.Sort(idle)
	t.Logf("300 orders through %d processes: every event delivered once; %.0f events/s from the first order to the last delivery (%v)",
		processes, float64(workers*each)/elapsed.Seconds(), elapsed.Round(time.Millisecond))
	t.Logf("latency from the order's 201 to the receiver: idle median %v; under load median %v, p99 %v, max %v",
		idle[len(idle)/2].Round(time.Microsecond), lat[len(lat)/2].Round(time.Microsecond),
		lat[len(lat)*99/100].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
}

// A leaked secret is revoked at once: after a rotation with {"overlapSeconds": 0} the
// next delivery is signed with the new secret only, where a plain rotation signs with
// both for the overlap.
func TestARotationWithNoOverlapStopsTheReplacedSecretSigningAtOnce(t *testing.T) {
	base, stdout := startServe(t, noEnv, "--database", filepath.Join(t.TempDir(), "p.db"), "--admin-addr", "off",
		"--rate-limit", "0", "--webhooks-allow-private")
	api := adminClient{t: t, base: base + "/v1", key: keyPattern.FindString(stdout.String())}
	r := newReceiver(t)
	hook := api.subscribe(r)
	original := r.secret
	rotate := func(body string) []byte {
		t.Helper()
		w := api.must(http.StatusOK, "POST", fmt.Sprintf("/webhooks/%d/rotate-secret", hook), body)
		secret := []byte(w["secret"].(string))
		r.mu.Lock()
		r.secret = secret
		r.mu.Unlock()
		return secret
	}
	// signers sends a test event and reports which of secrets sign its delivery.
	signers := func(n int, secrets ...[]byte) (signed []bool, v1s int) {
		t.Helper()
		api.must(http.StatusAccepted, "POST", fmt.Sprintf("/webhooks/%d/test", hook), "")
		d := r.waitFor("webhook.test", n, 30*time.Second)[n-1]
		for _, s := range secrets {
			signed = append(signed, webhook.Verify(d.signature, d.body, s, time.Now(), webhook.DefaultTolerance) == nil)
		}
		return signed, strings.Count(d.signature, "v1=")
	}

	rotated := rotate("")
	if signed, v1s := signers(1, original, rotated); !signed[0] || !signed[1] || v1s != 2 {
		t.Fatalf("within a plain rotation's overlap, the delivery carries %d v1 (signed by the old secret: %v, the new: %v); want both", v1s, signed[0], signed[1])
	}
	revoking := rotate(`{"overlapSeconds": 0}`)
	if signed, v1s := signers(2, original, rotated, revoking); signed[0] || signed[1] || !signed[2] || v1s != 1 {
		t.Fatalf("after a rotation with no overlap, the delivery carries %d v1, signed by the secrets (original, rotated, new) %v; want the new one only", v1s, signed)
	}
}

// The service's own listeners are never a webhook's receiver, even with
// --webhooks-allow-private: an endpoint at the operator port (pprof) or at the API,
// by address, is refused when it is made; by name, each delivery is refused at the
// dial. The delivery's lastError reads as for any endpoint out of reach: no address,
// and nothing that tells a refused address from a name that does not exist.
func TestWebhooksNeverReachTheServicesOwnListeners(t *testing.T) {
	opAddr := freeAddr(t)
	base, stdout := startServe(t, noEnv, "--database", filepath.Join(t.TempDir(), "p.db"), "--admin-addr", opAddr,
		"--rate-limit", "0", "--webhooks-allow-private")
	api := adminClient{t: t, base: base + "/v1", key: keyPattern.FindString(stdout.String())}
	_, opPort, _ := net.SplitHostPort(opAddr)
	apiAddr := strings.TrimPrefix(base, "http://")
	_, apiPort, _ := net.SplitHostPort(apiAddr)

	for _, addr := range []string{opAddr, apiAddr} {
		code, body := api.call("POST", "/webhooks", fmt.Sprintf(`{"url":"http://%s/debug/pprof/","events":["*"]}`, addr))
		if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body), "must not be an address of this service") {
			t.Errorf("an endpoint at the service's own %s: %d %v, want 400", addr, code, body)
		}
	}
	for _, port := range []string{opPort, apiPort} {
		w := api.must(http.StatusCreated, "POST", "/webhooks", fmt.Sprintf(`{"url":"http://localhost:%s/debug/pprof/profile?seconds=1","events":["*"]}`, port))
		id := int64(w["id"].(float64))
		api.must(http.StatusAccepted, "POST", fmt.Sprintf("/webhooks/%d/test", id), "")
		var lastError any
		for deadline := time.Now().Add(20 * time.Second); lastError == nil; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the test delivery to localhost:%s made no attempt in 20 s", port)
			}
			if page := api.deliveries(id); len(page) == 1 {
				lastError = page[0]["lastError"]
			}
		}
		if lastError != "the endpoint could not be reached" {
			t.Errorf("the delivery to the service's own port %s by name: lastError %q, want the generic reason", port, lastError)
		}
	}
}
