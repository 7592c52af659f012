package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/sqlite"
)

// A restore refuses what is not a backup it can put in place as one file: the
// database itself, and a live database's file whose newest commits are still in the
// write-ahead log beside it.
func TestARestoreRefusesTheDatabaseItselfAndALiveFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "shop.db")
	db, _, _ := shop(t, path, 5)
	// While it is open its log holds the writes: copy the file and its log, as a
	// careless copy of a running shop would.
	live := filepath.Join(dir, "live.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == "-wal" && len(b) == 0 {
			t.Fatal("the open database's log is empty: the test needs frames in it")
		}
		if err := os.WriteFile(live+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, from, says string }{
		{"the database itself", path, "is the database itself"},
		{"a live database's file", live, "write-ahead log beside it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = sqlite.Restore(ctx, tc.from, path, sqlite.RestoreOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("restore from %s: %v; want a refusal saying %q", tc.from, err, tc.says)
			}
			after, err := os.ReadFile(path)
			if err != nil || string(after) != string(before) {
				t.Fatalf("the refused restore changed the database (%v)", err)
			}
		})
	}
}

// A database reached through a symbolic link (a data directory on another disk) is
// restored where the link points: the link stays a link, the file keeps its mode
// (a link's own mode is 0777, which a restore once gave the file), and the kept
// database is the old data.
func TestARestoreThroughASymbolicLinkReplacesTheFileItPointsTo(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	real := filepath.Join(dir, "disk", "shop.db")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	db, _, _ := shop(t, real, 5)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(real, 0o640); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "backup.db")
	if _, err := sqlite.BackupFile(ctx, real, backup, false); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "shop.db")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r, err := sqlite.Restore(ctx, backup, link, sqlite.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link (%v)", link, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("the restored file has mode %v, want the old file's 0640", fi.Mode().Perm())
	}
	if kept, err := os.Lstat(r.Kept); err != nil || !kept.Mode().IsRegular() {
		t.Errorf("the kept database %s is not a file of data (%v)", r.Kept, err)
	}
	reopened, err := sqlite.Open(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	reopened.Close()
}
