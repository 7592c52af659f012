package petstore_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain runs the real service for the examples and the tests that need it (every
// operation, real webhook deliveries), the way an operator would: the binary in
// $PETSTORE_BIN, or one built from this repository, on a new database with the demo
// data. They find it in the environment, as a program of yours would: PETSTORE_URL,
// PETSTORE_ADMIN_KEY (an admin's key) and PETSTORE_API_KEY (a customer's).
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "petstore-sdk-go-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	smtp, stopMail, err := startMailpit(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting mailpit for the password resets:", err)
		return 1
	}
	defer stopMail()
	stop, err := startPetstore(dir, smtp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting petstore for the examples:", err)
		return 1
	}
	defer stop()
	return m.Run()
}

// startPetstore starts the service, mailing through the SMTP server at smtp.
func startPetstore(dir, smtp string) (stop func(), err error) {
	bin := os.Getenv("PETSTORE_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "petstore")
		build := exec.Command("go", "build", "-o", bin, "./cmd/petstore")
		build.Dir = filepath.Join("..", "..") // the repository root, whose module is the service
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/petstore: %v\n%s", err, out)
		}
	}
	db := filepath.Join(dir, "petstore.db")
	for name, role := range map[string]string{"PETSTORE_ADMIN_KEY": "admin", "PETSTORE_API_KEY": "customer"} {
		out, err := exec.Command(bin, "keys", "create", "--create", "--email", role+"@example.com", "--role", role, "--database", db).Output()
		if err != nil {
			return nil, fmt.Errorf("petstore keys create: %w", err)
		}
		os.Setenv(name, strings.TrimSpace(string(out)))
	}

	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--database", db,
		"--demo", "--no-bootstrap", "--log-level", "warn", "--admin-addr", "off",
		"--credential-limit", "100", // every example signs up from this one address
		"--webhooks-allow-private",   // the tests' webhook receivers listen on 127.0.0.1
		"--smtp-url", "smtp://"+smtp, // password resets are mailed (mailpit_test.go)
		"--sunset", "getPetById=2099-12-31") // so that the deprecated call's example outlives its real sunset
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop = func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	// The first line says where it listens: "petstore listening on http://127.0.0.1:PORT".
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			u, _ := strings.CutPrefix(sc.Text(), "petstore listening on ")
			found <- strings.TrimSpace(u)
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var origin string
	select {
	case origin = <-found:
	case <-exited:
		return nil, fmt.Errorf("petstore serve exited: %s", stderr.String())
	case <-time.After(30 * time.Second):
		stop()
		return nil, errors.New("petstore serve did not say where it listens")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := http.Get(origin + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("%s/healthz does not answer 200: %v", origin, err)
		}
	}
	os.Setenv("PETSTORE_URL", origin+"/v1")
	return stop, nil
}
