package petstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/build"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"
)

// The service mails password reset links; the tests read them from a real SMTP
// server, Mailpit (scripts/setup-mailpit installs it), run beside the service. Its
// HTTP API is in $PETSTORE_MAILPIT_API.

// startMailpit runs Mailpit on free loopback ports and returns its SMTP address.
func startMailpit(dir string) (smtp string, stop func(), err error) {
	bin := os.Getenv("PETSTORE_TEST_MAILPIT")
	if bin == "" {
		if p, err := exec.LookPath("mailpit"); err == nil {
			bin = p
		} else {
			bin = filepath.Join(filepath.SplitList(build.Default.GOPATH)[0], "bin", "mailpit")
		}
	}
	smtp, api := freeLoopback(), freeLoopback()
	cmd := exec.Command(bin, "--smtp", smtp, "--listen", api, "--database", filepath.Join(dir, "mailpit.db"),
		"--disable-version-check", "--smtp-disable-rdns")
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("mailpit (scripts/setup-mailpit installs it): %w", err)
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	os.Setenv("PETSTORE_MAILPIT_API", "http://"+api)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get("http://" + api + "/api/v1/messages?limit=1"); err == nil {
			res.Body.Close()
			if c, err := net.Dial("tcp", smtp); err == nil {
				c.Close()
				return smtp, stop, nil
			}
		}
	}
	stop()
	return "", nil, errors.New("mailpit did not start in 20s")
}

func freeLoopback() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// mailedToken waits (10 s at most) for a mail to email with a link whose token
// starts with prefix (psi_ for an invitation, psr_ for a reset), and returns the token.
func mailedToken(t *testing.T, email, prefix string) string {
	t.Helper()
	api := os.Getenv("PETSTORE_MAILPIT_API")
	link := regexp.MustCompile(`\?token=(` + regexp.QuoteMeta(prefix) + `[A-Za-z0-9_-]{43})`)
	get := func(path string, into any) {
		res, err := http.Get(api + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(into); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var list struct {
			Messages []struct {
				ID string
				To []struct{ Address string }
			}
		}
		get("/api/v1/messages?limit=1000", &list)
		for _, m := range list.Messages {
			if !slices.ContainsFunc(m.To, func(a struct{ Address string }) bool { return a.Address == email }) {
				continue
			}
			var msg struct{ Text string }
			get("/api/v1/message/"+m.ID, &msg)
			if found := link.FindStringSubmatch(msg.Text); found != nil {
				return found[1]
			}
		}
	}
	t.Fatalf("no mail with a link to %s arrived in 10s", email)
	return ""
}
