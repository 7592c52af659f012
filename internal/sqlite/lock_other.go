//go:build !unix && !windows

package sqlite

import (
	"errors"
	"os"
)

// flock has no advisory lock to take on this system: a database cannot be opened
// here with the guarantee that a restore will not replace it under the process.
func flock(f *os.File, exclusive bool) (bool, error) {
	return false, errors.New("advisory file locks are not supported on this system")
}

func funlock(f *os.File) error { return nil }
