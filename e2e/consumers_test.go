package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConsumerMatrix runs the README's walk-through (sign up, a key made with HTTP
// Basic, a message, every pet page by page, an idempotent order, a refused order)
// through four consumers of the document, so that a change to the document that
// breaks a mainstream client generator, or either SDK, fails CI:
//
//   - the Go SDK (sdk/go): its own tests and runnable examples, against this binary;
//   - the TypeScript SDK (sdk/typescript): npm ci, then its Node tests, against this binary;
//   - a client that oapi-codegen generates fresh from the served /openapi.json, with
//     default settings, driven by testdata/oapi-codegen/main.go;
//   - a client that ogen generates fresh from it, driven by testdata/ogen/main.go
//     (ogenClient).
func TestConsumerMatrix(t *testing.T) {
	bin := petstoreBinary(t)
	// The SDKs' tests run in child processes, whose reads go test cannot see: looking
	// at every file here makes a change to an SDK run this test again instead of
	// answering from go test's cache.
	for _, dir := range []string{"../sdk/go", "../sdk/typescript", "testdata"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "dist") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				_, err = os.Stat(path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("Go SDK", func(t *testing.T) {
		t.Parallel()
		cmd := exec.Command("go", "test", "-count=1", "./...")
		cmd.Dir = filepath.Join("..", "sdk", "go")
		cmd.Env = append(os.Environ(), "PETSTORE_BIN="+bin)
		runStep(t, cmd)
	})

	t.Run("TypeScript SDK", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("npm"); err != nil {
			needTool(t, "npm", "is not on PATH")
		}
		dir := filepath.Join("..", "sdk", "typescript")
		npmCI(t, dir)
		cmd := exec.Command("npm", "test")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PETSTORE_BIN="+bin)
		runStep(t, cmd)
	})

	t.Run("ogen client", ogenClient)

	t.Run("oapi-codegen client", func(t *testing.T) {
		t.Parallel()
		srv := startServer(t)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "openapi.json"), fetch(t, srv.URL+"/openapi.json"), 0o600); err != nil {
			t.Fatal(err)
		}
		// The generator is the one the root module pins (go.mod, tool); its settings are
		// the defaults a newcomer would use.
		if err := os.Mkdir(filepath.Join(dir, "client"), 0o755); err != nil {
			t.Fatal(err)
		}
		gen := exec.Command("go", "tool", "oapi-codegen", "-generate", "types,client", "-package", "client",
			"-o", filepath.Join(dir, "client", "client.gen.go"), filepath.Join(dir, "openapi.json"))
		gen.Dir = ".."
		runStep(t, gen)

		walk, err := os.ReadFile(filepath.Join("testdata", "oapi-codegen", "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		// The generated code needs only oapi-codegen's runtime; the Go SDK's module
		// pins it, and its go.sum has the checksums, so the module cache answers
		// without the network.
		sdkMod, err := os.ReadFile(filepath.Join("..", "sdk", "go", "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := os.ReadFile(filepath.Join("..", "sdk", "go", "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		mod := "module walkthrough\n" + string(sdkMod[bytes.IndexByte(sdkMod, '\n')+1:])
		for name, data := range map[string][]byte{"main.go": walk, "go.mod": []byte(mod), "go.sum": sum} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		run := exec.Command("go", "run", ".")
		run.Dir = dir
		run.Env = append(os.Environ(), "PETSTORE_URL="+srv.URL+"/v1", "GOFLAGS=-mod=mod", "GOWORK=off")
		out := runStep(t, run)
		for _, want := range []string{
			"signed up as customer",
			"made a key",
			"message queued",
			"pets: Rex, Bella, Max, Luna, Milo, Kiwi",
			"batch lookup: Rex Bella",
			"order placed once",
			"refused: insufficient_stock",
		} {
			if !strings.Contains(out, want+"\n") {
				t.Errorf("the walk-through did not print %q:\n%s", want, out)
			}
		}
	})
}

// runStep runs cmd and fails the test with its output unless it succeeds; it returns
// the standard output.
func runStep(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s (in %s): %v\nstdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), cmd.Dir, err, stdout.String(), stderr.String())
	}
	t.Logf("%s: %s", strings.Join(cmd.Args, " "), time.Since(start).Round(time.Millisecond))
	return stdout.String()
}

// npmCI installs a package's dependencies from its lock file. The registry sometimes
// drops a connection; npm's cache keeps what did arrive, so a second try is short.
func npmCI(t *testing.T, dir string) {
	t.Helper()
	var last []byte
	for try := 1; try <= 3; try++ {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--prefer-offline")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		last = out
		time.Sleep(time.Duration(try*5) * time.Second)
	}
	t.Fatalf("npm ci in %s failed three times:\n%s", dir, last)
}

func fetch(t *testing.T, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return body
}
