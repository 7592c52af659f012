package sqlite

import (
	"testing"
	"time"
)

func TestNextChunkTakesAboutTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size       int
		took       time.Duration
		most, want int
	}{
		{"a chunk that took twice the budget is halved", 1000, 2 * purgeBudget, 1000, 500},
		{"a chunk that took half of it doubles", 200, purgeBudget / 2, 1000, 400},
		{"never more than the most", 1000, purgeBudget / 10, 1000, 1000},
		{"never fewer than purgeMinChunk, however slow", 1000, time.Second, 1000, purgeMinChunk},
		{"a most below purgeMinChunk (tests) is kept", 3, time.Second, 3, 3},
		{"a chunk too fast to time goes to the most", 100, 0, 1000, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextChunk(tc.size, tc.took, tc.most); got != tc.want {
				t.Errorf("nextChunk(%d, %v, %d) = %d, want %d", tc.size, tc.took, tc.most, got, tc.want)
			}
		})
	}
}
