package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/acme-pets/petstore/internal/sqlite"
)

// pgBackupHint is what the backup commands answer for a PostgreSQL database, which
// is backed up with PostgreSQL's own tools.
const pgBackupHint = "on PostgreSQL, back up with pg_dump (pg_dump --format=custom --file=petstore.dump \"$PETSTORE_DATABASE\") " +
	"and restore with pg_restore, or use pg_basebackup or the provider's backups: see docs/OPERATING.md#backups"

// backupOptions are the flags of `petstore backup`.
type backupOptions struct {
	database, to string
	force        bool
}

func backupFlags(o *backupOptions) *flag.FlagSet {
	fs := newFlagSet("backup")
	fs.StringVar(&o.to, "to", "", "the backup `FILE` to write; it must not exist unless --force")
	fs.StringVar(&o.database, "database", defaultDatabase, "SQLite file to back up (PostgreSQL: pg_dump)")
	fs.BoolVar(&o.force, "force", false, "replace the backup file if it exists")
	return fs
}

// backupCmd answers `petstore backup --to FILE`: a copy of the live database as of
// one instant, checked, and what it holds.
func backupCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o backupOptions
	fs := backupFlags(&o)
	if err := parseFlags(fs, args, getenv); err != nil {
		return badUsage("backup", err)
	}
	switch {
	case fs.NArg() > 0:
		return usageError{cmd: "backup", err: fmt.Errorf("backup: unexpected argument %q", fs.Arg(0))}
	case o.to == "":
		return usageError{cmd: "backup", err: fmt.Errorf("backup: --to FILE is required")}
	case isPostgres(o.database):
		return fmt.Errorf("backup: %s", pgBackupHint)
	}
	s, err := sqlite.BackupFile(ctx, o.database, o.to, o.force)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s\n", o.database, s.Path)
	writeSnapshot(stdout, s)
	return nil
}

// writeSnapshot prints what a backup holds, one fact a line; the instant's line is
// for scripts too (the restore drill reads it).
func writeSnapshot(w io.Writer, s sqlite.Snapshot) {
	if !s.At.IsZero() {
		fmt.Fprintf(w, "  instant   %s (every commit before it is in the copy)\n", s.At.Format(time.RFC3339Nano))
		fmt.Fprintf(w, "  took      %s\n", s.Took.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "  size      %d bytes\n", s.Size)
	fmt.Fprintf(w, "  schema    migration %d\n", s.Version)
	fmt.Fprintf(w, "  pets      %d\n", s.Pets)
	newest := ""
	if !s.NewestOrder.IsZero() {
		newest = ", newest placed " + s.NewestOrder.Format(time.RFC3339Nano)
	}
	fmt.Fprintf(w, "  orders    %d%s\n", s.Orders, newest)
	fmt.Fprintf(w, "  accounts  %d\n", s.Accounts)
	fmt.Fprintf(w, "  events    %d\n", s.Events)
}

// restoreOptions are the flags of `petstore restore`.
type restoreOptions struct {
	database, from string
	discard        bool
}

func restoreFlags(o *restoreOptions) *flag.FlagSet {
	fs := newFlagSet("restore")
	fs.StringVar(&o.from, "from", "", "the backup `FILE` to restore (made by petstore backup or --backup-dir)")
	fs.StringVar(&o.database, "database", defaultDatabase, "SQLite file to replace (PostgreSQL: pg_restore)")
	fs.BoolVar(&o.discard, "discard-current", false, "do not keep the database it replaces as <database>.before-restore-<time>")
	return fs
}

// restoreCmd answers `petstore restore --from FILE`: the backup, checked, in place of
// the database, which no process may have open.
func restoreCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o restoreOptions
	fs := restoreFlags(&o)
	if err := parseFlags(fs, args, getenv); err != nil {
		return badUsage("restore", err)
	}
	switch {
	case fs.NArg() > 0:
		return usageError{cmd: "restore", err: fmt.Errorf("restore: unexpected argument %q", fs.Arg(0))}
	case o.from == "":
		return usageError{cmd: "restore", err: fmt.Errorf("restore: --from FILE is required")}
	case isPostgres(o.database):
		return fmt.Errorf("restore: %s", pgBackupHint)
	}
	r, err := sqlite.Restore(ctx, o.from, o.database, sqlite.RestoreOptions{Discard: o.discard})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s from %s\n", r.Path, o.from)
	writeSnapshot(stdout, r.Snapshot)
	if r.Kept != "" {
		fmt.Fprintf(stdout, "the database it replaced is kept as %s\n", r.Kept)
	}
	return nil
}

// checkBackups checks the flags of the scheduled backups.
func (c serveConfig) checkBackups() error {
	switch {
	case c.backupEvery < time.Second:
		// Backups are named to the second.
		return fmt.Errorf("--backup-every %v: want 1s or more", c.backupEvery)
	case c.backupKeep < 1:
		return fmt.Errorf("--backup-keep %d: want 1 or more", c.backupKeep)
	case c.backupDir != "" && isPostgres(c.database):
		return fmt.Errorf("--backup-dir: %s", pgBackupHint)
	}
	return nil
}
