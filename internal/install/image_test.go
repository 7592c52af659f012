//go:build linux

// Containers run on Linux; the volume check reads the volume from the host.

package install

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// required says whether a missing container tool fails the test rather than skipping
// it: under PETSTORE_E2E=1 or CI, as .ci/run sets (and installs podman and runc).
func required() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return os.Getenv("PETSTORE_E2E") == "1" || ci
}

// containerFlags are what `podman run` needs on the machines this runs on, besides
// the README's line. runc: crun 1.8 (Debian 12's) refuses to start a container where
// the cgroup v2 hierarchy holds controllers beside v1 ("hybrid mode", as in CI's VM).
// The ulimits: podman asks for more open files and processes than the test's own
// limits, which a root without CAP_SYS_RESOURCE (CI's VM) may not raise to.
var containerFlags = []string{"--runtime", "runc", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"}

// scripts/image builds the image with podman; it runs, as the README says, with a
// published port and a named volume: it answers /healthz, an account signs up and
// makes a key that works, the SQLite file is on the volume, owned by the image's
// user, and the CA certificates are there.
func TestTheImageServesTheAPIAndKeepsItsDatabaseOnTheVolume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a container image")
	}
	for _, tool := range []string{"podman", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is not installed (apt-get install podman runc)"
			if required() {
				t.Fatal(msg + " (PETSTORE_E2E=1 or CI: a missing tool is a failure)")
			}
			t.Skip(msg + " (skipped; with PETSTORE_E2E=1 this fails)")
		}
	}
	id := make([]byte, 4)
	rand.Read(id)
	name := "petstore-test-" + hex.EncodeToString(id)
	tag := "localhost/" + name + ":v0.0.0-test"

	start := time.Now()
	build := exec.Command(filepath.Join(repoRoot(t), "scripts", "image"), "v0.0.0-test", tag)
	build.Env = append(os.Environ(), "PETSTORE_CONTAINER_TOOL=podman")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image: %v\n%s", err, b)
	}
	t.Cleanup(func() { podman(t, "rmi", "--force", tag) })
	t.Logf("scripts/image: %v", time.Since(start).Round(time.Second))

	port := freePort(t)
	args := append([]string{"run", "--detach", "--name", name}, containerFlags...)
	args = append(args, "--publish", "127.0.0.1:"+port+":8080", "--volume", name+":/data", tag)
	podman(t, args...)
	t.Cleanup(func() {
		podman(t, "rm", "--force", name)
		podman(t, "volume", "rm", "--force", name)
	})
	base := "http://127.0.0.1:" + port
	if err := waitHealthy(base+"/healthz", 30*time.Second); err != nil {
		logs, _ := exec.Command("podman", "logs", name).CombinedOutput()
		t.Fatalf("the container does not answer: %v\n%s", err, logs)
	}
	t.Logf("built and answering after %v", time.Since(start).Round(time.Second))

	signUp := `{"email": "ada@example.com", "password": "correct horse battery"}`
	if code, body := call(t, "POST", base+"/v1/accounts", "", signUp); code != http.StatusCreated {
		t.Fatalf("sign up: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", base+"/v1/api-keys", strings.NewReader(`{"name": "laptop"}`))
	req.SetBasicAuth("ada@example.com", "correct horse battery")
	req.Header.Set("Content-Type", "application/json")
	var key struct{ Key string }
	if err := doJSON(req, http.StatusCreated, &key); err != nil || !strings.HasPrefix(key.Key, "psk_") {
		t.Fatalf("make a key: %v (key %q)", err, key.Key)
	}
	if code, body := call(t, "GET", base+"/v1/accounts/me", key.Key, ""); code != http.StatusOK || !strings.Contains(body, "ada@example.com") {
		t.Fatalf("GET /v1/accounts/me with the new key: %d %s", code, body)
	}

	// The roots outgoing TLS (webhooks, SMTP) checks against: the build machine's.
	certs := filepath.Join(t.TempDir(), "ca.crt")
	podman(t, "cp", name+":/etc/ssl/certs/ca-certificates.crt", certs)
	if got, err := os.ReadFile(certs); err != nil || len(got) == 0 {
		t.Errorf("the image has no CA certificates: %v", err)
	} else if want, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil && !bytes.Equal(got, want) {
		t.Errorf("the image's CA certificates (%d bytes) are not this machine's (%d bytes)", len(got), len(want))
	}

	mount := strings.TrimSpace(podman(t, "volume", "inspect", "--format", "{{.Mountpoint}}", name))
	fi, err := os.Stat(filepath.Join(mount, "petstore.db"))
	if err != nil {
		t.Fatalf("the database is not on the volume: %v", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && (st.Uid != 65532 || st.Gid != 65532) {
		t.Errorf("petstore.db on the volume is owned by %d:%d, want the image's user 65532:65532", st.Uid, st.Gid)
	}
}

// podman runs podman and returns its output; it fails the test when podman does.
func podman(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("podman", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("podman %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out)
}

// freePort is a port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// waitHealthy polls url until it answers 200, for at most within.
func waitHealthy(url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond) // a poll interval, not a wait for something
	}
}

// call sends a JSON body (none if empty) with a key (none if empty) and returns the
// status and the body.
func call(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// doJSON sends req and decodes the answer into v, which must have status want.
func doJSON(req *http.Request, want int, v any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return fmt.Errorf("status %d, want %d: %s", resp.StatusCode, want, b.String())
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
