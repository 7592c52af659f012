package media

import (
	"context"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/s3test"
)

func TestS3(t *testing.T) {
	server := s3test.Start(t)
	client := server.Client()
	n := 0
	storeSuite(t, func(t *testing.T) Store {
		// One server for the suite; each test its own prefix in the bucket.
		n++
		return NewS3(client, server.Bucket, "suite/"+strconv.Itoa(n))
	})

	t.Run("Open reads the URL and the credentials from the environment", func(t *testing.T) {
		for _, kv := range server.Env() {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		// Nothing from this machine's own AWS files or instance metadata.
		t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
		t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
		raw := "s3://" + server.Bucket + "/shop/photos/?endpoint=" + url.QueryEscape(server.Endpoint) + "&region=" + s3test.Region
		s, err := Open(context.Background(), raw)
		if err != nil {
			t.Fatalf("Open(%q): %v", raw, err)
		}
		if err := s.Put(context.Background(), "p1/thumb", "image/png", testPNG(t, 3)); err != nil {
			t.Fatalf("Put: %v", err)
		}
		if got := server.Keys(t, "shop/"); !slices.Equal(got, []string{"shop/photos/p1/thumb"}) {
			t.Errorf("the bucket holds %q under shop/, want shop/photos/p1/thumb", got)
		}
	})
}
