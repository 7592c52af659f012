package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A lock file beside the database (<db>.lock) tells a restore that the database is
// in use. Every process that opens the database (serve, and the commands that open
// it for a moment) holds a shared lock on it while it is open, so that several
// servers can share one file; a restore takes it exclusively, without waiting, and
// refuses while anyone else holds it. The lock is advisory (flock on Unix, LockFileEx
// on Windows), held on the open file, so a killed process lets it go with its file
// descriptors: a crash never leaves a database locked.

// ErrInUse is returned by Restore, and by Open during a restore, when another
// process holds the lock of the database.
var ErrInUse = errors.New("the database is in use")

// lockPath is the lock file of the database at path: beside the file itself when
// path is a symbolic link, so that a server started with the link's name and a
// restore given the file's (or the other way round) take one lock.
func lockPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return path + ".lock"
}

// fileLock is a lock held on a lock file; Unlock lets it go and closes the file.
type fileLock struct{ f *os.File }

// lockShared takes the shared lock of the database at path, or fails at once with
// ErrInUse when a restore holds it exclusively.
func lockShared(path string) (*fileLock, error) { return lockFile(path, false) }

// lockExclusive takes the exclusive lock of the database at path, or fails at once
// with ErrInUse when anyone holds it.
func lockExclusive(path string) (*fileLock, error) { return lockFile(path, true) }

func lockFile(path string, exclusive bool) (*fileLock, error) {
	name := lockPath(path)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		// A read-only disk or directory: a lock file that is there is locked through a
		// read-only descriptor. Where none can be made, no restore can replace the
		// database either (it writes beside it): a shared lock is not needed then.
		var rerr error
		if f, rerr = os.Open(name); rerr != nil {
			if !exclusive && errors.Is(rerr, fs.ErrNotExist) {
				return &fileLock{}, nil
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
	}
	held, err := flock(f, exclusive)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if held {
		f.Close()
		who := "another process"
		if pids := lockHolders(name); len(pids) > 0 {
			who = "process " + strings.Join(pids, ", ")
		}
		what := "a restore is under way"
		if exclusive {
			what = "a petstore process has it open (serve, or a command)"
		}
		return nil, fmt.Errorf("%w: %s: %s holds the lock %s", ErrInUse, what, who, name)
	}
	return &fileLock{f: f}, nil
}

// Unlock lets the lock go. The lock file stays: removing it could let two processes
// lock two different files of the same name.
func (l *fileLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := funlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Hold takes the shared lock of the database at path for a user of the database
// beside the store that keeps it open after the store's Close (Litestream's last
// sync, internal/replica): until Unlock, a restore refuses, as it does while the
// store is open.
func Hold(path string) (interface{ Unlock() error }, error) {
	return lockShared(path)
}
