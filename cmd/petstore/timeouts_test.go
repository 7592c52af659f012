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
)

// A client that sends its body slower than --read-timeout allows is told that the
// request timed out (408 request_timeout, and the connection closes), not that its
// body is invalid; nothing is created. The client is a real TCP connection that
// trickles the body a byte at a time.
func TestABodySlowerThanTheReadTimeoutIsA408(t *testing.T) {
	base, stdout := startServe(t, noEnv, "--database", filepath.Join(t.TempDir(), "p.db"), "--admin-addr", "off",
		"--read-timeout", "1s")
	key := keyPattern.FindString(stdout.String())
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"Slowpokes","description":"arrived late"}`
	fmt.Fprintf(conn, "POST /v1/categories HTTP/1.1\r\nHost: petstore\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", key, len(body))
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
	if code, list := get(t, base+"/v1/categories", key); code != http.StatusOK || strings.Contains(string(list), "Slowpokes") {
		t.Errorf("after the 408 the categories are %d %s, want none made", code, list)
	}
}
