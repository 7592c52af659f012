package install

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scripts/release for the host's target (the others are built by .ci/run's release
// step): the archive SHA256SUMS names, holding the folder with the binary, README.md
// and LICENSE, and the README's lines that check and unpack it, run as printed, print
// the version and the revision the binary was stamped with.
func TestTheReleaseArchiveHoldsAStampedStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release")
	}
	if runtime.GOOS == "windows" {
		t.Skip("scripts/release is a bash script; the README's lines are for Linux and macOS")
	}
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "release"), "v1.2.3", out)
	cmd.Env = append(os.Environ(), "PETSTORE_RELEASE_TARGETS="+runtime.GOOS+"/"+runtime.GOARCH)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}
	t.Logf("scripts/release for %s/%s: %v", runtime.GOOS, runtime.GOARCH, time.Since(start).Round(time.Second))

	name := "petstore_1.2.3_" + runtime.GOOS + "_" + runtime.GOARCH
	archive := filepath.Join(out, name+".tar.gz")
	checkSums(t, out, []string{name + ".tar.gz"})
	if got, want := tarEntries(t, archive), []string{name + "/", name + "/LICENSE", name + "/README.md", name + "/petstore"}; !slices.Equal(got, want) {
		t.Errorf("the archive holds %v, want %v", got, want)
	}

	// The README names linux_amd64; the host's archive stands in for it.
	block := strings.ReplaceAll(readmeBlock(t, "tar -xzf"), "linux_amd64", runtime.GOOS+"_"+runtime.GOARCH)
	version := runBlock(t, out, os.Environ(), block)
	rev := git(t, "rev-parse", "HEAD")
	secs, err := strconv.ParseInt(git(t, "show", "-s", "--format=%ct", "HEAD"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(secs, 0).UTC().Format("2006-01-02T15:04:05Z")
	if want := "petstore v1.2.3 (rev " + rev[:7] + ", " + at + ")\n"; !strings.HasSuffix(version, want) {
		t.Errorf("the release says %q, want %q", version, want)
	}

	if runtime.GOOS == "linux" {
		f, err := elf.Open(filepath.Join(out, name, "petstore"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the binary asks for a dynamic loader: not static (CGO_ENABLED=0)")
			}
		}
	}
}

// checkSums checks that SHA256SUMS in dir lists exactly files, with their digests.
func checkSums(t *testing.T, dir string, files []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var listed []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, file, ok := strings.Cut(s.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: %q is not `digest  file`", s.Text())
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if d := sha256.Sum256(b); hex.EncodeToString(d[:]) != sum {
			t.Errorf("SHA256SUMS gives %s for %s, its digest is %x", sum, file, d)
		}
		listed = append(listed, file)
	}
	if !slices.Equal(listed, files) {
		t.Errorf("SHA256SUMS lists %v, want %v", listed, files)
	}
}

// tarEntries lists the names in a .tar.gz, sorted.
func tarEntries(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	slices.Sort(names)
	return names
}
