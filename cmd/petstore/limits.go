package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/postgres"
	"github.com/acme-pets/petstore/internal/ratelimit"
	"github.com/acme-pets/petstore/internal/sqlite"
)

// newLimiter returns the rate limiter the flags ask for: none at 0, shared through
// Redis when a URL is given, in memory otherwise.
func newLimiter(ctx context.Context, perSecond int, redisURL string) (ratelimit.Limiter, func(), error) {
	if perSecond == 0 {
		return nil, func() {}, nil
	}
	if redisURL == "" {
		return ratelimit.NewMemory(perSecond, ratelimit.DefaultMaxKeys), func() {}, nil
	}
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("--redis: %w", err)
	}
	client := redis.NewClient(opt)
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, nil, fmt.Errorf("--redis: %w", err)
	}
	return ratelimit.NewRedis(client, perSecond), func() { client.Close() }, nil
}

// parsePrefixes reads a comma-separated list of addresses and CIDR prefixes.
func parsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range splitList(list) {
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, err
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// poolStats reports the store's connection pools for the metrics.
func poolStats(st petstore.Store) func() []httpapi.PoolStats {
	switch db := st.(type) {
	case *sqlite.DB:
		return func() []httpapi.PoolStats {
			s := db.Stats()
			return []httpapi.PoolStats{
				{Pool: "writer", MaxOpen: s.Writer.MaxOpenConnections, InUse: s.Writer.InUse, Idle: s.Writer.Idle, WaitCount: s.Writer.WaitCount, WaitDuration: s.Writer.WaitDuration},
				{Pool: "reader", MaxOpen: s.Reader.MaxOpenConnections, InUse: s.Reader.InUse, Idle: s.Reader.Idle, WaitCount: s.Reader.WaitCount, WaitDuration: s.Reader.WaitDuration},
			}
		}
	case *postgres.DB:
		return func() []httpapi.PoolStats {
			s := db.Stats()
			return []httpapi.PoolStats{{
				Pool: "postgres", MaxOpen: int(s.MaxConns()), InUse: int(s.AcquiredConns()), Idle: int(s.IdleConns()),
				WaitCount: s.EmptyAcquireCount(), WaitDuration: s.EmptyAcquireWaitTime(),
			}}
		}
	}
	return nil
}
