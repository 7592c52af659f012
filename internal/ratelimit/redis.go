package ratelimit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Redis is a Limiter shared by every server process using the same Redis.
type Redis struct {
	client  redis.UniversalClient
	limiter *redis_rate.Limiter
	limit   redis_rate.Limit
	// keyPrefix starts every key this limiter writes: the deployment's prefix, then
	// "rl:", so that deployments can share one Redis and an ACL (~petstore:*) can hold
	// each to its own keys.
	keyPrefix string
}

// NewRedis returns a Redis limiter of perSecond requests per second per caller
// (burst perSecond), whose keys start with prefix.
func NewRedis(client redis.UniversalClient, prefix string, perSecond int) *Redis {
	return NewRedisWindow(client, prefix, perSecond, time.Second)
}

// NewRedisWindow returns a Redis limiter of n requests per window per caller (burst n),
// whose keys start with prefix.
func NewRedisWindow(client redis.UniversalClient, prefix string, n int, window time.Duration) *Redis {
	keyPrefix := prefix + "rl:"
	return &Redis{
		client:    client,
		limiter:   redis_rate.NewLimiter(prefixed{UniversalClient: client, prefix: keyPrefix}),
		limit:     redis_rate.Limit{Rate: n, Burst: n, Period: window},
		keyPrefix: keyPrefix,
	}
}

// prefixed is the client redis_rate is given. redis_rate starts every key it writes
// with "rate:", a constant of its own (redisPrefix) that no option changes, so the
// deployment's prefix would come second and an ACL that allows only ~petstore:* would
// refuse every call. prefixed puts the limiter's prefix in the place of "rate:" in the
// keys of the only commands redis_rate sends with keys (its scripts, and Del in
// Reset); redis_rate's script and its reckoning stay as they are.
type prefixed struct {
	redis.UniversalClient
	prefix string
}

func (p prefixed) keys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = p.prefix + strings.TrimPrefix(k, redisRatePrefix)
	}
	return out
}

func (p prefixed) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return p.UniversalClient.Eval(ctx, script, p.keys(keys), args...)
}

func (p prefixed) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return p.UniversalClient.EvalSha(ctx, sha1, p.keys(keys), args...)
}

func (p prefixed) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return p.UniversalClient.EvalRO(ctx, script, p.keys(keys), args...)
}

func (p prefixed) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return p.UniversalClient.EvalShaRO(ctx, sha1, p.keys(keys), args...)
}

func (p prefixed) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return p.UniversalClient.Del(ctx, p.keys(keys)...)
}

// InRedis is the Factory of limiters kept in client's Redis under prefix.
func InRedis(client redis.UniversalClient, prefix string) Factory {
	return func(n int, window time.Duration) Limiter { return NewRedisWindow(client, prefix, n, window) }
}

// Allow takes one request off the caller's allowance in Redis.
func (r *Redis) Allow(ctx context.Context, key string) (Decision, error) {
	res, err := r.limiter.Allow(ctx, key, r.limit)
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
	if err := refundScript.Run(ctx, r.client, []string{r.keyPrefix + key}, interval).Err(); err != nil {
		return fmt.Errorf("rate limit refund: %w", err)
	}
	return nil
}

// redisRatePrefix starts every key redis_rate names (its redisPrefix); prefixed
// replaces it before the command leaves.
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
