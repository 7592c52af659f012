package petstore

import (
	"slices"
	"testing"
	"time"
)

func TestRotatingASecretKeepsTheReplacedOneForTheOverlap(t *testing.T) {
	now := time.Date(2026, 11, 3, 10, 0, 0, 500_000_000, time.UTC) // a fraction: expiries are kept to the second
	later := time.Date(2026, 11, 4, 10, 0, 0, 0, time.UTC)
	overlapping := Webhook{Secret: "b", PreviousSecret: "a", PreviousSecretExpiresAt: &later}
	tests := []struct {
		name        string
		before      Webhook
		overlap     time.Duration
		wantPrev    string
		wantExpires time.Time // zero: no previous secret
	}{
		{"the replaced secret signs beside the new one for the overlap, to the second", Webhook{Secret: "a"}, SecretOverlap,
			"a", time.Date(2026, 11, 4, 10, 0, 0, 0, time.UTC)},
		{"a shorter overlap asked for is kept", Webhook{Secret: "a"}, time.Hour,
			"a", time.Date(2026, 11, 3, 11, 0, 0, 0, time.UTC)},
		{"an overlap of 0 keeps no previous secret: a leaked one is revoked at once", Webhook{Secret: "a"}, 0, "", time.Time{}},
		{"an overlap of 0 also ends the overlap of the rotation before", overlapping, 0, "", time.Time{}},
		{"a rotation within the overlap drops the oldest secret: two at most", overlapping, time.Hour,
			"b", time.Date(2026, 11, 3, 11, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.before.RotateSecret("new", now, tt.overlap)
			if w.Secret != "new" || w.PreviousSecret != tt.wantPrev {
				t.Fatalf("secret %q, previous %q; want new and %q", w.Secret, w.PreviousSecret, tt.wantPrev)
			}
			switch {
			case tt.wantExpires.IsZero() && w.PreviousSecretExpiresAt != nil:
				t.Errorf("the previous secret expires at %v, want no previous secret", *w.PreviousSecretExpiresAt)
			case !tt.wantExpires.IsZero() && (w.PreviousSecretExpiresAt == nil || !w.PreviousSecretExpiresAt.Equal(tt.wantExpires)):
				t.Errorf("the previous secret expires at %v, want %v", w.PreviousSecretExpiresAt, tt.wantExpires)
			}
			want := []string{"new"}
			if tt.wantPrev != "" {
				want = append(want, tt.wantPrev)
				if got := w.Secrets(tt.wantExpires); !slices.Equal(got, []string{"new"}) {
					t.Errorf("at the end of the overlap %v sign, want the new secret alone", got)
				}
			}
			if got := w.Secrets(now); !slices.Equal(got, want) {
				t.Errorf("during the overlap %v sign, want %v", got, want)
			}
		})
	}
}
