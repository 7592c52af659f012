package petstore

import (
	"testing"
	"time"
)

func TestJudgeKey(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	tests := []struct {
		name    string
		created time.Time
		hash    string
		replay  bool
		code    string
	}{
		{"the same body is replayed", now.Add(-time.Hour), "a", true, ""},
		{"the same body a moment later is replayed", now, "a", true, ""},
		{"another body is idempotency_key_reused", now.Add(-time.Hour), "b", false, EIdempotencyKeyReused},
		{"a key older than its time to live is used afresh", now.Add(-day), "b", false, ""},
		{"a key older than its time to live is used afresh with its old body too", now.Add(-day), "a", false, ""},
		{"a key just younger than its time to live is replayed", now.Add(-day + time.Second), "a", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := IdempotencyRecord{RequestHash: []byte("a"), CreatedAt: tt.created, Order: &Order{ID: 1}}
			replay, err := JudgeKey(rec, []byte(tt.hash), now, day)
			if codeOf(err) != tt.code || replay != tt.replay {
				t.Fatalf("got %v, %v; want %v, %q", replay, err, tt.replay, tt.code)
			}
		})
	}
}
