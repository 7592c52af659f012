package media

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDir(t *testing.T) {
	storeSuite(t, func(t *testing.T) Store {
		d, err := NewDir(filepath.Join(t.TempDir(), "media"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

func TestDirFiles(t *testing.T) {
	ctx := context.Background()
	d, err := NewDir(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	data := testPNG(t, 1)
	for _, size := range []string{"original", "thumb"} {
		if err := d.Put(ctx, "p1/"+size, "image/png", data); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("a key is a file at its path, readable by all, with no temporary file left", func(t *testing.T) {
		var files []string
		err := filepath.WalkDir(d.Root(), func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o644)
			if e.IsDir() {
				want = 0o755 | fs.ModeDir
			}
			if path != d.Root() && info.Mode() != want {
				t.Errorf("%s has mode %v, want %v", path, info.Mode(), want)
			}
			if !e.IsDir() {
				rel, _ := filepath.Rel(d.Root(), path)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(files, " ") != "p1/original p1/thumb" {
			t.Errorf("the directory holds %q, want p1/original and p1/thumb", files)
		}
	})
	t.Run("a photo's directory goes with its last file", func(t *testing.T) {
		if err := d.Delete(ctx, "p1/original"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(d.Root(), "p1")); err != nil {
			t.Fatalf("p1 went with a file left in it: %v", err)
		}
		if err := d.Delete(ctx, "p1/thumb"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(d.Root(), "p1")); !os.IsNotExist(err) {
			t.Errorf("p1 is still there (%v)", err)
		}
		if _, err := os.Stat(d.Root()); err != nil {
			t.Errorf("the root went too: %v", err)
		}
	})
	t.Run("a temporary file is not listed", func(t *testing.T) {
		if err := d.Put(ctx, "p2/thumb", "image/png", data); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.Root(), "p2", tempPrefix+"123"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		var keys []string
		if err := d.List(ctx, "", func(key string, _ time.Time) error { keys = append(keys, key); return nil }); err != nil {
			t.Fatal(err)
		}
		if strings.Join(keys, " ") != "p2/thumb" {
			t.Errorf("List = %q, want p2/thumb alone", keys)
		}
	})
}

func TestOpenDir(t *testing.T) {
	dir := t.TempDir()
	for _, raw := range []string{filepath.Join(dir, "a"), "file://" + filepath.Join(dir, "b")} {
		s, err := Open(context.Background(), raw)
		if err != nil {
			t.Fatalf("Open(%q): %v", raw, err)
		}
		if d, ok := s.(*Dir); !ok || !strings.HasPrefix(d.Root(), dir) {
			t.Errorf("Open(%q) = %#v, want a Dir under %s", raw, s, dir)
		}
	}
	for _, raw := range []string{"", "ftp://host/x", "file://elsewhere/x", "s3://", "s3://bucket/p?secret=1", "s3://bucket?endpoint=ftp://x"} {
		if _, err := Open(context.Background(), raw); err == nil {
			t.Errorf("Open(%q) = nil error", raw)
		}
	}
}
