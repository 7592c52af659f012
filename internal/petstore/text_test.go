package petstore

import "testing"

func TestCleanEmail(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a plain address is kept", "ada@example.com", "ada@example.com"},
		{"white space around it is trimmed", "  ada@example.com ", "ada@example.com"},
		{"a KELVIN SIGN is the K it looks like", "\u212aate@example.com", "Kate@example.com"},
		{"full-width letters are the letters they look like", "\uff41da@example.com", "ada@example.com"},
		{"letters beyond ASCII stay", "ærø@example.com", "ærø@example.com"},
		{"invalid UTF-8 is refused", "a\xffa@example.com", ""},
		{"NUL is refused", "ada\x00@example.com", ""},
		{"a display name is refused", "Ada <ada@example.com>", ""},
		{"no @ is refused", "ada.example.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CleanEmail(tt.in)
			if tt.want == "" {
				if codeOf(err) != EValidationFailed {
					t.Fatalf("CleanEmail(%q) = %q, %v; want validation_failed", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("CleanEmail(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestEmailKey(t *testing.T) {
	for _, same := range [][2]string{
		{"kate@example.com", "\u212aate@example.com"},
		{"Kate@Example.COM", "kate@example.com"},
		{"ÆRØ@example.com", "ærø@example.com"},
	} {
		if EmailKey(same[0]) != EmailKey(same[1]) {
			t.Errorf("EmailKey(%q) = %q, EmailKey(%q) = %q; want one key", same[0], EmailKey(same[0]), same[1], EmailKey(same[1]))
		}
	}
	if EmailKey("kate@example.com") == EmailKey("kâte@example.com") {
		t.Error("different letters share a key")
	}
}
