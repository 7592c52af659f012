package replica

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/sqlite"
)

func TestCheckURL(t *testing.T) {
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"file:///var/backups/petstore", true},
		{"s3://bucket/petstore", true},
		{"s3://bucket/petstore?endpoint=http://127.0.0.1:8333", true},
		{"file://host/dir", false},   // a host is not a directory
		{"file:relative/dir", false}, // no absolute path
		{"s3:///prefix", false},      // no bucket
		{"gs://bucket/prefix", false},
		{"/var/backups", false},
		{"", false},
	} {
		if err := CheckURL(c.url); (err == nil) != c.ok {
			t.Errorf("CheckURL(%q) = %v, want ok %v", c.url, err, c.ok)
		}
	}
	// A refusal never quotes a password in the URL.
	for _, u := range []string{"gs://key:s3cret@bucket/prefix", "file://key:s3cret@host/dir", "s3://key:s3cret@%zz/prefix"} {
		if err := CheckURL(u); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("CheckURL(%q) = %v, want a refusal without the password", u, err)
		}
	}
}

// TestAStoreReplicatedToADirectoryRestoresWhatItCommitted writes through the store
// with Litestream owning the checkpoints, closes both as the server does, and
// restores: the copy has every write, and a second restore into the same file is
// refused rather than overwriting it.
func TestAStoreReplicatedToADirectoryRestoresWhatItCommitted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "p.db")
	u := (&url.URL{Scheme: "file", Path: filepath.Join(dir, "replica")}).String()
	st, err := sqlite.OpenWith(ctx, path, sqlite.Options{ExternalCheckpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Start(ctx, path, u, Options{Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 50 {
		c, err := st.CreateCategory(ctx, petstore.Category{Name: "c" + string(rune('a'+i%26)) + string(rune('a'+i/26))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	st.Close()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}

	to := filepath.Join(t.TempDir(), "restored.db")
	if err := Restore(ctx, u, to, time.Time{}); err != nil {
		t.Fatal(err)
	}
	restored, err := sqlite.Open(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	for _, id := range ids {
		if _, err := restored.Category(ctx, id); err != nil {
			t.Errorf("category %d: %v", id, err)
		}
	}
	if err := Restore(ctx, u, to, time.Time{}); err == nil {
		t.Error("a restore over an existing file succeeded")
	}
}
