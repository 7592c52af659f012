package petstore

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The fuzz targets of the domain's policies; `scripts/fuzz` runs them under the
// fuzzer (docs/DEVELOPMENT.md, Fuzzing).

// FuzzDecodeCursor: a cursor is accepted only if this service could have made it, and
// then it means one page.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{"", EncodeCursor(1), EncodeCursor(1 << 62), "YzE6MA", "YzE6LTE", "YzE6MDE", "YzE6", "not a cursor", "YzE6MQ==", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := DecodeCursor(s)
		if err != nil {
			if ErrorCode(err) != EValidationFailed {
				t.Fatalf("DecodeCursor(%q): %v, want validation_failed", s, err)
			}
			return
		}
		if s == "" {
			if id != 0 {
				t.Fatalf("the empty cursor is id %d", id)
			}
			return
		}
		if id < 1 || EncodeCursor(id) != s {
			t.Fatalf("DecodeCursor(%q) = %d, which encodes as %q", s, id, EncodeCursor(id))
		}
	})
}

// FuzzCleanName: what passes is trimmed, 1–100 characters, valid UTF-8 without NUL,
// control or bidirectional-control characters, shows something, and passes again
// unchanged.
func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"Rex", "  Rex  ", "", " ", "\u200b\u200b", "Rex\u202egnp.exe", "R\x00x", "R\xffx", "\u3164", "a\u0301", strings.Repeat("é", 100), strings.Repeat("é", 101), "\t\nRex\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, err := CleanName("name", s)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code != EValidationFailed || len(e.Details) != 1 || e.Details[0].Field != "name" {
				t.Fatalf("CleanName(%q) refused with %#v", s, err)
			}
			return
		}
		switch {
		case CheckText("name", name) != nil:
			t.Fatalf("CleanName(%q) = %q breaks the text policy", s, name)
		case name != strings.TrimSpace(name):
			t.Fatalf("CleanName(%q) = %q is not trimmed", s, name)
		case utf8.RuneCountInString(name) < 1 || utf8.RuneCountInString(name) > MaxName:
			t.Fatalf("CleanName(%q) = %q has %d characters", s, name, utf8.RuneCountInString(name))
		case strings.ContainsFunc(name, isBidiControl):
			t.Fatalf("CleanName(%q) = %q holds a bidirectional control", s, name)
		case !strings.ContainsFunc(name, isVisible):
			t.Fatalf("CleanName(%q) = %q shows nothing", s, name)
		}
		if again, err := CleanName("name", name); err != nil || again != name {
			t.Fatalf("CleanName is not stable on %q: %q, %v", name, again, err)
		}
	})
}

// FuzzCleanEmail: an accepted email is valid UTF-8 in NFKC, stable, and its key is
// stable too, so that two spellings that look alike are one account.
func FuzzCleanEmail(f *testing.F) {
	for _, s := range []string{"ada@example.com", " ada@example.com ", "\u212aate@example.com", "ＡＤＡ@example.com", "Ada <ada@example.com>", "a\x00@example.com", "a\xff@example.com", "@", "a@b", strings.Repeat("a", 250) + "@example.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		email, err := CleanEmail(s)
		if err != nil {
			if ErrorCode(err) != EValidationFailed {
				t.Fatalf("CleanEmail(%q): %v", s, err)
			}
			return
		}
		if CheckText("email", email) != nil {
			t.Fatalf("CleanEmail(%q) = %q breaks the text policy", s, email)
		}
		if utf8.RuneCountInString(email) > MaxEmail {
			t.Fatalf("CleanEmail(%q) = %q is too long", s, email)
		}
		if again, err := CleanEmail(email); err != nil || again != email {
			t.Fatalf("CleanEmail is not stable on %q: %q, %v", email, again, err)
		}
		if k := EmailKey(email); EmailKey(k) != k {
			t.Fatalf("EmailKey is not stable on %q", email)
		}
	})
}

var canonicalDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)

// FuzzShipDate: every date-time a client can send either is refused or, kept to the
// second in UTC as the stores keep it, reads back as the same instant in a 4-digit
// year: no date can be stored that a list cannot show.
func FuzzShipDate(f *testing.F) {
	for _, s := range []string{"2026-12-01T10:00:00Z", "9999-12-31T23:59:59-23:59", "0000-01-01T00:00:00+23:59", "2099-12-31T23:59:59Z", "2100-01-01T00:00:00+00:01", "1999-12-31T23:59:59-00:01", "2030-06-01T12:00:00.999999999+05:30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return // the decoder refuses it before any rule
		}
		if err := CheckShipDate(&d); err != nil {
			if ErrorCode(err) != EValidationFailed {
				t.Fatalf("CheckShipDate(%s): %v", s, err)
			}
			return
		}
		kept := d.UTC().Truncate(time.Second)
		out := kept.Format(time.RFC3339)
		back, err := time.Parse(time.RFC3339, out)
		if !canonicalDate.MatchString(out) || err != nil || !back.Equal(kept) {
			t.Fatalf("%s is kept as %q, which does not read back (%v)", s, out, err)
		}
	})
}
