package petstore

import (
	"testing"
	"time"
)

func TestJudgeClaim(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	answered := &StoredResponse{Status: 201}
	tests := []struct {
		name    string
		rec     IdempotencyRecord
		hash    string
		verdict ClaimVerdict
		code    string
	}{
		{"the same body after the answer is replayed", IdempotencyRecord{[]byte("a"), now.Add(-time.Hour), answered}, "a", Replay, ""},
		{"another body is idempotency_key_reused", IdempotencyRecord{[]byte("a"), now.Add(-time.Hour), answered}, "b", 0, EIdempotencyKeyReused},
		{"a retry while the first runs is a conflict", IdempotencyRecord{[]byte("a"), now.Add(-time.Second), nil}, "a", 0, EConflict},
		{"another body while the first runs is idempotency_key_reused", IdempotencyRecord{[]byte("a"), now.Add(-time.Second), nil}, "b", 0, EIdempotencyKeyReused},
		{"a claim unanswered past the claim timeout is taken over", IdempotencyRecord{[]byte("a"), now.Add(-ClaimTimeout), nil}, "b", ClaimAfresh, ""},
		{"a key older than its time to live is claimed afresh", IdempotencyRecord{[]byte("a"), now.Add(-day), answered}, "b", ClaimAfresh, ""},
		{"a key just younger than its time to live is replayed", IdempotencyRecord{[]byte("a"), now.Add(-day + time.Second), answered}, "a", Replay, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := JudgeClaim(tt.rec, []byte(tt.hash), now, day)
			if codeOf(err) != tt.code || (err == nil && v != tt.verdict) {
				t.Fatalf("got %v, %v; want %v, %q", v, err, tt.verdict, tt.code)
			}
		})
	}
}
