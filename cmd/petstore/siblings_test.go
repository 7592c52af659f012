package main

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAWebhookNeverReachesASiblingInstance runs a deployment of three binaries on one
// database, all with --webhooks-allow-private: B listens where a second instance on
// the machine would (its API on 8080-8089, its operator port on 6060-6069); A1 runs
// with the default --webhooks-deny, A2 with a list that names B's ports alone. A
// webhook of A1 or A2 aimed at B's profiler or API is refused, by address when it is
// made and by name at every delivery, while a receiver on another loopback port still
// gets its deliveries.
func TestAWebhookNeverReachesASiblingInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildPetstore(t)
	dsn := filepath.Join(t.TempDir(), "p.db")
	key := adminKey(t, bin, dsn)
	common := []string{"--database", dsn, "--no-bootstrap", "--rate-limit", "0", "--webhooks-allow-private"}
	bAPI, bOp := freeAddrIn(t, 8080, 8089), freeAddrIn(t, 6060, 6069)
	startBinary(t, bin, append([]string{"--addr", bAPI, "--admin-addr", bOp}, common...)...)
	_, apiPort, _ := net.SplitHostPort(bAPI)
	_, opPort, _ := net.SplitHostPort(bOp)

	for name, deny := range map[string][]string{
		"the default list":        nil,
		"a list naming B's ports": {"--webhooks-deny", fmt.Sprintf("127.0.0.1:%s,[::1]:%s,%s", apiPort, apiPort, opPort)},
	} {
		t.Run(name, func(t *testing.T) {
			addr := freeAddr(t)
			startBinary(t, bin, append(append([]string{"--addr", addr, "--admin-addr", freeAddr(t)}, common...), deny...)...)
			api := adminClient{t: t, base: "http://" + addr + "/v1", key: key}
			for _, target := range []string{bOp + "/debug/pprof/no-such-profile", bAPI + "/v1/pets"} {
				code, body := api.call("POST", "/webhooks", fmt.Sprintf(`{"url":"http://%s","events":["*"]}`, target))
				if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body), "must not be an address of this service or of its deployment") {
					t.Errorf("an endpoint at B's %s by address: %d %v, want 400", target, code, body)
				}
				byName := "http://localhost:" + strings.TrimPrefix(target, "127.0.0.1:")
				if got := testDelivery(api, byName); got != "the endpoint could not be reached" {
					t.Errorf("a test delivery to B's %s: %q, want it refused at the dial", byName, got)
				}
			}
			r := newReceiver(t)
			hook := api.subscribe(r)
			api.must(http.StatusAccepted, "POST", fmt.Sprintf("/webhooks/%d/test", hook), "")
			r.waitFor("webhook.test", 1, 20*time.Second)
		})
	}
}

// testDelivery makes an endpoint at url, sends it a test event and returns what its
// first attempt found: the delivery's lastError (a success would leave none).
func testDelivery(api adminClient, url string) string {
	api.t.Helper()
	w := api.must(http.StatusCreated, "POST", "/webhooks", fmt.Sprintf(`{"url":%q,"events":["*"]}`, url))
	id := int64(w["id"].(float64))
	api.must(http.StatusAccepted, "POST", fmt.Sprintf("/webhooks/%d/test", id), "")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if page := api.deliveries(id); len(page) == 1 && page[0]["lastError"] != nil {
			return fmt.Sprint(page[0]["lastError"])
		}
	}
	api.t.Fatalf("the test delivery to %s made no attempt in 20 s", url)
	return ""
}

// freeAddrIn finds a loopback port from lo to hi that is free now, from the top: the
// bottom ones are the defaults other servers on the machine take.
func freeAddrIn(t *testing.T, lo, hi int) string {
	t.Helper()
	for p := hi; p >= lo; p-- {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			ln.Close()
			return ln.Addr().String()
		}
	}
	t.Fatalf("no port from %d to %d is free on loopback", lo, hi)
	return ""
}
