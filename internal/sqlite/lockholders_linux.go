package sqlite

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockHolders names the processes that hold a flock on the file name, from
// /proc/locks (lines such as "1: FLOCK  ADVISORY  READ  1234 08:01:5678 0 EOF",
// where 08:01 is the device and 5678 the inode). It is for the error message only:
// nothing when it cannot tell.
func lockHolders(name string) []string {
	fi, err := os.Stat(name)
	if err != nil {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	var pids []string
	seen := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		// "1:" "FLOCK" "ADVISORY" "READ" pid dev:ino start end; a blocked waiter has "->" first.
		if len(fields) >= 6 && fields[1] == "FLOCK" && fields[5] == want && !seen[fields[4]] {
			seen[fields[4]] = true
			pids = append(pids, fields[4])
		}
	}
	return pids
}
