package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Backups are made with VACUUM INTO rather than SQLite's online backup API (which
// modernc.org/sqlite exposes too, as NewBackup on its driver connection): VACUUM INTO
// is a plain statement, so it runs on a connection of the read pool while the writer
// keeps placing orders; it reads the whole database in one read transaction, so the
// copy is the state of one instant even while other processes write (the backup API,
// stepped, starts over whenever another process writes, and a busy shop writes all
// the time); and its output is compacted, holds no write-ahead log, and is a single
// file ready to be copied elsewhere.

// Snapshot is what a backup holds, as read back from the copy.
type Snapshot struct {
	Path string
	// At is the instant of the copy: every transaction committed before At is in
	// it. It is taken just before the copy's read transaction starts, so a commit
	// from between the two may be in the copy too.
	At   time.Time
	Took time.Duration // zero when the file was only inspected
	Size int64
	// Version is the newest migration the database has had.
	Version                        int64
	Pets, Orders, Accounts, Events int64
	NewestOrder                    time.Time // zero without orders
}

// Backup copies the database to dst, a file that must not exist unless force, as
// of one instant while the service keeps running, and checks the copy (see Inspect).
// The copy is written beside dst under a temporary name, synced, and renamed, so that
// dst is a whole backup or none.
func (db *DB) Backup(ctx context.Context, dst string, force bool) (Snapshot, error) {
	return backup(ctx, db.read, dst, force, db.now)
}

// BackupFile is Backup of the database file at src, for a process that does not
// serve it (petstore backup beside a running server). It holds the shared lock of the
// database while it copies, so that no restore replaces the file under it.
func BackupFile(ctx context.Context, src, dst string, force bool) (Snapshot, error) {
	if _, err := os.Stat(src); err != nil {
		return Snapshot{}, fmt.Errorf("backup: %w", err)
	}
	lock, err := lockShared(src)
	if err != nil {
		return Snapshot{}, err
	}
	defer lock.Unlock()
	conn, err := openOne(src, true)
	if err != nil {
		return Snapshot{}, err
	}
	defer conn.Close()
	return backup(ctx, conn, dst, force, time.Now)
}

// backup writes the copy of the database of pool to dst.
func backup(ctx context.Context, pool *sql.DB, dst string, force bool, now func() time.Time) (Snapshot, error) {
	if !force {
		if _, err := os.Lstat(dst); err == nil {
			return Snapshot{}, fmt.Errorf("backup: %s exists (--force replaces it)", dst)
		}
	}
	// VACUUM INTO writes only into a file that does not exist or is empty.
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return Snapshot{}, fmt.Errorf("backup: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // gone already once renamed
	conn, err := pool.Conn(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("backup: %w", err)
	}
	defer conn.Close()
	at := now()
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, tmp.Name()); err != nil {
		return Snapshot{}, fmt.Errorf("backup: vacuum into %s: %w", tmp.Name(), err)
	}
	took := now().Sub(at)
	snap, err := Inspect(ctx, tmp.Name())
	if err != nil {
		return Snapshot{}, fmt.Errorf("backup: the copy: %w", err)
	}
	if err := syncFile(tmp.Name()); err != nil {
		return Snapshot{}, fmt.Errorf("backup: %w", err)
	}
	if err := place(tmp.Name(), dst, force); err != nil {
		return Snapshot{}, fmt.Errorf("backup: %w", err)
	}
	snap.Path, snap.At, snap.Took = dst, at.UTC(), took
	return snap, nil
}

// place renames tmp to dst, and syncs their directory. Without force it links
// instead, which fails if dst exists, so that a file made meanwhile is never replaced.
func place(tmp, dst string, force bool) error {
	if force {
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
	} else {
		err := os.Link(tmp, dst)
		switch {
		case errors.Is(err, fs.ErrExist):
			return fmt.Errorf("%s exists (--force replaces it)", dst)
		case err != nil:
			// A file system without hard links: check, then rename.
			if _, serr := os.Lstat(dst); serr == nil {
				return fmt.Errorf("%s exists (--force replaces it)", dst)
			}
			if err := os.Rename(tmp, dst); err != nil {
				return err
			}
		}
		os.Remove(tmp)
	}
	return syncDir(filepath.Dir(dst))
}

// Inspect checks the SQLite file at path as a database petstore can serve: SQLite's
// integrity check passes, it was migrated by petstore (goose's table) to a version
// this build knows, and it has petstore's tables. It reads what the file holds.
func Inspect(ctx context.Context, path string) (Snapshot, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Snapshot{}, err
	}
	conn, err := openOne(path, true)
	if err != nil {
		return Snapshot{}, err
	}
	defer conn.Close()
	if err := integrityCheck(ctx, conn); err != nil {
		return Snapshot{}, fmt.Errorf("%s: %w", path, err)
	}
	s := Snapshot{Path: path, Size: fi.Size()}
	if err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&s.Version); err != nil {
		return Snapshot{}, fmt.Errorf("%s is not a petstore database (no migration record): %w", path, err)
	}
	newest, err := LatestVersion()
	if err != nil {
		return Snapshot{}, err
	}
	if s.Version > newest {
		return Snapshot{}, fmt.Errorf("%s is at migration %d, newer than this petstore knows (%d): restore it with a newer build", path, s.Version, newest)
	}
	var newestOrder sql.NullString
	err = conn.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM pets), (SELECT count(*) FROM orders),
		(SELECT count(*) FROM accounts), (SELECT count(*) FROM events), (SELECT max(created_at) FROM orders)`).
		Scan(&s.Pets, &s.Orders, &s.Accounts, &s.Events, &newestOrder)
	if err != nil {
		return Snapshot{}, fmt.Errorf("%s is not a petstore database: %w", path, err)
	}
	if newestOrder.Valid {
		if s.NewestOrder, err = parseTime(newestOrder.String); err != nil {
			return Snapshot{}, err
		}
	}
	return s, nil
}

// integrityCheck runs PRAGMA integrity_check, which answers one row "ok" or rows
// that name the damage.
func integrityCheck(ctx context.Context, conn *sql.DB) error {
	rows, err := conn.QueryContext(ctx, `PRAGMA integrity_check(20)`)
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("integrity check: %w", err)
		}
		found = append(found, line)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if len(found) != 1 || found[0] != "ok" {
		return fmt.Errorf("integrity check failed: %s", strings.Join(found, "; "))
	}
	return nil
}

// LatestVersion is the newest migration this build has for SQLite: a database at
// this version or older can be served (Open migrates it the rest of the way).
func LatestVersion() (int64, error) {
	var newest int64
	for _, m := range goMigrations() {
		newest = max(newest, m.Version)
	}
	files, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		n, _, _ := strings.Cut(f.Name(), "_")
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s: %w", f.Name(), err)
		}
		newest = max(newest, v)
	}
	return newest, nil
}

// openOne opens one connection to the database file at path, read-only when ro,
// that waits for locks rather than fail at once.
func openOne(path string, ro bool) (*sql.DB, error) {
	uri := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(5000)"
	if ro {
		uri += "&mode=ro"
	}
	conn, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	conn.SetMaxOpenConns(1)
	return conn, nil
}

// syncFile flushes the file at name to the disk.
func syncFile(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir flushes a directory's entries (a rename in it) to the disk. Windows cannot
// open a directory to sync it, and its renames need no such step: it does nothing there.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
