package auth

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// uses gathers which keys were used in which minute, so that "last used" costs one
// write per flush for all keys together rather than a write per request. A cached key
// notes its use at most once a minute (an atomic compare on the hit path); a key looked
// up in the store notes it every lookup, which costs a query anyway.
type uses struct {
	mu      sync.Mutex
	pending map[int64]int64 // key id → latest minute used (Unix seconds, a multiple of 60)
}

// minuteOf is the minute of t, as Unix seconds: the precision "last used" is kept at.
func minuteOf(t time.Time) int64 { return t.Unix() - t.Unix()%60 }

func (u *uses) note(keyID, minute int64) {
	u.mu.Lock()
	if u.pending == nil {
		u.pending = make(map[int64]int64)
	}
	if u.pending[keyID] < minute {
		u.pending[keyID] = minute
	}
	u.mu.Unlock()
}

func (u *uses) take() map[int64]int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.pending
	u.pending = nil
	return p
}

// noteUse records that the key was used at now. noted is the cache entry's last
// noted minute (nil for a key looked up in the store), so that a cached key takes the
// lock once a minute at most.
func (a *Authenticator) noteUse(keyID int64, noted *atomic.Int64, now time.Time) {
	if keyID == 0 {
		return
	}
	m := minuteOf(now)
	if noted != nil {
		if noted.Load() == m {
			return
		}
		noted.Store(m)
	}
	a.uses.note(keyID, m)
}

// FlushUses writes the keys' uses noted since the last flush to the store: one
// statement per distinct minute, usually one. Uses it could not write are kept for the
// next flush.
func (a *Authenticator) FlushUses(ctx context.Context) error {
	p := a.uses.take()
	if len(p) == 0 {
		return nil
	}
	byMinute := make(map[int64][]int64, 1)
	for id, m := range p {
		byMinute[m] = append(byMinute[m], id)
	}
	for m, ids := range byMinute {
		if err := a.store.TouchAPIKeys(ctx, ids, time.Unix(m, 0).UTC()); err != nil {
			for id, um := range p {
				if _, left := byMinute[um]; left {
					a.uses.note(id, um)
				}
			}
			return err
		}
		delete(byMinute, m)
	}
	return nil
}
