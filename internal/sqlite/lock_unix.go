//go:build unix

package sqlite

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// flock locks f without waiting; held reports that another holds a lock that
// conflicts.
func flock(f *os.File, exclusive bool) (held bool, err error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

func funlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
