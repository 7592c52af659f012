package petstore

import (
	"encoding/json"
	"testing"
	"time"
)

// date parses an RFC 3339 date-time of a test.
func date(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func TestCheckInstant(t *testing.T) {
	const problem = "must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z in UTC, its offset applied"
	tests := []struct {
		name, at, problem string
	}{
		{"an instant of this century is fine", "2027-01-01T00:00:00Z", ""},
		{"the last second of 9999 is fine", "9999-12-31T23:59:59Z", ""},
		{"and with an offset that keeps it in 9999", "9999-12-31T23:59:59+23:59", ""},
		{"the first second of year 1 is fine", "0001-01-01T00:00:00Z", ""},
		{"an offset that makes it year 10000 in UTC is refused", "9999-12-31T23:59:59-23:59", problem},
		{"a fraction past the last second is refused", "9999-12-31T23:59:59.5Z", problem},
		{"year 0 is refused", "0000-12-31T23:59:59Z", problem},
		{"an offset that makes it year 0 in UTC is refused", "0001-01-01T00:00:00+00:01", problem},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, CheckInstant("expiresAt", *date(tt.at)), "expiresAt", tt.problem)
		})
	}
	t.Run("a ship date is bounded more narrowly, in the same words", func(t *testing.T) {
		wantProblem(t, CheckShipDate(date("2100-01-01T00:00:00+00:01")), "shipDate", "")
		wantProblem(t, CheckShipDate(date("2099-12-31T23:59:59-00:01")), "shipDate",
			"must be from 2000-01-01T00:00:00Z to 2099-12-31T23:59:59Z in UTC, its offset applied")
	})
}

// FuzzCheckInstant: every date-time a client can send is refused by CheckInstant or
// can be written as the API and its events write it: JSON, RFC 3339 in UTC with a
// 4-digit year, reading back as the same instant. A key's expiry in year 10000 failed
// its event's JSON inside the store's transaction.
func FuzzCheckInstant(f *testing.F) {
	for _, s := range []string{"2026-12-01T10:00:00Z", "9999-12-31T23:59:59-23:59", "9999-12-31T23:59:59+23:59", "0000-01-01T00:00:00+23:59",
		"0001-01-01T00:00:00-23:59", "9999-12-31T23:59:59.999999999Z", "2030-06-01T12:00:00.999999999+05:30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return // the decoder refuses it before any rule
		}
		if err := CheckInstant("expiresAt", d); err != nil {
			if ErrorCode(err) != EValidationFailed {
				t.Fatalf("CheckInstant(%s): %v", s, err)
			}
			return
		}
		if _, err := json.Marshal(d.UTC()); err != nil {
			t.Fatalf("%s is accepted and its JSON fails: %v", s, err)
		}
		kept := d.UTC().Truncate(time.Second)
		out := kept.Format(time.RFC3339)
		back, err := time.Parse(time.RFC3339, out)
		if !canonicalDate.MatchString(out) || err != nil || !back.Equal(kept) {
			t.Fatalf("%s is kept as %q, which does not read back (%v)", s, out, err)
		}
	})
}
