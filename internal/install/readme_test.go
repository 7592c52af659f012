package install

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the checkout's top folder.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readmeBlock returns the shell block of the README's Install section that holds
// marker, as printed there.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no section ## Install")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		if strings.Contains(block[1], marker) {
			return block[1]
		}
	}
	t.Fatalf("README.md's Install section has no sh block with %q", marker)
	return ""
}

// runBlock runs a README block's commands with bash in dir and checks their output
// against its "# " lines, which must appear in that order ("…" stands for anything).
// It returns the output.
func runBlock(t *testing.T, dir string, env []string, block string) string {
	t.Helper()
	var script []string
	var want []*regexp.Regexp
	for _, line := range strings.Split(block, "\n") {
		if expected, ok := strings.CutPrefix(line, "# "); ok {
			parts := strings.Split(expected, "…")
			for i, p := range parts {
				parts[i] = regexp.QuoteMeta(p)
			}
			want = append(want, regexp.MustCompile("^"+strings.Join(parts, ".+")+"$"))
			continue
		}
		script = append(script, line)
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's lines\n%s\nfail: %v\n%s%s", block, err, out, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for _, re := range want {
		for len(lines) > 0 && !re.MatchString(lines[0]) {
			lines = lines[1:]
		}
		if len(lines) == 0 {
			t.Fatalf("the README's lines\n%s\nprint\n%s\nwithout a line matching %s", block, out, re)
		}
		lines = lines[1:]
	}
	return string(out)
}

// git runs git in the checkout and returns its output, trimmed.
func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", repoRoot(t)}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}
