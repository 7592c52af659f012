// Package s3test runs a real S3-compatible server for tests: SeaweedFS
// (github.com/seaweedfs/seaweedfs) as `weed mini` (master, volume server, filer and
// S3 gateway in one process), on free loopback ports in a temporary directory, with
// one identity whose keys the test gets, and a bucket made for it.
//
// The binary is found on PATH, at $PETSTORE_TEST_WEED, or in $GOPATH/bin
// (scripts/setup-s3 installs it there). Without it a test skips, saying so, unless
// PETSTORE_E2E=1 or CI=true (as .ci/run and CI set): then it fails.
package s3test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/acme-pets/petstore/internal/tooltest"
)

// Version is the SeaweedFS the tests are written against (scripts/setup-s3 builds it).
const Version = "v0.0.0-20261109003541-7506e5f91cd6"

// Region is the region the server is addressed in; SeaweedFS accepts any.
const Region = "us-east-1"

// Server is a running SeaweedFS with an S3 gateway.
type Server struct {
	// Endpoint is the S3 gateway's base URL, http://127.0.0.1:PORT.
	Endpoint string
	// AccessKey and SecretKey are the keys of the server's one identity, which may
	// do anything.
	AccessKey, SecretKey string
	// Bucket is a bucket made for the test, empty.
	Bucket string

	log string // the server's log file
}

// Required reports whether a missing weed fails a test rather than skipping it.
func Required() bool { return tooltest.Required() }

// Binary returns the path of the weed binary, or stops the test: a skip, or a
// failure when Required.
func Binary(t testing.TB) string {
	t.Helper()
	return tooltest.Binary(t, tooltest.Tool{Name: "weed", Label: "weed (SeaweedFS)", Env: "PETSTORE_TEST_WEED", Script: "scripts/setup-s3"})
}

// Start starts a SeaweedFS for the test, with a bucket; it stops when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	s := &Server{AccessKey: "petstore-test", SecretKey: "petstore-test-secret", Bucket: "petstore-test", log: filepath.Join(dir, "weed.log")}
	config := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(config, s.identities(), 0o600); err != nil {
		t.Fatal(err)
	}
	// Free ports can be taken by someone else before SeaweedFS binds them: try again.
	var lastErr error
	for range 3 {
		err := s.start(t, bin, dir, config)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("s3test: SeaweedFS did not start: %v", lastErr)
	return nil
}

// identities is the S3 configuration: one identity with the server's keys.
func (s *Server) identities() []byte {
	type cred struct {
		AccessKey string `json:"accessKey"`
		SecretKey string `json:"secretKey"`
	}
	type identity struct {
		Name        string   `json:"name"`
		Credentials []cred   `json:"credentials"`
		Actions     []string `json:"actions"`
	}
	b, _ := json.Marshal(map[string][]identity{"identities": {{
		Name:        "petstore-test",
		Credentials: []cred{{s.AccessKey, s.SecretKey}},
		Actions:     []string{"Admin", "Read", "List", "Tagging", "Write"},
	}}})
	return b
}

func (s *Server) start(t testing.TB, bin, dir, config string) error {
	ports := freePorts(t, 8)
	s.Endpoint = "http://127.0.0.1:" + ports[6]
	data := filepath.Join(dir, "data")
	os.RemoveAll(data)
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	args := []string{"mini", "-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port=" + ports[0], "-master.port.grpc=" + ports[1],
		"-volume.port=" + ports[2], "-volume.port.grpc=" + ports[3],
		"-filer.port=" + ports[4], "-filer.port.grpc=" + ports[5],
		"-s3.port=" + ports[6], "-s3.port.grpc=" + ports[7],
		"-s3.config=" + config,
		// Nothing else listens, and nothing leaves the machine: no telemetry.
		"-webdav=false", "-admin.ui=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-master.telemetry=false",
		"-filer.localSocket=" + filepath.Join(dir, "filer.sock"),
	}
	logf, err := os.Create(s.log)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := s.makeBucket(exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("%w; its log:\n%s", err, s.Log())
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("SeaweedFS's log:\n%s", tail(s.Log(), 4000))
		}
	})
	return nil
}

// makeBucket makes the test's bucket once the S3 gateway takes it: the gateway
// answers before the filer and volume server behind it are ready.
func (s *Server) makeBucket(exited chan error) error {
	client := s.Client()
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for {
		select {
		case err := <-exited:
			exited <- err // back for the caller, which waits for the exit too
			return fmt.Errorf("weed exited: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s.Bucket)})
		if err == nil {
			// A bucket that exists may not take objects yet (no volume is grown):
			// the first write says when it does.
			_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(".ready"), Body: strings.NewReader("ok")})
			if err == nil {
				_, err = client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.Bucket), Key: aws.String(".ready")})
			}
		}
		cancel()
		if err == nil {
			return nil
		}
		if lastErr = err; time.Now().After(deadline) {
			return fmt.Errorf("the S3 gateway did not take a bucket and an object within 60s: %w", lastErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Client is an S3 client of the server, with its keys and path-style addressing.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

// Env is the environment a program needs to reach the server with the AWS SDK's
// default configuration: its keys and the region.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey, "AWS_REGION=" + Region}
}

// Keys lists the keys of the objects under prefix in the test's bucket.
func (s *Server) Keys(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("s3test: list %s/%s: %v", s.Bucket, prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}

// Log is what SeaweedFS logged so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// freePorts returns n distinct ports free on 127.0.0.1 a moment ago.
func freePorts(t testing.TB, n int) []string {
	t.Helper()
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ports := make([]string, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(errors.Join(errors.New("s3test: no free port"), err))
		}
		lns = append(lns, ln)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		ports = append(ports, port)
	}
	return ports
}
