package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/replica"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// Continuous copies of the SQLite database (--replicate-to): Litestream, embedded
// (internal/replica), ships the WAL to a directory or an S3 bucket every
// --replicate-interval; `petstore replica restore` brings a copy back, to its latest
// state or to a point in time.

// checkReplicate checks --replicate-to and --replicate-interval.
func (c serveConfig) checkReplicate() error {
	if c.replicateTo == "" {
		return nil
	}
	if isPostgres(c.database) {
		return fmt.Errorf("--replicate-to copies an SQLite database; PostgreSQL has its own (WAL archiving, replicas)")
	}
	if c.replicateInterval <= 0 {
		return fmt.Errorf("--replicate-interval %v: want a positive duration", c.replicateInterval)
	}
	if err := replica.CheckURL(c.replicateTo); err != nil {
		return fmt.Errorf("--replicate-to: %w", err)
	}
	return nil
}

// openServeStore opens the store of `petstore serve` and, with --replicate-to,
// starts its continuous copy, which then owns the checkpoints of the WAL. The copy
// is closed by closeStore, after the store.
func openServeStore(ctx context.Context, c serveConfig, log *slog.Logger, h storeHooks) (petstore.Store, *replicating, error) {
	if c.replicateTo == "" {
		st, err := openStoreWith(ctx, c.database, h)
		return st, nil, err
	}
	db, err := sqlite.OpenWith(ctx, c.database, sqlite.Options{WakeDispatcher: h.wake, WakeFeed: h.feed, Tracer: h.tracer, ExternalCheckpoints: true})
	if err != nil {
		return nil, nil, hideURL(err, c.database)
	}
	// Litestream's connection outlives the store's close (its last sync): it holds
	// the database's lock of its own until then, so that a restore waits for it.
	held, err := sqlite.Hold(c.database)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	r, err := replica.Start(ctx, c.database, c.replicateTo, replica.Options{Interval: c.replicateInterval, Logger: log})
	if err != nil {
		db.Close()
		held.Unlock()
		return nil, nil, err
	}
	log.Info("the database is copied continuously", "to", redactDSN(c.replicateTo), "interval", c.replicateInterval)
	return db, &replicating{r, held}, nil
}

// replicating is the continuous copy of serve's database, and the lock it holds on
// the database until its last sync is done.
type replicating struct {
	r    *replica.Replicator
	held interface{ Unlock() error }
}

// closeStore closes the store, then the copy: Litestream's connection, open until
// then, keeps the store's last close from checkpointing frames it has not shipped,
// and its own close ships the last ones.
func closeStore(st petstore.Store, r *replicating, log *slog.Logger) {
	if st != nil {
		st.Close()
	}
	if r != nil {
		if err := r.r.Close(context.Background()); err != nil {
			log.Error("the database's copy: last sync", "err", err)
		}
		r.held.Unlock() // Litestream's files are closed: a restore may replace them now
	}
}

// replicaRestoreOptions are the flags of `petstore replica restore`.
type replicaRestoreOptions struct {
	from      string
	to        string
	timestamp string
}

func replicaRestoreFlags(o *replicaRestoreOptions) *flag.FlagSet {
	fs := newFlagSet("replica restore")
	fs.StringVar(&o.from, "from", "", "the replica: file:///dir or s3://bucket/prefix (?endpoint=http://host:port for an S3-compatible server; keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&o.to, "to", "", "the SQLite file to write; it must not exist")
	fs.StringVar(&o.timestamp, "timestamp", "", "restore the database as it was at this time (RFC 3339, 2026-11-27T15:04:05Z); the latest when empty")
	return fs
}

// replicaRestore writes the replica's database, as of --timestamp or the latest,
// to a new file, which `petstore serve --database FILE` then serves.
func replicaRestore(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o replicaRestoreOptions
	fs := replicaRestoreFlags(&o)
	if err := parseFlags(fs, args, getenv); err != nil {
		return badUsage("replica restore", err)
	}
	if fs.NArg() > 0 {
		return usageError{cmd: "replica restore", err: fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if o.from == "" || o.to == "" {
		return usageError{cmd: "replica restore", err: fmt.Errorf("--from and --to are required")}
	}
	var at time.Time
	if o.timestamp != "" {
		t, err := time.Parse(time.RFC3339Nano, o.timestamp)
		if err != nil {
			return usageError{cmd: "replica restore", err: fmt.Errorf("--timestamp %q: want RFC 3339 (2026-11-27T15:04:05Z)", o.timestamp)}
		}
		at = t
	}
	oldest, newest, err := replica.Bounds(ctx, o.from)
	if err != nil {
		return err
	}
	if err := replica.Restore(ctx, o.from, o.to, at); err != nil {
		return fmt.Errorf("%w (the replica holds %s to %s)", err, oldest.UTC().Format(time.RFC3339), newest.UTC().Format(time.RFC3339))
	}
	when := "its latest state"
	if !at.IsZero() {
		when = at.UTC().Format(time.RFC3339Nano)
	}
	fmt.Fprintf(stdout, "restored %s as of %s (the replica holds %s to %s)\n", o.to, when,
		oldest.UTC().Format(time.RFC3339), newest.UTC().Format(time.RFC3339))
	return nil
}
