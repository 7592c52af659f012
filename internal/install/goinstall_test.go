package install

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

const modulePath = "github.com/acme-pets/petstore"

// The README's `go install …@latest` line, run as printed in an empty folder, against a
// module proxy that serves this commit as the module's latest version (the module is
// not published yet) ahead of proxy.golang.org for the dependencies.
func TestTheREADMEGoInstallLineInstallsTheLatestVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds petstore from a module proxy")
	}
	block := readmeBlock(t, "go install ")
	rev := git(t, "rev-parse", "HEAD")
	secs, err := strconv.ParseInt(git(t, "show", "-s", "--format=%ct", "HEAD"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(secs, 0).UTC()
	// The version a proxy gives an untagged commit: what @latest resolves to until
	// the first tag.
	version := module.PseudoVersion("v0", "", at, rev[:12])
	proxy := moduleProxy(t, rev, version, at)
	forgetVersion(t, version)

	bin := t.TempDir()
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",https://proxy.golang.org",
		"GONOSUMDB="+modulePath, // not in the checksum database: it was never published
		"GOFLAGS=", "GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	start := time.Now()
	out := runBlock(t, t.TempDir(), env, block)
	t.Logf("go install …@latest and petstore version: %v", time.Since(start).Round(time.Second))
	if want := "petstore " + version; !strings.Contains(out, want+"\n") {
		t.Errorf("petstore version says %q, want %q", out, want)
	}
}

// moduleProxy writes a GOPROXY folder that serves the commit rev as version of the
// module, and as its latest, and returns the folder.
func moduleProxy(t *testing.T, rev, version string, at time.Time) string {
	t.Helper()
	proxy := t.TempDir()
	dir := filepath.Join(proxy, filepath.FromSlash(modulePath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	// What a proxy would serve: the committed files (git archive; zip.CreateFromVCS
	// does not know a git worktree), without the nested module sdk/go.
	tree := t.TempDir()
	archive := exec.Command("sh", "-c", `git -C "$0" archive --format=tar "$1" | tar -x -C "$2"`, repoRoot(t), rev, tree)
	if b, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive: %v\n%s", err, b)
	}
	if err := zip.CreateFromDir(f, module.Version{Path: modulePath, Version: version}, tree); err != nil {
		t.Fatalf("zip the module: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf("{%q:%q,%q:%q}\n", "Version", version, "Time", at.Format(time.RFC3339))
	files := map[string]string{
		filepath.Join(dir, version+".mod"):  git(t, "show", rev+":go.mod") + "\n",
		filepath.Join(dir, version+".info"): info,
		filepath.Join(dir, "list"):          "", // tagged versions: none
		filepath.Join(dir, "..", "@latest"): info,
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return proxy
}

// forgetVersion removes version of the module from the module cache when the test
// ends: it is this test's own, and the go command keeps it read-only.
func forgetVersion(t *testing.T, version string) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		// The download cache's entries of the version, and its copy of the proxy's
		// (empty) list of versions.
		downloads := filepath.Join(cache, "cache", "download", filepath.FromSlash(modulePath), "@v")
		paths, _ := filepath.Glob(filepath.Join(downloads, version+".*"))
		paths = append(paths, filepath.Join(downloads, "list"), filepath.Join(downloads, "list.lock"))
		paths = append(paths, filepath.Join(cache, filepath.FromSlash(modulePath)+"@"+version))
		for _, p := range paths {
			_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					err = os.Chmod(path, 0o755)
				}
				return err
			})
			if err := os.RemoveAll(p); err != nil {
				t.Errorf("remove the test's version from the module cache: %v", err)
			}
		}
	})
}
