package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/media/phototest"
)

// A client that sends its body slower than --read-timeout allows is told that the
// request timed out (408 request_timeout, and the connection closes), not that its
// body is invalid; nothing is created. The client is a real TCP connection that
// trickles the body a byte at a time: a JSON body, and a photo upload's image.
func TestABodySlowerThanTheReadTimeoutIsA408(t *testing.T) {
	base, stdout := startServe(t, noEnv, "--database", filepath.Join(t.TempDir(), "p.db"), "--admin-addr", "off",
		"--read-timeout", "1s")
	key := keyPattern.FindString(stdout.String())
	var cat, pet struct{ ID int64 }
	mustCall(t, base+"/v1", key, "POST", "/categories", `{"name":"Dogs"}`, 201, &cat)
	mustCall(t, base+"/v1", key, "POST", "/pets", fmt.Sprintf(`{"name":"Rex","categoryId":%d}`, cat.ID), 201, &pet)
	tests := []struct {
		name, path, contentType, body string
		made                          func() bool // whether the request made something after all
	}{
		{"a category", "/v1/categories", "application/json", `{"name":"Slowpokes","description":"arrived late"}`, func() bool {
			_, list := get(t, base+"/v1/categories", key)
			return strings.Contains(string(list), "Slowpokes")
		}},
		{"a photo", fmt.Sprintf("/v1/pets/%d/photos", pet.ID), "image/png", string(phototest.PNG(t, 4, 4)), func() bool {
			_, got := get(t, fmt.Sprintf("%s/v1/pets/%d", base, pet.ID), key)
			return !strings.Contains(string(got), `"photos":[]`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slowRequest(t, base, key, tt.path, tt.contentType, tt.body)
			if tt.made() {
				t.Errorf("after the 408, %s was made", tt.name)
			}
		})
	}
}

// slowRequest sends a POST whose body trickles in a byte every 100 ms, and checks
// that the answer is the 408 of --read-timeout 1s, soon after it, closing the
// connection.
func slowRequest(t *testing.T, base, key, path, contentType, body string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: petstore\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: %s\r\nContent-Length: %d\r\n\r\n", path, key, contentType, len(body))
	start := time.Now()
	go func() {
		for i := range len(body) {
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return // the server answered and closed
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	var e struct {
		Code, Message string
		Status        int
	}
	if err := json.Unmarshal(raw, &e); err != nil || res.StatusCode != http.StatusRequestTimeout || e.Code != "request_timeout" || e.Status != 408 {
		t.Fatalf("a body slower than the read timeout: %d %s, want 408 request_timeout", res.StatusCode, raw)
	}
	if !strings.Contains(e.Message, "1s") || !res.Close {
		t.Errorf("the 408 says %q (want the time allowed) and closes the connection: %v", e.Message, res.Close)
	}
	if took > 4*time.Second {
		t.Errorf("the answer came after %v, want soon after the 1 s allowed", took)
	}
}
