package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/sqlite"
)

// TestBackupRefusesWhatItCannotDoWell: a backup never replaces a file unless told,
// and a PostgreSQL database is pointed at pg_dump.
func TestBackupRefusesWhatItCannotDoWell(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	if err := run(context.Background(), []string{"migrate", "--database", db}, noEnv, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	taken := filepath.Join(dir, "taken.db")
	if err := os.WriteFile(taken, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		says string // in the error; "" for success
	}{
		{"over a file", []string{"--to", taken, "--database", db}, "exists (--force replaces it)"},
		{"over a file, forced", []string{"--to", taken, "--database", db, "--force"}, ""},
		{"of a database that is not there", []string{"--to", filepath.Join(dir, "b.db"), "--database", filepath.Join(dir, "none.db")}, "no such file"},
		{"of PostgreSQL", []string{"--to", filepath.Join(dir, "pg.db"), "--database", "postgres://u:secret@db/shop"}, "pg_dump --format=custom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), append([]string{"backup"}, tt.args...), noEnv, &out, io.Discard)
			switch {
			case tt.says == "" && err != nil:
				t.Fatalf("backup: %v", err)
			case tt.says == "" && !strings.Contains(out.String(), "schema    migration"):
				t.Errorf("backup printed:\n%s", out.String())
			case tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)):
				t.Errorf("backup: %v, want an error saying %q", err, tt.says)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); err == nil {
		t.Error("a backup of a missing database made one")
	}
}

// TestRestoreWaitsForTheServersToStop: serve holds the database's shared lock, so a
// restore is refused, naming the lock file and (on Linux) the server's process, until
// the server has stopped; then the old database is kept beside the restored one.
func TestRestoreWaitsForTheServersToStop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildPetstore(t)
	db := filepath.Join(t.TempDir(), "p.db")
	key := adminKey(t, bin, db)
	addr := freeAddr(t)
	server := startBinary(t, bin, "--addr", addr, "--database", db, "--no-bootstrap", "--admin-addr", "off")
	api := adminClient{t: t, base: "http://" + addr + "/v1", key: key}
	api.pet(5)
	backup := filepath.Join(t.TempDir(), "b.db")
	if err := run(context.Background(), []string{"backup", "--to", backup, "--database", db}, noEnv, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	api.pet(5) // after the backup: the restore takes it back

	var out bytes.Buffer
	err := run(context.Background(), []string{"restore", "--from", backup, "--database", db}, noEnv, &out, io.Discard)
	if !errors.Is(err, sqlite.ErrInUse) || !strings.Contains(err.Error(), db+".lock") {
		t.Fatalf("a restore under a running server: %v, want it refused naming %s.lock", err, db)
	}
	if pid := strconv.Itoa(server.Cmd.Process.Pid); runtime.GOOS == "linux" && !strings.Contains(err.Error(), pid) {
		t.Errorf("the refusal does not name the server's process %s: %v", pid, err)
	}
	t.Log(err)
	server.Stop(10 * time.Second)
	out.Reset()
	if err := run(context.Background(), []string{"restore", "--from", backup, "--database", db}, noEnv, &out, io.Discard); err != nil {
		t.Fatalf("a restore once the server stopped: %v", err)
	}
	kept := regexp.MustCompile(`kept as (\S+)`).FindStringSubmatch(out.String())
	if kept == nil {
		t.Fatalf("the restore does not say where the old database is:\n%s", out.String())
	}
	for path, pets := range map[string]int64{db: 1, kept[1]: 2} {
		if s, err := sqlite.Inspect(context.Background(), path); err != nil || s.Pets != pets {
			t.Errorf("%s: %d pets (%v), want %d", path, s.Pets, err, pets)
		}
	}
}

// TestServeTakesBackupsOnItsSchedule runs a server that backs up every second and
// keeps two: the backups are counted on /metrics, the directory holds the newest two,
// each a database that passes its checks, and files it did not make are left alone.
func TestServeTakesBackupsOnItsSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildPetstore(t)
	db := filepath.Join(t.TempDir(), "p.db")
	dir := filepath.Join(t.TempDir(), "backups")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	others := []string{"notes.txt", "petstore-old.db", "petstore-20200101T000000Z.db.txt"}
	for _, name := range others {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	op := freeAddr(t)
	startBinary(t, bin, "--addr", freeAddr(t), "--admin-addr", op, "--database", db, "--no-bootstrap",
		"--backup-dir", dir, "--backup-every", "1s", "--backup-keep", "2")
	metric := func(name string) float64 {
		res, err := http.Get("http://" + op + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(body)
		if m == nil {
			t.Fatalf("/metrics has no %s", name)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	waitUntil(t, 30*time.Second, func() bool { return metric("petstore_backups_total") >= 4 }, "4 backups taken")
	if n := metric("petstore_backup_failures_total"); n != 0 {
		t.Errorf("%v backups failed", n)
	}
	if last := metric("petstore_backup_last_success_timestamp_seconds"); time.Since(time.Unix(int64(last), 0)) > 10*time.Second {
		t.Errorf("the last backup succeeded at %v", time.Unix(int64(last), 0))
	}
	// The newest two, and what the schedule did not make (a prune may be under way:
	// wait for it).
	var made []string
	waitUntil(t, 10*time.Second, func() bool {
		made, _ = filepath.Glob(filepath.Join(dir, "petstore-2*Z.db"))
		return len(made) == 2
	}, "two backups kept")
	for _, path := range made {
		if s, err := sqlite.Inspect(context.Background(), path); err != nil || s.Version == 0 {
			t.Errorf("%s: %+v %v", path, s, err)
		}
	}
	for _, name := range others {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s, not a backup of the schedule, is gone: %v", name, err)
		}
	}
}
