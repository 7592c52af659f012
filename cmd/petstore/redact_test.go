package main

import "testing"

func TestRedactDSNHidesPasswords(t *testing.T) {
	tests := []struct{ in, want string }{
		{"petstore.db", "petstore.db"},
		{"postgres://app:s3cret@db:5432/shop", "postgres://app:xxx@db:5432/shop"},
		{"postgres://app@db/shop?sslmode=disable", "postgres://app@db/shop?sslmode=disable"},
		{"postgres://db/shop?password=s3cret&user=app", "postgres://db/shop?password=xxx&user=app"},
	}
	for _, tt := range tests {
		if got := redactDSN(tt.in); got != tt.want {
			t.Errorf("redactDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
