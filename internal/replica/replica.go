// Package replica keeps a continuous copy of the SQLite database elsewhere (a
// directory, an S3 bucket) and restores it, to the latest state or to a point in
// time. It embeds Litestream (github.com/benbjohnson/litestream) as a library:
// Litestream uses the same pure-Go driver as internal/sqlite (modernc.org/sqlite), so
// the binary stays free of cgo, and one process to run and watch is simpler than a
// sidecar with its own configuration and lifecycle.
//
// Litestream reads each new WAL frame into LTX files, first into a directory beside
// the database (FILE-litestream), then to the replica every interval. It must see
// every frame before a checkpoint moves the frames into the database file, so it
// owns the checkpoints: the store is opened with sqlite.Options.ExternalCheckpoints
// (no automatic checkpoints, none at close), and Litestream holds a read transaction
// that keeps anyone else's checkpoint from restarting the WAL under it.
package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benbjohnson/litestream"
	_ "github.com/benbjohnson/litestream/file" // file:// replicas
	_ "github.com/benbjohnson/litestream/s3"   // s3:// replicas
)

// DefaultInterval is how often new WAL frames are read and shipped: a lost disk loses
// at most about two intervals of acknowledged writes (one to read the WAL, one to
// ship what was read).
const DefaultInterval = time.Second

// Options tune a Replicator.
type Options struct {
	// Interval is how often the WAL is read and the replica written; DefaultInterval
	// when 0.
	Interval time.Duration
	// Logger receives Litestream's log; slog.Default when nil.
	Logger *slog.Logger
}

// Replicator ships the WAL of one SQLite database to one replica until Close.
type Replicator struct {
	store *litestream.Store
	db    *litestream.DB
}

// CheckURL reports whether u names a replica this package can write: file:///dir or
// s3://bucket/prefix (with ?endpoint=http://host:port for an S3-compatible server).
func CheckURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		// Not %w: url.Error quotes the URL, which may hold a password.
		return errors.New("replica URL: not a URL; want file:///absolute/dir or s3://bucket/prefix")
	}
	switch p.Scheme {
	case "file":
		if p.Path == "" || p.Host != "" {
			return fmt.Errorf("replica URL %q: want file:///absolute/dir", redact(u))
		}
	case "s3":
		if p.Host == "" {
			return fmt.Errorf("replica URL %q: want s3://bucket/prefix", redact(u))
		}
	default:
		return fmt.Errorf("replica URL %q: the scheme is file or s3", redact(u))
	}
	if _, err := litestream.NewReplicaClientFromURL(u); err != nil {
		// Litestream's error may quote the URL, password and all.
		return fmt.Errorf("replica URL %q: %s", redact(u), strings.ReplaceAll(err.Error(), u, redact(u)))
	}
	return nil
}

// Start begins replicating the SQLite database at path (which must exist, in WAL
// mode) to the replica at u. The first sync runs before Start returns, so a
// replica that cannot be written (a wrong bucket, bad credentials) fails the start.
func Start(ctx context.Context, path, u string, o Options) (*Replicator, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	client, err := newClient(ctx, u)
	if err != nil {
		return nil, err
	}
	db := litestream.NewDB(path)
	db.MonitorInterval = o.Interval
	r := litestream.NewReplicaWithClient(db, client)
	r.SyncInterval = o.Interval
	db.Replica = r
	store := litestream.NewStore([]*litestream.DB{db}, litestream.DefaultCompactionLevels)
	store.Logger = slog.New(quieter{o.Logger.Handler()}).With("system", "litestream")
	db.SetLogger(store.Logger.With("db", filepath.Base(path)))
	if err := store.Open(ctx); err != nil {
		return nil, fmt.Errorf("replicate %s: %w", redact(u), err)
	}
	// A replica that cannot be written should stop the start, not fail quietly
	// in the background for days.
	if err := db.SyncAndWait(ctx); err != nil {
		store.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("replicate %s: first sync: %w", redact(u), err)
	}
	return &Replicator{store: store, db: db}, nil
}

// Sync reads the WAL and ships what is new to the replica now, and waits for it.
func (r *Replicator) Sync(ctx context.Context) error { return r.db.SyncAndWait(ctx) }

// Close ships the last frames and stops. Close the store first: Litestream's
// connection, still open, keeps the store's last close from checkpointing the WAL
// behind its back.
func (r *Replicator) Close(ctx context.Context) error {
	return r.store.Close(ctx)
}

// Restore writes the database that the replica at u held at time at (the latest
// when at is zero) to the file to, which must not exist.
func Restore(ctx context.Context, u, to string, at time.Time) error {
	if _, err := os.Stat(to); err == nil {
		return fmt.Errorf("restore: %s exists; restore into a new file", to)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	client, err := newClient(ctx, u)
	if err != nil {
		return err
	}
	r := litestream.NewReplicaWithClient(nil, client)
	opt := litestream.NewRestoreOptions()
	opt.OutputPath = to
	opt.Timestamp = at
	opt.IntegrityCheck = litestream.IntegrityCheckQuick
	if err := r.Restore(ctx, opt); err != nil {
		if errors.Is(err, litestream.ErrTxNotAvailable) || errors.Is(err, litestream.ErrNoSnapshots) {
			return fmt.Errorf("restore from %s: nothing to restore at that time: %w", redact(u), err)
		}
		return fmt.Errorf("restore from %s: %w", redact(u), err)
	}
	return nil
}

// Bounds returns the times of the oldest and the newest change the replica at u
// holds: a point-in-time restore can aim between them.
func Bounds(ctx context.Context, u string) (oldest, newest time.Time, err error) {
	client, err := newClient(ctx, u)
	if err != nil {
		return oldest, newest, err
	}
	return litestream.NewReplicaWithClient(nil, client).TimeBounds(ctx)
}

func newClient(ctx context.Context, u string) (litestream.ReplicaClient, error) {
	if err := CheckURL(u); err != nil {
		return nil, err
	}
	client, err := litestream.NewReplicaClientFromURL(u)
	if err != nil {
		return nil, fmt.Errorf("replica URL %s: %w", redact(u), err)
	}
	if err := client.Init(ctx); err != nil {
		if client.Type() == "s3" && os.Getenv("AWS_CA_BUNDLE") != "" {
			// Litestream gives the AWS SDK an HTTP client of its own, to which the SDK
			// cannot add the bundle's certificates.
			err = fmt.Errorf("%w (unset AWS_CA_BUNDLE: Litestream's S3 client cannot use it; SSL_CERT_FILE adds a CA)", err)
		}
		return nil, fmt.Errorf("replica %s: %w", redact(u), err)
	}
	return client, nil
}

// quieter logs Litestream's Info as Debug: it says at Info every monitor it starts
// and every snapshot it takes, which the service's log need not show. Its warnings and
// errors stay.
type quieter struct{ slog.Handler }

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return q.Handler.Enabled(ctx, demote(l))
}

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return q.Handler.Handle(ctx, r)
}

func (q quieter) WithAttrs(as []slog.Attr) slog.Handler { return quieter{q.Handler.WithAttrs(as)} }
func (q quieter) WithGroup(g string) slog.Handler       { return quieter{q.Handler.WithGroup(g)} }

func demote(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

// redact drops a password from a URL for errors and logs (credentials belong in
// AWS_* variables, but a URL may carry them anyway).
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return strings.SplitN(u, "?", 2)[0]
	}
	return p.Redacted()
}
