package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/acme-pets/petstore/internal/ratelimit"
)

// limits is where the rate limits are kept: shared is nil for process memory, or
// the Factory of limits in Redis (the HTTP layer counts in memory while Redis cannot
// answer).
type limits struct {
	shared ratelimit.Factory
	close  func()
}

// newLimits keeps the limits in Redis when a URL is given, so that every process
// sharing it shares them, and in process memory otherwise.
func newLimits(ctx context.Context, redisURL, prefix string, log *slog.Logger) (limits, error) {
	l := limits{close: func() {}}
	if redisURL == "" {
		return l, nil
	}
	// go-redis prints a line of its own for every failed dial; the outage is logged
	// once by the HTTP layer, so these are details for debugging. (The logger is the
	// library's global; this process has one log.)
	redis.SetLogger(redisLog{log})
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		// The parser quotes the URL it could not read, password and all.
		return l, fmt.Errorf("--redis: %w", hideURL(err, redisURL))
	}
	// Every API request asks the limiter, and one that cannot answer is decided in
	// memory: it must fail in a moment, not after go-redis's five dials and
	// three-second reads. Values given in the URL stand.
	if opt.DialTimeout == 0 {
		opt.DialTimeout = 250 * time.Millisecond
	}
	if opt.ReadTimeout == 0 {
		opt.ReadTimeout = 250 * time.Millisecond
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = 250 * time.Millisecond
	}
	if opt.PoolTimeout == 0 {
		// Waiting for a free connection while Redis hangs would be one more second.
		opt.PoolTimeout = 250 * time.Millisecond
	}
	if opt.DialerRetries == 0 {
		opt.DialerRetries = 1
	}
	if opt.MaxRetries == 0 {
		// No retry: a limiter call that timed out may have counted, and a retry would
		// count the request twice, after waiting as long again.
		opt.MaxRetries = -1
	}
	client := redis.NewClient(opt)
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return l, fmt.Errorf("--redis: %w", hideURL(err, redisURL))
	}
	l.shared = ratelimit.InRedis(client, prefix)
	l.close = func() { client.Close() }
	return l, nil
}

// redisLog hands go-redis's lines to the service's log, at debug level.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	if l.log.Enabled(ctx, slog.LevelDebug) {
		l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
	}
}
