package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/webhook"
)

// TestWebhookVerificationSamples runs the receivers the docs give (Node.js crypto,
// Python hmac, Go) and delivers to each with the service's own sender: a delivery
// signed with the endpoint's secret is taken (2xx) and handled once however often it
// comes, also while a rotated secret overlaps; one signed with another secret, with a
// stale timestamp or with a changed body is refused. Then each takes the deliveries of
// the real service: a test event, an order's event, and a test event after a rotation.
func TestWebhookVerificationSamples(t *testing.T) {
	samples := []struct {
		name, tool string
		args       []string
	}{
		{"JavaScript", "node", []string{filepath.Join("testdata", "webhooks", "receiver.mjs")}},
		{"Python", "python3", []string{filepath.Join("testdata", "webhooks", "receiver.py")}},
		{"Go", "", nil}, // built below: `go run` would leave its child running
	}
	sender := webhook.NewSender(webhook.SenderOptions{Timeout: 5 * time.Second, AllowPrivate: true})
	secret, old := []byte("whsec_current"), []byte("whsec_previous")
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			if s.tool == "" {
				s.tool = filepath.Join(t.TempDir(), "receiver")
				build := exec.Command("go", "build", "-o", s.tool, "./"+filepath.Join("testdata", "webhooks", "go"))
				if out, err := build.CombinedOutput(); err != nil {
					t.Fatalf("go build the Go receiver: %v\n%s", err, out)
				}
			} else if _, err := exec.LookPath(s.tool); err != nil {
				needTool(t, s.tool, "is not on PATH")
			}
			url, printed := startReceiver(t, s.tool, s.args, secret)
			ctx := context.Background()
			body := func(id string) []byte {
				return []byte(fmt.Sprintf(`{"id":%q,"type":"order.placed","createdAt":"2026-11-23T12:00:00Z","data":{"id":1,"petId":1,"quantity":2,"complete":false,"accountId":2}}`, id))
			}
			deliveries := []struct {
				name    string
				id      string
				body    []byte
				at      time.Time
				secrets [][]byte
				taken   bool
			}{
				{"signed with the secret", "evt_1", body("evt_1"), time.Now(), [][]byte{secret}, true},
				{"the same event again", "evt_1", body("evt_1"), time.Now(), [][]byte{secret}, true},
				{"during a rotation (old and new)", "evt_2", body("evt_2"), time.Now(), [][]byte{old, secret}, true},
				{"signed with another secret", "evt_3", body("evt_3"), time.Now(), [][]byte{old}, false},
				{"signed ten minutes ago", "evt_4", body("evt_4"), time.Now().Add(-10 * time.Minute), [][]byte{secret}, false},
			}
			for _, d := range deliveries {
				res := sender.Send(ctx, url, d.id, d.body, d.at, d.secrets...)
				if res.Err != nil || res.OK() != d.taken {
					t.Errorf("%s: status %d, err %v; want taken=%v", d.name, res.Status, res.Err, d.taken)
				}
			}
			// A body changed after signing.
			signed := webhook.Sign(body("evt_5"), time.Now(), secret)
			if ok := postRaw(t, url, signed, strings.Replace(string(body("evt_5")), `"quantity":2`, `"quantity":20`, 1)); ok {
				t.Error("a changed body was taken")
			}
			want := []string{"order.placed evt_1", "order.placed evt_2"}
			for _, w := range want {
				select {
				case line := <-printed:
					if line != w {
						t.Fatalf("the receiver printed %q, want %q", line, w)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("the receiver did not print %q", w)
				}
			}
			select {
			case line := <-printed:
				t.Fatalf("the receiver handled more: %q", line)
			case <-time.After(200 * time.Millisecond):
			}

			// The real service: an endpoint at a receiver started with its secret gets a
			// test event and an order's event, and keeps getting them after a rotation
			// (during the overlap the old secret still signs).
			srv := startServer(t, "--webhooks-allow-private")
			port := freePort(t)
			var hook struct {
				ID     int64  `json:"id"`
				Secret string `json:"secret"`
			}
			srv.call(t, srv.AdminKey, "POST", "/webhooks", map[string]any{
				"url": fmt.Sprintf("http://127.0.0.1:%d/hooks", port), "events": []string{"order.placed"},
			}, http.StatusCreated, &hook)
			_, printed = startReceiverOn(t, s.tool, s.args, []byte(hook.Secret), port)
			expect := func(prefix string) {
				t.Helper()
				select {
				case line := <-printed:
					if !strings.HasPrefix(line, prefix) {
						t.Fatalf("the receiver printed %q, want %q…", line, prefix)
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("the receiver did not print %q…", prefix)
				}
			}
			var test struct {
				EventID string `json:"eventId"`
			}
			srv.call(t, srv.AdminKey, "POST", fmt.Sprintf("/webhooks/%d/test", hook.ID), nil, http.StatusAccepted, &test)
			expect("webhook.test " + test.EventID)
			var cat, pet struct {
				ID int64 `json:"id"`
			}
			srv.call(t, srv.AdminKey, "POST", "/categories", map[string]any{"name": "Hooks " + s.name}, http.StatusCreated, &cat)
			srv.call(t, srv.AdminKey, "POST", "/pets", map[string]any{"name": "Rex", "categoryId": cat.ID, "price": 1999}, http.StatusCreated, &pet)
			srv.call(t, srv.AdminKey, "PUT", fmt.Sprintf("/store/inventory/%d", pet.ID), map[string]any{"quantity": 3}, http.StatusOK, nil)
			srv.call(t, srv.CustomerKey, "POST", "/store/orders", map[string]any{"petId": pet.ID, "quantity": 1}, http.StatusCreated, nil)
			expect("order.placed evt_")
			srv.call(t, srv.AdminKey, "POST", fmt.Sprintf("/webhooks/%d/rotate-secret", hook.ID), nil, http.StatusOK, nil)
			srv.call(t, srv.AdminKey, "POST", fmt.Sprintf("/webhooks/%d/test", hook.ID), nil, http.StatusAccepted, &test)
			expect("webhook.test " + test.EventID)
		})
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startReceiver runs a sample receiver on a free port and returns its URL and the
// lines it prints after "listening".
func startReceiver(t *testing.T, tool string, args []string, secret []byte) (string, <-chan string) {
	t.Helper()
	return startReceiverOn(t, tool, args, secret, freePort(t))
}

// startReceiverOn is startReceiver on a given port.
func startReceiverOn(t *testing.T, tool string, args []string, secret []byte, port int) (string, <-chan string) {
	t.Helper()
	cmd := exec.Command(tool, args...)
	cmd.Env = append(os.Environ(), "PETSTORE_WEBHOOK_SECRET="+string(secret), fmt.Sprintf("PORT=%d", port))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("%s wrote:\n%s", tool, stderr.String())
		}
	})
	lines := make(chan string, 16)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "listening" {
				close(ready)
				continue
			}
			lines <- sc.Text()
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s %v did not start listening", tool, args) // Cleanup shows what it wrote
	}
	return fmt.Sprintf("http://127.0.0.1:%d/hooks", port), lines
}

// postRaw posts body with a signature header made for another body, as a tamperer
// would, and reports whether the receiver took it.
func postRaw(t *testing.T, url, signature, body string) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.SignatureHeader, signature)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode/100 == 2
}

// TestTheDocsQuoteTheReceivers checks that the verify functions docs/USING.md quotes
// are, byte for byte, those of the receivers this file tests.
func TestTheDocsQuoteTheReceivers(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "docs", "USING.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Webhooks and the event feed\n")
	if !ok {
		t.Fatal("docs/USING.md has no Webhooks section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	files := map[string]string{
		"js":     filepath.Join("testdata", "webhooks", "receiver.mjs"),
		"python": filepath.Join("testdata", "webhooks", "receiver.py"),
		"go":     filepath.Join("testdata", "webhooks", "go", "main.go"),
	}
	found := 0
	for _, block := range strings.Split(section, "\n  ```")[1:] {
		lang, code, ok := strings.Cut(block, "\n")
		file, quoted := files[lang]
		if !ok || !quoted {
			continue
		}
		found++
		var lines []string
		for _, l := range strings.Split(code, "\n") {
			lines = append(lines, strings.TrimPrefix(l, "  "))
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if quote := strings.Join(lines, "\n"); !strings.Contains(string(src), quote) {
			t.Errorf("docs/USING.md's %s quote is not in %s:\n%s", lang, file, quote)
		}
	}
	if found != len(files) {
		t.Errorf("found %d quotes in the Webhooks section of docs/USING.md, want %d", found, len(files))
	}
}
