package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/servetest"
)

// TestSIGTERMLetsInFlightRequestsFinish runs the real binary, starts requests whose
// bodies arrive slowly, sends SIGTERM while they are in flight, and checks that every
// one of them is answered and that the process then exits cleanly.
func TestSIGTERMLetsInFlightRequestsFinish(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildPetstore(t)
	addr := freeAddr(t)
	cmd, err := servetest.Serve(bin, os.Stderr, 30*time.Second, "--addr", addr, "--database", filepath.Join(dir, "p.db"), "--shutdown-grace", "10s")
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Kill()

	// The first start prints the admin key, then the address.
	key := keyPattern.FindString(cmd.Banner)
	if key == "" {
		t.Fatal("no key printed")
	}

	const slow = 4
	results := make(chan int, slow)
	started := make(chan struct{}, slow)
	for range slow {
		go func() {
			pr, pw := io.Pipe()
			go func() {
				pw.Write([]byte(`{"message":`))
				started <- struct{}{}
				time.Sleep(700 * time.Millisecond) // SIGTERM arrives meanwhile
				pw.Write([]byte(`"still here"}`))
				pw.Close()
			}()
			r, _ := http.NewRequestWithContext(context.Background(), "POST", "http://"+addr+"/v1/messages", pr)
			r.Header.Set("Authorization", "Bearer "+key)
			r.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Errorf("in-flight request failed: %v", err)
				results <- 0
				return
			}
			res.Body.Close()
			results <- res.StatusCode
		}()
	}
	for range slow {
		<-started
	}
	time.Sleep(150 * time.Millisecond) // let the server read the first bytes
	if err := cmd.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range slow {
		if code := <-results; code != http.StatusCreated {
			t.Errorf("an in-flight request got %d, want 201", code)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("petstore exited with %v after SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("petstore did not exit after SIGTERM")
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Fatal("still accepting connections after shutdown")
	}
}
