package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/servetest"
)

// TestTheREADMEWalkThrough runs the README's "Walk-through with curl" as printed, in bash
// with curl, against the binary started as the README's first command starts it (a new
// database with --demo), and compares every answer the README shows (its "# …" lines,
// where "…" stands for anything) with what the service answered. Only the address and
// `go run ./cmd/petstore` are swapped for the test's server and binary.
func TestTheREADMEWalkThrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			needTool(t, tool, "is not on PATH")
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := walkThroughSteps(t, string(readme))

	bin := petstoreBinary(t)
	dir := t.TempDir()
	var stderr bytes.Buffer
	p, err := servetest.Serve(bin, &stderr, 40*time.Second,
		"--addr", "127.0.0.1:0", "--admin-addr", "off", "--database", filepath.Join(dir, "petstore.db"), "--demo", "--log-level", "warn")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })

	// One shell runs every step, so that variables carry over as in a terminal; a line
	// of its own before each step tells their outputs apart.
	var script strings.Builder
	script.WriteString("set -e -o pipefail\n")
	for i, s := range steps {
		fmt.Fprintf(&script, "printf '\\n=== step %d\\n'\n%s\n", i, s.commands)
	}
	code := strings.NewReplacer("http://localhost:8080", p.URL, "go run ./cmd/petstore", bin).Replace(script.String())
	cmd := exec.Command("bash", "-c", code)
	cmd.Dir = dir // `keys create` finds petstore.db here, as it would in the checkout
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walk-through failed: %v\n%s", err, out)
	}

	outputs := strings.Split(string(out), "\n=== step ")[1:]
	if len(outputs) != len(steps) {
		t.Fatalf("ran %d of %d steps:\n%s", len(outputs), len(steps), out)
	}
	for i, s := range steps {
		_, got, _ := strings.Cut(outputs[i], "\n")
		lines := strings.Split(strings.ReplaceAll(got, "\r", ""), "\n")
		at := 0
		for _, want := range s.answers {
			re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(want), "…", ".*") + "$")
			for at < len(lines) && !re.MatchString(lines[at]) {
				at++
			}
			if at == len(lines) {
				t.Errorf("step %d:\n%s\nthe README shows\n  %s\nthe service answered\n%s", i, s.commands, want, got)
				break
			}
			at++
		}
	}
}

// walkThroughStep is a paragraph of a shell block of the walk-through: its commands and
// the answers the README shows for them, in order.
type walkThroughStep struct {
	commands string
	answers  []string
}

// walkThroughSteps reads the shell blocks of the README's walk-through section, split at
// blank lines.
func walkThroughSteps(t *testing.T, readme string) []walkThroughStep {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## Walk-through with curl\n")
	if !ok {
		t.Fatal(`README.md has no "## Walk-through with curl" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var steps []walkThroughStep
	for block := range strings.SplitSeq(section, "```sh\n") {
		code, ok := strings.CutSuffix(strings.SplitN(block, "```", 2)[0], "\n")
		if !ok || !strings.Contains(block, "```") {
			continue // the prose before the first block
		}
		for para := range strings.SplitSeq(code, "\n\n") {
			var s walkThroughStep
			for line := range strings.SplitSeq(para, "\n") {
				if answer, ok := strings.CutPrefix(line, "# "); ok {
					s.answers = append(s.answers, answer)
				} else {
					s.commands += line + "\n"
				}
			}
			steps = append(steps, s)
		}
	}
	answers := 0
	for _, s := range steps {
		answers += len(s.answers)
	}
	if len(steps) < 10 || answers < 10 {
		t.Fatalf("found %d steps with %d answers in the README's walk-through; expected more", len(steps), answers)
	}
	return steps
}
