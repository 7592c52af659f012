package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Redis is a Limiter shared by every server process using the same Redis.
type Redis struct {
	limiter *redis_rate.Limiter
	limit   redis_rate.Limit
	// prefix starts every key it writes, so that deployments can share one Redis.
	prefix string
}

// NewRedis returns a Redis limiter of perSecond requests per second per caller
// (burst perSecond), whose keys start with prefix.
func NewRedis(client redis.UniversalClient, prefix string, perSecond int) *Redis {
	return NewRedisWindow(client, prefix, perSecond, time.Second)
}

// NewRedisWindow returns a Redis limiter of n requests per window per caller (burst n),
// whose keys start with prefix.
func NewRedisWindow(client redis.UniversalClient, prefix string, n int, window time.Duration) *Redis {
	return &Redis{
		limiter: redis_rate.NewLimiter(client),
		limit:   redis_rate.Limit{Rate: n, Burst: n, Period: window},
		prefix:  prefix + "rl:",
	}
}

// InRedis is the Factory of limiters kept in client's Redis under prefix.
func InRedis(client redis.UniversalClient, prefix string) Factory {
	return func(n int, window time.Duration) Limiter { return NewRedisWindow(client, prefix, n, window) }
}

// Allow takes one request off the caller's allowance in Redis.
func (r *Redis) Allow(ctx context.Context, key string) (Decision, error) {
	res, err := r.limiter.Allow(ctx, r.prefix+key, r.limit)
	if err != nil {
		return Decision{}, fmt.Errorf("rate limit: %w", err)
	}
	d := Decision{Allowed: res.Allowed > 0, Limit: r.limit.Burst, Remaining: res.Remaining, Reset: res.ResetAfter}
	if !d.Allowed {
		d.RetryAfter = res.RetryAfter
	}
	return d, nil
}

// Peek reads the caller's allowance without taking from it: a request of cost 0
// leaves the stored state as it is.
func (r *Redis) Peek(ctx context.Context, key string) (Decision, error) {
	res, err := r.limiter.AllowN(ctx, r.prefix+key, r.limit, 0)
	if err != nil {
		return Decision{}, fmt.Errorf("rate limit: %w", err)
	}
	d := Decision{Allowed: res.Remaining >= 1, Limit: r.limit.Burst, Remaining: res.Remaining, Reset: res.ResetAfter}
	if !d.Allowed {
		// The bucket refills one request per emission interval; ResetAfter is how
		// long until it is full, so the first request is back burst-1 intervals sooner.
		interval := r.limit.Period / time.Duration(r.limit.Rate)
		d.RetryAfter = max(res.ResetAfter-time.Duration(r.limit.Burst-1)*interval, 0)
	}
	return d, nil
}

// PerSecond is the quota per caller.
func (r *Redis) PerSecond() int { return r.limit.Burst }
