package media

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func TestSweepRemovesTheOldFilesOfPhotosNoPetHas(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	kept, orphan, uploading := petstore.NewPhotoID(), petstore.NewPhotoID(), petstore.NewPhotoID()
	// Beside the photos, what else a folder may hold: a backup, a note, a file of an
	// odd name, and a folder the service may not read (lost+found on a volume).
	for _, key := range []string{kept + "/original", kept + "/thumb", orphan + "/original", orphan + "/thumb",
		uploading + "/original", uploading + "/thumb", "backups/petstore-2026.db", "notes/README", "ph_short/thumb"} {
		if err := d.Put(ctx, key, "image/png", testPNG(t, 1)); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(key, uploading) {
			if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(key)), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "lost+found"), 0o000); err != nil {
		t.Fatal(err)
	}
	var asked []string
	known := func(_ context.Context, ids []string) (map[string]bool, error) {
		asked = append(asked, ids...)
		return map[string]bool{kept: true}, nil
	}
	n, err := Sweep(ctx, d, known, time.Now().Add(-time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1 photo removed", n, err)
	}
	if want := []string{kept, orphan}; !sameSet(asked, want) {
		t.Errorf("asked about %v, want %v: a photo younger than the grace, or a key of no photo, is not asked about", asked, want)
	}
	for _, key := range []string{kept + "/original", kept + "/thumb", uploading + "/original", "backups/petstore-2026.db", "notes/README", "ph_short/thumb"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(key))); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, orphan)); err == nil {
		t.Error("the orphan's files are left")
	}
}
