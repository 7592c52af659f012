package media

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestSweepRemovesTheOldFilesOfPhotosNoPetHas(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, id := range []string{"kept", "orphan", "uploading"} {
		for _, size := range []string{"original", "thumb"} {
			if err := d.Put(ctx, id+"/"+size, "image/png", testPNG(t, 1)); err != nil {
				t.Fatal(err)
			}
			if id != "uploading" {
				if err := os.Chtimes(filepath.Join(dir, id, size), old, old); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var asked []string
	known := func(_ context.Context, ids []string) (map[string]bool, error) {
		asked = append(asked, ids...)
		return map[string]bool{"kept": true}, nil
	}
	n, err := Sweep(ctx, d, known, time.Now().Add(-time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1 photo removed", n, err)
	}
	slices.Sort(asked)
	if !slices.Equal(asked, []string{"kept", "orphan"}) {
		t.Errorf("asked about %v; a photo younger than the grace is not asked about", asked)
	}
	var left []string
	if err := d.List(ctx, "", func(key string, _ time.Time) error { left = append(left, key); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(left)
	if want := []string{"kept/original", "kept/thumb", "uploading/original", "uploading/thumb"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
