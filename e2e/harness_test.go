package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/servetest"
)

// setupScript is what installs the tools these tests need.
const setupScript = "scripts/setup-browser-tests"

// enabled is the switch of this package: its tests run a browser, Node.js, Python and
// a race-built binary, more than `go test ./...` should ask of a fresh checkout (or
// fit in go test's default 10-minute timeout on 2 cores), so they run only when
// PETSTORE_E2E=1 (as .ci/run sets it). Then a missing tool fails them.
const enabled = "PETSTORE_E2E"

// skipMessage is what the package says, once, when it does not run.
const skipMessage = "e2e: skipped: the browser and consumer tests run only with " + enabled +
	"=1 (they need node, python3 with requests and chromium: " + setupScript + ")"

// needTool stops the test when a tool is missing: the tests run only under
// PETSTORE_E2E=1, where a missing tool is a failure; the message names the tool and
// the setup script.
func needTool(t testing.TB, tool, problem string) {
	t.Helper()
	t.Fatalf("%s %s; install it with %s (%s=1: a missing tool is a failure)", tool, problem, setupScript, enabled)
}

// binary is the petstore command, built once for the test process (with -race when the
// tests run with -race, so that the server under test is checked too).
var binary = struct {
	once sync.Once
	path string
	err  error
}{}

var buildDir string

func TestMain(m *testing.M) {
	if os.Getenv(enabled) != "1" {
		fmt.Println(skipMessage)
		os.Exit(0)
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func petstoreBinary(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() {
		_, err := exec.LookPath("go")
		if err != nil {
			binary.err = fmt.Errorf("the go command is not on PATH: %w", err)
			return
		}
		if err := statSources(".."); err != nil {
			binary.err = err
			return
		}
		buildDir, err = os.MkdirTemp("", "petstore-e2e-")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(buildDir, "petstore")
		var flags []string
		if raceEnabled {
			flags = append(flags, "-race")
		}
		binary.err = servetest.Build(context.Background(), binary.path, flags...)
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// statSources looks at every source file the binary is built from. The test runs a
// binary it builds, so the go command cannot see what the result depends on; files the
// test itself looks at are part of the key of go test's result cache, so a change to
// any of them (the docs page's script included) runs these tests again.
func statSources(root string) error {
	for _, dir := range []string{"api", "cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			_, err = os.Stat(path)
			return err
		})
		if err != nil {
			return err
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			return err
		}
	}
	return nil
}

// server is a running `petstore serve` on a free loopback port, on its own database
// with the demo data, and two accounts made with `petstore keys create`.
type server struct {
	URL         string // http://127.0.0.1:PORT
	AdminKey    string
	CustomerKey string
	database    string
	bin         string
}

// startServer starts the real binary the way an operator would and stops it when the
// test ends. extra are more serve flags.
func startServer(t *testing.T, extra ...string) *server {
	t.Helper()
	bin := petstoreBinary(t)
	s := &server{database: filepath.Join(t.TempDir(), "petstore.db"), bin: bin}
	s.AdminKey = s.createKey(t, "admin@example.com", "admin")
	s.CustomerKey = s.createKey(t, "customer@example.com", "customer")

	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database", s.database, "--demo", "--no-bootstrap", "--log-level", "warn",
		// Every sample of createAccount and createApiKey signs up from this one address.
		"--credential-limit", "100"}, extra...)
	var stderr bytes.Buffer // read only once the process has exited
	p, err := servetest.Serve(bin, &stderr, 40*time.Second, args[1:]...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			if log := stderr.String(); log != "" {
				t.Logf("server log:\n%s", log)
			}
		}
	})
	s.URL = p.URL
	return s
}

// createKey runs `petstore keys create` and returns the key it prints.
func (s *server) createKey(t *testing.T, email, role string) string {
	t.Helper()
	out, err := exec.Command(s.bin, "keys", "create", "--create", "--email", email, "--role", role, "--database", s.database).Output()
	if err != nil {
		var stderr []byte
		if e := (*exec.ExitError)(nil); errors.As(err, &e) {
			stderr = e.Stderr
		}
		t.Fatalf("petstore keys create --email %s: %v\n%s", email, err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// uploadPhoto adds a PNG photo to a pet with an admin's key and returns its id.
func (s *server) uploadPhoto(t testing.TB, key, petID string, png []byte) string {
	t.Helper()
	req, err := http.NewRequest("POST", s.URL+"/v1/pets/"+petID+"/photos", bytes.NewReader(png))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "image/png")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var p struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("upload a photo of pet %s: %d, %v", petID, res.StatusCode, err)
	}
	return p.ID
}

// call sends one API request (path under /v1) with a Bearer key, or with Basic
// credentials when key has the form "basic:EMAIL:PASSWORD", and decodes a JSON answer
// into out. It fails the test unless the status is want; a 429 is waited out and
// retried, since fixtures are made in bursts and the server limits every key.
func (s *server) call(t testing.TB, key, method, path string, body any, want int, out any) {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequest(method, s.URL+"/v1"+path, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if raw != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if basic, ok := strings.CutPrefix(key, "basic:"); ok {
			email, password, _ := strings.Cut(basic, ":")
			req.SetBasicAuth(email, password)
		} else if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusTooManyRequests && attempt < 5 {
			wait, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 1)) * time.Second)
			continue
		}
		if res.StatusCode != want {
			t.Fatalf("fixture %s %s: got %d, want %d: %s", method, path, res.StatusCode, want, got)
		}
		if out != nil {
			if err := json.Unmarshal(got, out); err != nil {
				t.Fatalf("fixture %s %s: decode %s: %v", method, path, got, err)
			}
		}
		return
	}
}

// document fetches the served OpenAPI document, as a reader's tools would.
func (s *server) document(t testing.TB) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/openapi.json", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatalf("decode /openapi.json: %v", err)
	}
	return doc
}
