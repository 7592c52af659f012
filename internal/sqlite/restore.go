package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// Discard drops the database that the backup replaces; by default it is kept
	// beside it as <db>.before-restore-<UTC time>.
	Discard bool
	// Now is the clock that names the kept database; time.Now when nil.
	Now func() time.Time
}

// Restored is what Restore did: the backup it put in place, and where the database
// it replaced was kept ("" when there was none, or it was discarded).
type Restored struct {
	Snapshot
	Kept string
}

// Restore puts the backup at from in place of the database at path, after checking
// it (Inspect). It refuses, with ErrInUse, while any process has the database open.
//
// A crash at any point leaves either the old database or the new one under path,
// never the one's pages with the other's log: the old database is first made whole
// (its write-ahead log checkpointed into the file, and the log and its index
// removed), kept by a hard link, and only then is the new file, copied and synced
// beside it, renamed over it.
func Restore(ctx context.Context, from, path string, o RestoreOptions) (Restored, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	// A database reached through a symbolic link is restored where the link points:
	// the link stays, and the kept copy is of the data, not of the link.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if err := checkBackupFile(from, path); err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	lock, err := lockExclusive(path)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	defer lock.Unlock()
	tmp, err := copyBeside(from, path)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	defer os.Remove(tmp) // gone already once renamed
	// The copy is what is checked, so what goes in place is what passed the check,
	// whatever happens to the backup file meanwhile.
	snap, err := Inspect(ctx, tmp)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: the backup %s: %w", from, err)
	}
	snap.Path = from
	if err := removeSidecars(tmp); err != nil { // a read-only open may leave an -shm
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	r := Restored{Snapshot: snap}
	switch old, err := os.Stat(path); {
	case err == nil:
		// The new file gets the old one's permissions (a temporary file has 0600).
		if err := os.Chmod(tmp, old.Mode().Perm()); err != nil {
			return Restored{}, fmt.Errorf("restore: %w", err)
		}
		if err := settle(ctx, path); err != nil {
			return Restored{}, fmt.Errorf("restore: the database it replaces: %w", err)
		}
		if !o.Discard {
			r.Kept = path + ".before-restore-" + o.Now().UTC().Format("20060102T150405Z")
			if err := keep(path, r.Kept); err != nil {
				return Restored{}, fmt.Errorf("restore: keep the database it replaces: %w", err)
			}
		}
	case errors.Is(err, fs.ErrNotExist):
		// No database: a log or index left without one belongs to nothing, and
		// SQLite would apply such a log to the new file.
		if err := removeSidecars(path); err != nil {
			return Restored{}, fmt.Errorf("restore: %w", err)
		}
	default:
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	r.Path = path
	return r, nil
}

// settle makes the database at path whole in its one file: it opens it (which
// rolls back a hot rollback journal), checkpoints its write-ahead log into it and
// truncates the log, then removes the emptied log and the index of shared memory. No
// other process may have it open (the caller holds the exclusive lock).
func settle(ctx context.Context, path string) error {
	conn, err := openOne(path, false)
	if err != nil {
		return err
	}
	defer conn.Close()
	var busy, logged, moved int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &moved); err != nil {
		return fmt.Errorf("%w (if it cannot be opened, move it and its -wal and -shm files aside by hand, then restore)", err)
	}
	if busy != 0 {
		return errors.New("its write-ahead log could not be checkpointed: another connection holds it")
	}
	if err := conn.Close(); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-journal"} {
		fi, err := os.Stat(path + suffix)
		if err == nil && fi.Size() > 0 {
			return fmt.Errorf("%s%s still holds %d bytes after the checkpoint", path, suffix, fi.Size())
		}
	}
	return removeSidecars(path)
}

// removeSidecars removes the write-ahead log, the rollback journal and the index of
// shared memory of the database at path, when they are there.
func removeSidecars(path string) error {
	for _, suffix := range []string{"-wal", "-journal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return syncDir(filepath.Dir(path))
}

// keep makes the database at path also reachable as kept: a hard link, which costs
// nothing and leaves path as it is, or a synced copy where links are not supported.
func keep(path, kept string) error {
	if err := os.Link(path, kept); err == nil {
		return syncDir(filepath.Dir(kept))
	} else if errors.Is(err, fs.ErrExist) {
		return err
	}
	tmp, err := copyBeside(path, kept)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, kept); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(kept))
}

// copyBeside copies the file at from into a new temporary file in the directory of
// path, syncs it, and returns its name.
func copyBeside(from, path string) (string, error) {
	src, err := os.Open(from)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".restore-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", err
	}
	return dst.Name(), nil
}

// checkBackupFile refuses a backup that cannot be restored as one file: the database
// itself, or a file with a write-ahead log beside it that holds frames (a live
// database's file, copied while it ran, whose newest commits are in the log, not in
// it: a backup is made by petstore backup, or VACUUM INTO).
func checkBackupFile(from, path string) error {
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	if cur, err := os.Stat(path); err == nil && os.SameFile(fi, cur) {
		return fmt.Errorf("%s is the database itself, not a backup of it", from)
	}
	if wal, err := os.Stat(from + "-wal"); err == nil && wal.Size() > 0 {
		return fmt.Errorf("%s has a write-ahead log beside it (%s-wal, %d bytes): it is a live database's file, not a backup; make one with petstore backup", from, from, wal.Size())
	}
	return nil
}
