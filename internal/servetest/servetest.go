// Package servetest builds the petstore binary and runs `petstore serve` as a process
// of its own, for what needs the real process: the crash, signal and fault tests, the
// end-to-end suite and loadbench. (The SDKs' harnesses are in their own modules.)
package servetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Build compiles the petstore command into out, with the go command's flags (such as
// -race). It is run from the current directory, which must be inside the module.
func Build(ctx context.Context, out string, flags ...string) error {
	args := append(append([]string{"build", "-o", out}, flags...), "github.com/acme-pets/petstore/cmd/petstore")
	if b, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/petstore: %v\n%s", err, b)
	}
	return nil
}

// Process is a running `petstore serve`.
type Process struct {
	Cmd *exec.Cmd
	// URL is where it listens, as it said ("http://127.0.0.1:8080").
	URL string
	// Banner is what it printed before it said where it listens: on a first start,
	// the admin key.
	Banner string
	done   chan struct{}
	err    error
}

// Serve runs `bin serve args…`, its log going to stderr, and returns once it has said
// where it listens and answers /healthz there. It fails when the process exits first
// or within is over; the process is killed then.
func Serve(bin string, stderr io.Writer, within time.Duration, args ...string) (*Process, error) {
	return serve(http.DefaultClient, nil, bin, stderr, within, args...)
}

// ServeWith is Serve that asks for /healthz with client: one that trusts the
// certificate of a server that speaks HTTPS.
func ServeWith(client *http.Client, bin string, stderr io.Writer, within time.Duration, args ...string) (*Process, error) {
	return serve(client, nil, bin, stderr, within, args...)
}

// ServeEnv is Serve with env ("NAME=value") added to the test's environment, for the
// variables that have no flag (the OTEL_* ones).
func ServeEnv(bin string, env []string, stderr io.Writer, within time.Duration, args ...string) (*Process, error) {
	return serve(http.DefaultClient, env, bin, stderr, within, args...)
}

func serve(client *http.Client, env []string, bin string, stderr io.Writer, within time.Duration, args ...string) (*Process, error) {
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	listening := make(chan [2]string, 1)
	go func() {
		var banner strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "petstore listening on "); ok {
				listening <- [2]string{strings.TrimSpace(u), banner.String()}
				break
			}
			banner.WriteString(sc.Text() + "\n")
		}
		_, _ = io.Copy(io.Discard, stdout)
		// Wait only once stdout is drained: it closes the pipe.
		p.err = cmd.Wait()
		close(p.done)
	}()
	deadline := time.After(within)
	select {
	case l := <-listening:
		p.URL, p.Banner = l[0], l[1]
	case <-p.done:
		return nil, fmt.Errorf("petstore serve exited before it listened: %v", p.err)
	case <-deadline:
		p.Kill()
		return nil, errors.New("petstore serve did not say where it listens")
	}
	for {
		res, err := client.Get(p.URL + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("petstore serve exited: %v", p.err)
		case <-deadline:
			p.Kill()
			return nil, fmt.Errorf("%s/healthz does not answer 200: %v", p.URL, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns how it did (exec.Cmd.Wait).
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.Cmd.Process.Signal(sig) }

// Kill kills the process (SIGKILL) and waits for it.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// Stop asks the process to stop (SIGINT) and kills it if it has not within grace.
func (p *Process) Stop(grace time.Duration) {
	_ = p.Cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}
