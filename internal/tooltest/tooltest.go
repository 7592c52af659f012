// Package tooltest finds the real programs that tests start (Mailpit, Pebble,
// SeaweedFS), which the project's setup scripts install: a test without one skips,
// unless a missing tool must fail it (PETSTORE_E2E=1 or CI, as .ci/run sets).
package tooltest

import (
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Required reports whether a missing tool fails a test rather than skipping it.
func Required() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return os.Getenv("PETSTORE_E2E") == "1" || ci
}

// Tool names a program and where to look for it.
type Tool struct {
	Name   string // the binary's name ("mailpit")
	Label  string // what the messages call it ("weed (SeaweedFS)"); Name when empty
	Env    string // a variable that names its path, looked at first
	Script string // the script that installs it ("scripts/setup-mailpit")
	// GOPATHFirst looks in $(go env GOPATH)/bin before PATH: where a distribution
	// package of another version may be on PATH (Debian's pebble).
	GOPATHFirst bool
}

// Binary returns the path of the tool, or stops the test: a skip, or a failure when
// Required.
func Binary(t testing.TB, tool Tool) string {
	t.Helper()
	var onPath, inGOPATH []string
	if p, err := exec.LookPath(tool.Name); err == nil {
		onPath = append(onPath, p)
	}
	for _, dir := range filepath.SplitList(build.Default.GOPATH) {
		inGOPATH = append(inGOPATH, filepath.Join(dir, "bin", tool.Name))
	}
	candidates := []string{os.Getenv(tool.Env)}
	if tool.GOPATHFirst {
		candidates = append(append(candidates, inGOPATH...), onPath...)
	} else {
		candidates = append(append(candidates, onPath...), inGOPATH...)
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); c != "" && err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return c
		}
	}
	label := tool.Label
	if label == "" {
		label = tool.Name
	}
	msg := label + " is not installed (run " + tool.Script + ", or set " + tool.Env + " to its path)"
	if Required() {
		t.Fatal(msg + " (PETSTORE_E2E=1 or CI: a missing tool is a failure)")
	}
	t.Skip(msg + " (skipped; with PETSTORE_E2E=1 this fails)")
	return ""
}
