package petstore

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestCursorRoundTrips(t *testing.T) {
	for _, id := range []int64{1, 7, 20, 1 << 40, 9223372036854775807} {
		got, err := DecodeCursor(EncodeCursor(id))
		if err != nil || got != id {
			t.Fatalf("DecodeCursor(EncodeCursor(%d)) = %d, %v", id, got, err)
		}
	}
}

func TestDecodeCursor(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name   string
		cursor string
		want   int64
		ok     bool
	}{
		{"an empty cursor is the first page", "", 0, true},
		{"a cursor made by EncodeCursor is read", EncodeCursor(42), 42, true},
		{"text that is not base64url is refused", "not a cursor!", 0, false},
		{"standard base64 padding is refused", enc("c1:42") + "==", 0, false},
		{"another version prefix is refused", enc("c2:42"), 0, false},
		{"a missing prefix is refused", enc("42"), 0, false},
		{"a non-numeric id is refused", enc("c1:abc"), 0, false},
		{"a zero id is refused", enc("c1:0"), 0, false},
		{"a negative id is refused", enc("c1:-5"), 0, false},
		{"a leading zero is refused (one id, one cursor)", enc("c1:042"), 0, false},
		{"a plus sign is refused", enc("c1:+42"), 0, false},
		{"an id beyond int64 is refused", enc("c1:9223372036854775808"), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeCursor(tt.cursor)
			if tt.ok != (err == nil) || got != tt.want {
				t.Fatalf("DecodeCursor(%q) = %d, %v", tt.cursor, got, err)
			}
			if err != nil && ErrorCode(err) != EValidationFailed {
				t.Fatalf("error code %s, want validation_failed", ErrorCode(err))
			}
		})
	}
}

func TestCleanName(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Rex", "Rex", true},
		{"  Rex\t", "Rex", true},
		{"", "", false},
		{"   ", "", false},
		{"Re\x00x", "", false},
		{"Re\u0085x", "", false},
		{strings.Repeat("ü", 100), strings.Repeat("ü", 100), true},
		{strings.Repeat("ü", 101), "", false},
	}
	for _, tt := range tests {
		got, err := CleanName("name", tt.in)
		if tt.ok != (err == nil) || got != tt.want {
			t.Errorf("CleanName(%q) = %q, %v", tt.in, got, err)
		}
	}
}
