package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ogenClient is TestConsumerMatrix's ogen consumer: a client that ogen generates fresh
// from the served /openapi.json (the client only, and without OpenTelemetry, whose
// modules the root module does not pin), driven by testdata/ogen/main.go. Its
// SecuritySource answers ogenerrors.ErrSkipClientSecurity for a scheme it holds
// nothing for, the recipe the README's generator notes give for createApiKey's
// "Basic or Bearer".
func ogenClient(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(doc, fetch(t, srv.URL+"/openapi.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := "generator:\n  features:\n    disable: [paths/server, webhooks/server, ogen/otel]\n"
	if err := os.WriteFile(filepath.Join(dir, "ogen.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	// The generator is the one the root module pins (go.mod, tool), as for the server.
	gen := exec.Command("go", "tool", "ogen", "-config", filepath.Join(dir, "ogen.yml"),
		"-target", filepath.Join(dir, "client"), "-package", "client", "-clean", doc)
	gen.Dir = ".."
	var genOut bytes.Buffer
	gen.Stdout, gen.Stderr = &genOut, &genOut
	if err := gen.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(gen.Args, " "), err, genOut.String())
	}
	// ogen warns about every header name that is not in Go's canonical form
	// (RateLimit-Policy, RateLimit, WWW-Authenticate): harmless, header names are
	// case-insensitive (README, generator notes). Any other warning is news.
	for line := range strings.Lines(genOut.String()) {
		if strings.Contains(line, "WARN") && !strings.Contains(line, "Header name is not canonical") {
			t.Errorf("ogen warns: %s", line)
		}
	}

	walk, err := os.ReadFile(filepath.Join("testdata", "ogen", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	// The generated code needs ogen's runtime and go-faster's jx and errors; the root
	// module pins them, and its go.sum has the checksums, so the module cache answers
	// without the network.
	rootMod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join("..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := "module walkthrough\n" + string(rootMod[bytes.IndexByte(rootMod, '\n')+1:])
	for name, data := range map[string][]byte{"main.go": walk, "go.mod": []byte(mod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := exec.Command("go", "run", ".")
	run.Dir = dir
	// -trimpath keeps the temporary directory out of the build cache's keys: the
	// generated client is compiled once per document, not on every run (about a
	// minute on a 2-core machine).
	run.Env = append(os.Environ(), "PETSTORE_URL="+srv.URL+"/v1", "GOFLAGS=-mod=mod -trimpath", "GOWORK=off")
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
	t.Logf("walk-through:\n%s", out)
}
