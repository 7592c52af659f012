package ratelimit

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// --redis-prefix is the start of every key the limits write: a deployment's Redis
// user may be held to its own keys with an ACL (~PREFIX*), and the limits work under
// it. The test makes such a user with a prefix of its own, runs every kind of limit
// through it (general and windowed, a reservation given back), and then finds every
// key those calls left, by a token in the callers' names, under the prefix alone.
func TestTheLimitsWorkForAUserHeldToThePrefixByAnACL(t *testing.T) {
	admin := testRedis(t)
	ctx := context.Background()
	token := fmt.Sprintf("%d", time.Now().UnixNano())
	prefix := "petstore-test-" + token + ":"
	user := "petstore-test-" + token
	const password = "acl-test-password"
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">"+password, "~"+prefix+"*", "+@all").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() {
		admin.Do(context.Background(), "ACL", "DELUSER", user)
		if keys, _ := admin.Keys(context.Background(), prefix+"*").Result(); len(keys) > 0 {
			admin.Del(context.Background(), keys...)
		}
	})
	opt := admin.Options()
	u := url.URL{Scheme: "redis", User: url.UserPassword(user, password), Host: opt.Addr, Path: fmt.Sprintf("/%d", opt.DB)}
	uopt, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(uopt)
	t.Cleanup(func() { client.Close() })
	if err := client.Set(ctx, "elsewhere:"+token, 1, time.Minute).Err(); err == nil {
		admin.Del(ctx, "elsewhere:"+token)
		t.Fatal("the ACL lets the user write outside its prefix: the test would prove nothing")
	}

	limits := InRedis(client, prefix)
	general, windowed := limits(5, time.Second), limits(3, time.Minute)
	callers := []string{"acct:" + token, "ip:" + token, "cred:" + token}
	for _, c := range callers {
		for i, l := range []Limiter{general, windowed} {
			caller := fmt.Sprintf("%s:%d", c, i) // each limiter its own callers, as in the server
			if d, err := l.Allow(ctx, caller); err != nil || !d.Allowed {
				t.Fatalf("Allow(%s): %+v, %v", caller, d, err)
			}
			r, err := l.Reserve(ctx, caller)
			if err != nil || !r.Allowed {
				t.Fatalf("Reserve(%s): %+v, %v", caller, r.Decision, err)
			}
			if err := r.Cancel(ctx); err != nil {
				t.Fatalf("giving back a reservation of %s: %v", caller, err)
			}
		}
	}
	// Past the burst the shared count refuses, as it should: the calls reached Redis.
	for range 3 {
		windowed.Allow(ctx, "burst:"+token)
	}
	if d, err := windowed.Allow(ctx, "burst:"+token); err != nil || d.Allowed {
		t.Fatalf("the fourth request of a burst of 3: %+v, %v; want a refusal", d, err)
	}

	var left []string
	iter := admin.Scan(ctx, 0, "*"+token+"*", 1000).Iterator()
	for iter.Next(ctx) {
		left = append(left, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	if len(left) == 0 {
		t.Fatal("no key holds the callers' token: nothing was counted in Redis")
	}
	for _, k := range left {
		if !strings.HasPrefix(k, prefix) {
			t.Errorf("key %q does not start with the prefix %q", k, prefix)
		}
	}
	t.Logf("keys left, all under %s: %v", prefix, left)
}
