package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
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
//   - each SDK installed as its README says, from a checkout, into a new project outside
//     the repository, which lists the pets (testdata/install).
//
// -short skips it, as the race run does (.ci/run): what it tests is the clients, which
// the race detector does not look into; the server it drives is the binary that
// TestTheREADMEWalkThrough takes through the same walk-through.
func TestConsumerMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles four clients and installs the SDKs")
	}
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
		typescriptDir.Lock() // npm ci and the build replace node_modules and dist
		defer typescriptDir.Unlock()
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
		run.Env = append(os.Environ(), "PETSTORE_URL="+srv.URL+"/v1", "GOFLAGS=-mod=mod -trimpath", "GOWORK=off") // see ogenClient
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

	t.Run("README install recipes", func(t *testing.T) {
		t.Parallel()
		installRecipes(t)
	})
}

// typescriptDir is held by a test that installs or builds in sdk/typescript.
var typescriptDir sync.Mutex

// The README recipes for a checkout, run as written: the commands of their sh blocks,
// with the README's placeholders for the checkout and for your project replaced by this
// repository and a new directory outside it. A README that changes its recipe changes
// what runs here.
func installRecipes(t *testing.T) {
	srv := startServer(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PETSTORE_URL=" + srv.URL + "/v1", "PETSTORE_API_KEY=" + srv.CustomerKey}
	const wantPets = "pets: Rex, Bella, Max, Luna, Milo, Kiwi\n"
	program, err := os.ReadFile(filepath.Join("testdata", "install", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`(?m)^const version = "([^"]+)"`).FindSubmatch(must(os.ReadFile(filepath.Join("..", "sdk", "go", "client.go")))(t))
	if version == nil {
		t.Fatal(`sdk/go/client.go has no const version = "…"`)
	}
	goRecipes := readmeCommands(t, filepath.Join("..", "sdk", "go", "README.md"), "### From a checkout")
	if len(goRecipes) != 2 {
		t.Fatalf("sdk/go/README.md, From a checkout: %d sh blocks, want 2 (replace, workspace)", len(goRecipes))
	}

	// A new module, made by go mod init; the README's replace and go get. The module
	// cache has what the SDK needs (its own tests ran with it), so no download is made
	// unless GOPROXY must be asked.
	t.Run("Go SDK with replace", func(t *testing.T) {
		t.Parallel()
		project := t.TempDir()
		goEnv := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		newGoModule(t, project, program, goEnv)
		runRecipe(t, goRecipes[0], root, project, goEnv)
		mod := string(must(os.ReadFile(filepath.Join(project, "go.mod")))(t))
		if want := "github.com/acme-pets/petstore/sdk/go v" + string(version[1]); !strings.Contains(mod, want) {
			t.Errorf("go.mod does not require %s, the version sdk/go says it is:\n%s", want, mod)
		}
		out := runStep(t, command(project, append(goEnv, env...), "go", "run", "."))
		if out != wantPets {
			t.Errorf("the program printed %q, want %q", out, wantPets)
		}
	})

	t.Run("Go SDK in a workspace", func(t *testing.T) {
		t.Parallel()
		project := t.TempDir()
		goEnv := append(os.Environ(), "GOFLAGS=", "GOWORK=")
		newGoModule(t, project, program, goEnv)
		runRecipe(t, goRecipes[1], root, project, goEnv)
		out := runStep(t, command(project, append(goEnv, env...), "go", "run", "."))
		if out != wantPets {
			t.Errorf("the program printed %q, want %q", out, wantPets)
		}
	})

	// A new npm project; the README's npm ci, npm pack and npm install of the tarball,
	// whose dependency (openapi-fetch) comes from npm's cache or registry.
	t.Run("TypeScript SDK from its tarball", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("npm"); err != nil {
			needTool(t, "npm", "is not on PATH")
		}
		recipes := readmeCommands(t, filepath.Join("..", "sdk", "typescript", "README.md"), "### From a checkout")
		if len(recipes) != 1 {
			t.Fatalf("sdk/typescript/README.md, From a checkout: %d sh blocks, want 1", len(recipes))
		}
		project := t.TempDir()
		runStep(t, command(project, os.Environ(), "npm", "init", "-y"))
		script, err := os.ReadFile(filepath.Join("testdata", "install", "list.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, "list.mjs"), script, 0o600); err != nil {
			t.Fatal(err)
		}
		func() {
			typescriptDir.Lock()
			defer typescriptDir.Unlock()
			before := tarballs(t)
			defer func() { // the tarballs npm pack wrote into the checkout
				for _, f := range tarballs(t) {
					if !slices.Contains(before, f) {
						os.Remove(f)
					}
				}
			}()
			runRecipe(t, recipes[0], root, project, os.Environ())
		}()
		out := runStep(t, command(project, append(os.Environ(), env...), "node", "list.mjs"))
		if out != wantPets {
			t.Errorf("the program printed %q, want %q", out, wantPets)
		}
	})
}

// readmeCommands returns the command lines of each sh block in the section of a README
// that starts at the heading line, up to the next heading of its level or above.
func readmeCommands(t *testing.T, readme, heading string) [][]string {
	t.Helper()
	lines := strings.Split(string(must(os.ReadFile(readme))(t)), "\n")
	start := slices.Index(lines, heading)
	if start < 0 {
		t.Fatalf("%s has no heading %q", readme, heading)
	}
	level := strings.IndexByte(heading, ' ') // 3 for "### "
	var blocks [][]string
	var block []string
	fence := "" // the info string of the open fence, "" outside one
	for _, line := range lines[start+1:] {
		if info, ok := strings.CutPrefix(line, "```"); ok {
			if fence == "" {
				fence, block = info, nil
				if fence == "" {
					fence = "text"
				}
			} else {
				if fence == "sh" {
					blocks = append(blocks, block)
				}
				fence = ""
			}
			continue
		}
		if fence == "" {
			if n := len(line) - len(strings.TrimLeft(line, "#")); n >= 1 && n <= level && strings.HasPrefix(line[n:], " ") {
				break // the next section
			}
			continue
		}
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			block = append(block, line)
		}
	}
	return blocks
}

// runRecipe runs the lines of a README recipe in project, one command each, with the
// README's /path/to/checkout and /path/to/your/project standing for root and project.
// "cd DIR" changes the directory of the commands after it. A line that needs a shell
// fails the test: a reader's shell and this test would read it differently.
func runRecipe(t *testing.T, lines []string, root, project string, env []string) {
	t.Helper()
	dir := project
	for _, line := range lines {
		if strings.ContainsAny(line, "|&;<>$`'\"\\*?(){}") {
			t.Fatalf("the recipe line %q needs a shell; keep README recipes to plain commands", line)
		}
		line = strings.ReplaceAll(line, "/path/to/your/project", project)
		line = strings.ReplaceAll(line, "/path/to/checkout", root)
		args := strings.Fields(line)
		if args[0] == "cd" && len(args) == 2 {
			dir = args[1]
			continue
		}
		if args[0] == "npm" {
			// Quieter, and from npm's cache when it can; the registry sometimes drops a
			// connection, so a failed install is tried again.
			args = append(args, "--no-audit", "--no-fund", "--prefer-offline")
			if args[1] == "ci" || args[1] == "install" {
				npmRetry(t, dir, args[1:])
				continue
			}
		}
		runStep(t, command(dir, env, args[0], args[1:]...))
	}
}

// npmRetry runs npm with args in dir, up to three times.
func npmRetry(t *testing.T, dir string, args []string) {
	t.Helper()
	var last []byte
	for try := 1; try <= 3; try++ {
		cmd := exec.Command("npm", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		last = out
		time.Sleep(time.Duration(try*5) * time.Second)
	}
	t.Fatalf("npm %s in %s failed three times:\n%s", strings.Join(args, " "), dir, last)
}

// newGoModule makes a module with go mod init in dir, holding the program main.go.
func newGoModule(t *testing.T, dir string, program []byte, env []string) {
	t.Helper()
	runStep(t, command(dir, env, "go", "mod", "init", "example.com/shop"))
	if err := os.WriteFile(filepath.Join(dir, "main.go"), program, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tarballs lists the npm pack tarballs in sdk/typescript.
func tarballs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "sdk", "typescript", "*.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func command(dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// must returns v, or fails the test on err.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
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
