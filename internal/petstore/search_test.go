package petstore

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestNameGrams(t *testing.T) {
	tests := []struct {
		key  string
		want []string
	}{
		{"a", []string{"a"}},
		{"ab", []string{"a", "ab", "b"}},
		{"abab", []string{"a", "ab", "aba", "b", "ba", "bab"}},
		{"éß%", []string{"%", "ß", "ß%", "é", "éß", "éß%"}},
	}
	for _, tt := range tests {
		if got := NameGrams(tt.key); !slices.Equal(got, tt.want) {
			t.Errorf("NameGrams(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestSearchGrams(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"a", []string{"a"}},
		{"ab", []string{"ab"}},
		{"abc", []string{"abc"}},
		{"abcd", []string{"abc", "bcd"}},
		{"abcdef", []string{"abc", "def"}},
		{"abcdefg", []string{"abc", "def", "efg"}},
		{"ééééé", []string{"ééé"}},
	}
	for _, tt := range tests {
		if got := SearchGrams(tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("SearchGrams(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

// Every key that contains a text is filed under every term the text is searched by:
// the index never loses a pet the exact check would keep.
func TestAKeyContainingATextHasItsSearchGrams(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abAB%_\\ éÉßж日")
	word := func(max int) string {
		var b strings.Builder
		for range 1 + r.IntN(max) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return NameKey(b.String())
	}
	for range 20000 {
		key, query := word(12), word(6)
		if !strings.Contains(key, query) {
			continue
		}
		grams := NameGrams(key)
		for _, g := range SearchGrams(query) {
			if _, ok := slices.BinarySearch(grams, g); !ok {
				t.Fatalf("%q contains %q but is not filed under its term %q", key, query, g)
			}
		}
	}
}
