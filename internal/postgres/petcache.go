package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/acme-pets/petstore/internal/petcache"
)

// Pets read by id are cached in each process (package petcache). A process forgets
// the pets its own writes touched at once, and tells the others which pets they
// were with NOTIFY on a channel of the schema (petNotices). Each process LISTENs on
// one connection of its own and forgets the pets it hears of; while it is not
// listening (not yet, or its connection was lost) its cache is suspended, empty and
// unused. The cache's time (petcache.DefaultTTL) is the hard bound on how long
// another process's change may stay unseen, whatever happens to the notifications
// (a crash between a commit and its notice, a notice that lags, a change made with
// psql): the notices only make the usual case a matter of milliseconds.
//
// The notices are sent after the commit, from one goroutine, in a transaction of
// their own: a NOTIFY in the writing transaction would take the database's
// notification queue lock at commit and hold it across the commit's WAL flush, so
// that every transaction that changed a pet, in every process, would commit one
// after the other, one flush each (docs/ARCHITECTURE.md).

// listenerCheck is how long the listener waits for a notice before it checks that its
// connection is still there. A lost connection is usually seen at once (the server
// ends it with an error); one lost silently (a cut network) is seen within this time,
// and meanwhile the cache's time still bounds what it may miss.
const listenerCheck = 5 * time.Second

// Backoffs of the listener's reconnection: the first retry, and the longest wait.
const (
	listenFirstRetry = 50 * time.Millisecond
	listenMaxRetry   = 2 * time.Second
)

// maxPendingNotices is how many pet ids the notifier gathers before it tells the
// others to forget every pet instead (a backlog while the database is away).
const maxPendingNotices = 4096

// maxNoticePayload bounds one notice's payload: PostgreSQL's limit is 8000 bytes.
const maxNoticePayload = 7000

// forgetAll is the payload's list that stands for every pet.
const forgetAll = "*"

// petNotices keeps a DB's pet cache in step with the other processes: listen forgets
// what they tell, and notify tells them what this one changed.
type petNotices struct {
	pool    *pgxpool.Pool
	cache   *petcache.Cache
	channel string
	// self starts the payloads of this process's notices, which its own listener
	// skips: its cache forgot those pets when it wrote them.
	self string

	// mu guards pending and all: what the notifier has yet to send.
	mu      sync.Mutex
	pending map[int64]struct{}
	all     bool
	kick    chan struct{}

	// listenerPID is the backend process id of the listening connection, 0 while
	// there is none (tests end it with pg_terminate_backend).
	listenerPID atomic.Uint32

	stop context.CancelFunc
	done sync.WaitGroup
}

// startPetNotices listens on the schema's channel (once, before it returns, so that
// a new DB caches from its first read when the database answers) and starts the
// listener and the notifier.
func startPetNotices(ctx context.Context, pool *pgxpool.Pool, cache *petcache.Cache) (*petNotices, error) {
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, fmt.Errorf("pet notices: %w", err)
	}
	var token [8]byte
	rand.Read(token[:])
	n := &petNotices{
		pool: pool, cache: cache, channel: noticeChannel(schema), self: hex.EncodeToString(token[:]) + " ",
		pending: make(map[int64]struct{}), kick: make(chan struct{}, 1),
	}
	cache.Suspend()
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	n.stop = stop
	conn, _ := n.listen(ctx) // on failure, listenLoop tries again
	n.done.Add(2)
	go func() { defer n.done.Done(); n.listenLoop(runCtx, conn) }()
	go func() { defer n.done.Done(); n.notifyLoop(runCtx) }()
	return n, nil
}

// noticeChannel is the channel of a schema's pet notices. Channels are the
// database's, not a schema's, and a name has at most 63 bytes: a hash of the schema
// tells the stores of different schemas apart.
func noticeChannel(schema string) string {
	h := fnv.New64a()
	h.Write([]byte("petstore pets\x00" + schema))
	return fmt.Sprintf("petstore_pets_%016x", h.Sum64())
}

// close stops the listener and the notifier; pets changed since the last notice are
// left to the cache's time.
func (n *petNotices) close() {
	n.stop()
	n.done.Wait()
}

// changed forgets pets that a write touched (or may have: it is called whether or
// not the write committed, after it ended) and has the notifier tell the others.
func (n *petNotices) changed(ids ...int64) {
	if len(ids) == 0 {
		return
	}
	n.cache.Forget(ids...)
	n.mu.Lock()
	if !n.all {
		for _, id := range ids {
			n.pending[id] = struct{}{}
		}
		if len(n.pending) > maxPendingNotices {
			n.all = true
			clear(n.pending)
		}
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default: // the notifier is already due to run, and takes these ids with it
	}
}

// listen takes a connection out of the pool for good and listens on it; the cache is
// resumed only once the server has confirmed the LISTEN, from which on every commit's
// notice reaches it.
func (n *petNotices) listen(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, listenerCheck)
	defer cancel()
	pc, err := n.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{n.channel}.Sanitize()); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("listen: %w", err)
	}
	n.listenerPID.Store(conn.PgConn().PID())
	n.cache.Resume()
	return conn, nil
}

// listenLoop forgets the pets of every notice that conn receives; when conn is lost it
// suspends the cache (notices may be missed until it listens again) and listens anew,
// waiting longer after each failure.
func (n *petNotices) listenLoop(ctx context.Context, conn *pgx.Conn) {
	retry := listenFirstRetry
	for {
		if conn == nil {
			var err error
			if conn, err = n.listen(ctx); err != nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(retry):
				}
				retry = min(2*retry, listenMaxRetry)
				continue
			}
			retry = listenFirstRetry
		}
		err := n.receive(ctx, conn)
		n.cache.Suspend()
		n.listenerPID.Store(0)
		conn.Close(context.WithoutCancel(ctx))
		conn = nil
		if ctx.Err() != nil || err == nil {
			return
		}
	}
}

// receive applies conn's notices until the connection fails (its error) or ctx ends
// (nil). A quiet connection is checked every listenerCheck.
func (n *petNotices) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, listenerCheck)
		note, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
			n.apply(note.Payload)
			continue
		case wctx.Err() == nil:
			return err
		}
		// Nothing came within listenerCheck: is the connection still there?
		pctx, cancel := context.WithTimeout(ctx, listenerCheck)
		_, err = conn.Exec(pctx, "SELECT 1")
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// apply forgets the pets a notice names ("<sender> <id>,<id>…" or "<sender> *"),
// unless this process sent it. A payload it cannot read drops every pet: a notice is
// only ever sent for a change.
func (n *petNotices) apply(payload string) {
	if strings.HasPrefix(payload, n.self) {
		return
	}
	_, list, _ := strings.Cut(payload, " ")
	if list == forgetAll {
		n.cache.ForgetAll()
		return
	}
	for s := range strings.SplitSeq(list, ",") {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			n.cache.ForgetAll()
			return
		}
		n.cache.Forget(id)
	}
}

// notifyLoop sends the pending notices whenever changed adds some. What comes in
// while a notice is on its way waits for the next, so that a burst of writes costs
// a few notices, not one each.
func (n *petNotices) notifyLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.kick:
		}
		if payloads := n.take(); len(payloads) > 0 {
			// A notice that fails is not sent again: the cache's time bounds what the
			// others miss, and a database that refuses it has its own troubles.
			sctx, cancel := context.WithTimeout(ctx, listenerCheck)
			n.send(sctx, payloads)
			cancel()
		}
	}
}

// qNotify sends each payload of $2 on channel $1, in a transaction that does not
// wait for its WAL flush: a notice is not data, and a crash that loses it leaves the
// others to the cache's time.
const qNotify = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, p) FROM unnest($2::text[]) AS p`

func (n *petNotices) send(ctx context.Context, payloads []string) error {
	_, err := n.pool.Exec(ctx, qNotify, n.channel, payloads)
	return err
}

// take empties the pending ids into payloads of at most maxNoticePayload bytes.
func (n *petNotices) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.all {
		n.all = false
		return []string{n.self + forgetAll}
	}
	var (
		payloads []string
		b        strings.Builder
	)
	for id := range n.pending {
		if b.Len() > maxNoticePayload {
			payloads = append(payloads, b.String())
			b.Reset()
		}
		if b.Len() == 0 {
			b.WriteString(n.self)
		} else {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	if b.Len() > 0 {
		payloads = append(payloads, b.String())
	}
	clear(n.pending)
	return payloads
}
