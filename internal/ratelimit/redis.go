package ratelimit

import (
	"context"
	"fmt"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Redis is a Limiter shared by every server process using the same Redis.
type Redis struct {
	limiter *redis_rate.Limiter
	limit   redis_rate.Limit
}

// NewRedis returns a Redis limiter of perSecond requests per second per caller
// (burst perSecond).
func NewRedis(client redis.UniversalClient, perSecond int) *Redis {
	return &Redis{limiter: redis_rate.NewLimiter(client), limit: redis_rate.PerSecond(perSecond)}
}

// Allow takes one request off the caller's allowance in Redis.
func (r *Redis) Allow(ctx context.Context, key string) (Decision, error) {
	res, err := r.limiter.Allow(ctx, "petstore:rl:"+key, r.limit)
	if err != nil {
		return Decision{}, fmt.Errorf("rate limit: %w", err)
	}
	d := Decision{Allowed: res.Allowed > 0, Limit: r.limit.Burst, Remaining: res.Remaining, Reset: res.ResetAfter}
	if !d.Allowed {
		d.RetryAfter = res.RetryAfter
	}
	return d, nil
}

// PerSecond is the quota per caller.
func (r *Redis) PerSecond() int { return r.limit.Burst }
