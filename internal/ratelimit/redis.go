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
	client  redis.UniversalClient
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
		client:  client,
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

// Reserve takes one request off the caller's allowance in Redis; Cancel gives it
// back there.
func (r *Redis) Reserve(ctx context.Context, key string) (Reservation, error) {
	d, err := r.Allow(ctx, key)
	res := Reservation{Decision: d}
	if err == nil && d.Allowed {
		res.cancel = func(ctx context.Context) error { return r.refund(ctx, key) }
	}
	return res, err
}

// refund gives one request back to the caller's allowance. redis_rate keeps, per
// key, the time at which the bucket is full again (its theoretical arrival time, in
// seconds since 2017); a refund moves it one emission interval sooner, and deletes
// the key once that time has passed, as if the bucket had never been touched. (A
// request of cost -1 through redis_rate would not do: it writes nothing when the
// bucket comes out full, so a lone request could not be given back.)
func (r *Redis) refund(ctx context.Context, key string) error {
	interval := r.limit.Period.Seconds() / float64(r.limit.Rate)
	if err := refundScript.Run(ctx, r.client, []string{redisRatePrefix + r.prefix + key}, interval).Err(); err != nil {
		return fmt.Errorf("rate limit refund: %w", err)
	}
	return nil
}

// redisRatePrefix starts every key redis_rate writes (its redisPrefix).
const redisRatePrefix = "rate:"

// refundScript moves a redis_rate key's time one interval (ARGV[1], in seconds)
// sooner, in redis_rate's own reckoning of time (see its lua.go).
var refundScript = redis.NewScript(`
redis.replicate_commands()
local tat = redis.call("GET", KEYS[1])
if not tat then
  return 0
end
local jan_1_2017 = 1483228800
local now = redis.call("TIME")
now = (now[1] - jan_1_2017) + (now[2] / 1000000)
local new_tat = tonumber(tat) - tonumber(ARGV[1])
if new_tat <= now then
  redis.call("DEL", KEYS[1])
else
  redis.call("SET", KEYS[1], new_tat, "EX", math.ceil(new_tat - now))
end
return 1
`)

// PerSecond is the quota per caller.
func (r *Redis) PerSecond() int { return r.limit.Burst }
