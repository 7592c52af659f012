package install

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// The README's Install and Two commands name the Go that go.mod's go line asks for
// (its language version: any patch release of it, which is what go 1.26.0 means).
// The Go SDK, a module of its own, names its own further down.
// scripts/check-go-floor builds with exactly that Go in CI.
func TestTheREADMENamesTheGoOfGoMod(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", raw, nil)
	if err != nil || mod.Go == nil {
		t.Fatalf("go.mod has no go line: %v", err)
	}
	want := strings.Join(strings.SplitN(mod.Go.Version, ".", 3)[:2], ".")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(readme), "\n## Walk-through with curl\n")
	named := regexp.MustCompile(`Go (\d+\.\d+(?:\.\d+)?) or later`).FindAllStringSubmatch(head, -1)
	if len(named) == 0 {
		t.Fatal(`README.md names no "Go 1.N or later"`)
	}
	for _, m := range named {
		if m[1] != want {
			t.Errorf("README.md says %q; go.mod's go line is %s, so say Go %s", m[0], mod.Go.Version, want)
		}
	}
}
