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
// stale timestamp or with a changed body is refused.
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
		})
	}
}

// startReceiver runs a sample receiver on a free port and returns its URL and the
// lines it prints after "listening".
func startReceiver(t *testing.T, tool string, args []string, secret []byte) (string, <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
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
