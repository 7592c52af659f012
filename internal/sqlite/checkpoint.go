package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"
)

// SQLite's automatic checkpoint runs inside the commit that takes the log past 1,000
// pages, on the connection that committed: with one writer, that commit copies
// 4 MB into the database file and syncs it, and every order queued behind it waits
// (tens of milliseconds, up to hundreds under a purge; more often on a large
// database, whose orders dirty more pages and fill the log sooner). A server's
// writer therefore runs with wal_autocheckpoint(0), and the checkpointer copies the
// log on a connection of its own, beside the writer: a PASSIVE checkpoint takes no
// lock that a writer or a reader waits for.
//
// The log starts over only at a write that finds every frame copied, and a copy
// beside a busy writer never catches up with it: the writer's commits add frames
// while it runs. So once the log is past walFinishFrames and the copy is done, the
// checkpointer has the writer run one more PASSIVE checkpoint between two of its
// transactions: it copies the few frames committed since (a batch or two) and syncs
// the file, and the writer's next transaction starts the log over. The log is thus
// bounded as it is with SQLite's own checkpoints. Durability is
// the same: a commit is durable once its frames are synced to the log (FULL); a
// checkpoint only moves synced frames into the file.

const (
	// A copy runs once checkpointCommits commits were made since the last, or
	// checkpointIdle after one, and at most once per checkpointEvery: the commits of
	// that time share one copy and one sync of the database file, as the pages an
	// order writes (its pet, the day's sales, the tables' last pages) are mostly the
	// same; a quiet shop's commit is copied within a second, at one sync of the file.
	checkpointCommits = 8
	checkpointIdle    = time.Second
	checkpointEvery   = 50 * time.Millisecond
	// walFinishFrames is the log's size (in pages) at which the writer finishes the
	// copy so that the log starts over: SQLite's own threshold.
	walFinishFrames = 1000
	// walFinishTail and walCatchUps bound the writer's part: the checkpointer copies
	// again (at most walCatchUps times) while its last copy found at least
	// walFinishTail new pages.
	walFinishTail = 64
	walCatchUps   = 3
)

// checkpointer runs PASSIVE checkpoints on its own connection after the writer's
// commits.
type checkpointer struct {
	conn *sql.DB
	// finish runs a PASSIVE checkpoint on the writer's connection, between two of
	// its transactions.
	finish func(ctx context.Context) error
	// commits counts the writer's commits since the last copy; busy is told when
	// they reach checkpointCommits.
	commits atomic.Int64
	busy    chan struct{}
	stop    context.CancelFunc
	done    chan struct{}
}

// startCheckpointer opens the checkpointer's connection to dsn and starts it.
func startCheckpointer(ctx context.Context, dsn string, finish func(ctx context.Context) error) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite checkpointer: %w", err)
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxLifetime(0)
	conn.SetConnMaxIdleTime(0)
	if err := conn.PingContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("open sqlite checkpointer: %w", err)
	}
	// Its own context: the caller's ends with Open, the checkpointer with Close.
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	c := &checkpointer{conn: conn, finish: finish, busy: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	go c.run(runCtx)
	return c, nil
}

// committed tells the checkpointer that the writer committed; it never blocks.
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	if c.commits.Add(1) == checkpointCommits {
		select {
		case c.busy <- struct{}{}:
		default:
		}
	}
}

func (c *checkpointer) run(ctx context.Context) {
	defer close(c.done)
	idle := time.NewTicker(checkpointIdle)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.busy:
		case <-idle.C:
		}
		if c.commits.Swap(0) == 0 {
			continue
		}
		// An error (a checkpoint another process runs, a full disk) is left to the
		// next turn: the log keeps every frame meanwhile.
		_ = c.checkpoint(ctx)
		t := time.NewTimer(checkpointEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// checkpoint copies the log into the database file as far as the readers allow; past
// walFinishFrames the writer copies the rest, so that its next transaction starts
// the log over. A reader still on the log keeps it from starting over, as it keeps
// SQLite's own checkpoint: the log grows until the reader leaves, and the next turn
// finishes the copy. Nothing here waits for a reader (RESTART or TRUNCATE would,
// holding the writer: a backup's long read would stall every order).
func (c *checkpointer) checkpoint(ctx context.Context) error {
	frames, err := walCheckpoint(ctx, c.conn)
	if err != nil || frames < walFinishFrames {
		return err
	}
	// Catch up with what the writer committed during the copy, so that what is left
	// for the writer is a batch or two.
	for range walCatchUps {
		more, err := walCheckpoint(ctx, c.conn)
		if err != nil {
			return err
		}
		if more-frames < walFinishTail {
			break
		}
		frames = more
	}
	return c.finish(ctx)
}

// walCheckpoint runs a PASSIVE checkpoint on conn and returns the log's size in
// pages.
func walCheckpoint(ctx context.Context, conn interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (frames int, err error) {
	var busy, copied int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	return frames, nil
}

// close stops the checkpointer and closes its connection; the writer then runs the
// last checkpoint (Close).
func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	c.stop()
	<-c.done
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("close sqlite checkpointer: %w", err)
	}
	return nil
}
