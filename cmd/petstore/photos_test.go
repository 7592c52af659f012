package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/media/phototest"
	"github.com/acme-pets/petstore/internal/s3test"
)

// TestPhotosAreKeptWhereTheOperatorSays runs the binary with its photos in the
// default directory beside the SQLite file, and in a bucket of a real S3-compatible
// server (SeaweedFS): an upload's three sizes are written there, a second process
// (with nothing in memory) serves them from there, and a deletion removes them.
func TestPhotosAreKeptWhereTheOperatorSays(t *testing.T) {
	bin := buildPetstore(t)
	for _, kind := range []string{"dir", "s3"} {
		t.Run(kind, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "petstore.db")
			var (
				args  []string
				files func(id string) []string // the keys or paths of a photo's files
			)
			switch kind {
			case "dir":
				files = func(id string) []string {
					found, _ := filepath.Glob(filepath.Join(filepath.Dir(dsn), "media", id, "*"))
					return found
				}
			case "s3":
				s := s3test.Start(t)
				for _, kv := range s.Env() {
					k, v, _ := strings.Cut(kv, "=")
					t.Setenv(k, v)
				}
				args = []string{"--media-url", "s3://" + s.Bucket + "/shop?endpoint=" + url.QueryEscape(s.Endpoint)}
				files = func(id string) []string { return s.Keys(t, "shop/"+id+"/") }
			}
			key, base, stop, _ := serveReplicated(t, bin, dsn, args...)
			var cat, pet struct{ ID int64 }
			mustCall(t, base, key, "POST", "/categories", `{"name":"Dogs"}`, 201, &cat)
			mustCall(t, base, key, "POST", "/pets", fmt.Sprintf(`{"name":"Rex","categoryId":%d}`, cat.ID), 201, &pet)

			req, _ := http.NewRequest("POST", fmt.Sprintf("%s/pets/%d/photos", base, pet.ID), bytes.NewReader(phototest.JPEG(t, 900, 600)))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "image/jpeg")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var ph struct {
				ID   string
				URLs struct{ Thumb string } `json:"urls"`
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 201 || json.Unmarshal(body, &ph) != nil {
				t.Fatalf("upload: %d %s", res.StatusCode, body)
			}
			if got := files(ph.ID); len(got) != 3 {
				t.Fatalf("the photo's files: %v, want its three sizes", got)
			}
			stop(10 * time.Second)

			// Another process, its memory empty, serves the photo from where it is kept.
			_, base2, _, _ := serveReplicated(t, bin, dsn, args...)
			origin := strings.TrimSuffix(base2, "/v1")
			thumb := getPhotoFrom(t, origin+ph.URLs.Thumb)
			if len(thumb) == 0 || !bytes.HasPrefix(thumb, []byte{0xFF, 0xD8}) {
				t.Fatalf("the thumb is %d bytes, not a JPEG", len(thumb))
			}
			mustCall(t, base2, key, "DELETE", fmt.Sprintf("/pets/%d/photos/%s", pet.ID, ph.ID), "", 204, nil)
			if got := files(ph.ID); len(got) != 0 {
				t.Errorf("after the deletion the files are left: %v", got)
			}
		})
	}
}

// mustCall calls the API and fails the test unless it answers want.
func mustCall(t *testing.T, base, key, method, path, body string, want int, v any) {
	t.Helper()
	status, err := replCall(base, key, method, path, body, v)
	if err != nil || status != want {
		t.Fatalf("%s %s: %d, %v; want %d", method, path, status, err, want)
	}
}

func getPhotoFrom(t *testing.T, u string) []byte {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return b
}

// A bucket that is not there stops the start, naming the flag, rather than failing
// the first upload.
func TestAMissingBucketStopsTheStart(t *testing.T) {
	s := s3test.Start(t)
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	code, _, stderr := runExit(t, noEnv, "serve", "--database", filepath.Join(t.TempDir(), "p.db"), "--admin-addr", "off", "--addr", "127.0.0.1:0",
		"--media-url", "s3://no-such-bucket/shop?endpoint="+url.QueryEscape(s.Endpoint))
	if code == 0 || !strings.Contains(stderr, "--media-url") || !strings.Contains(stderr, "no-such-bucket") {
		t.Errorf("exit %d, %s", code, stderr)
	}
}
