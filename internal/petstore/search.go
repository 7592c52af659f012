package petstore

import "slices"

// The name filter finds a pet by any part of its name, so an index of words cannot
// serve it; the stores index short runs of characters (n-grams) instead. The runs are
// made here, once, for both stores: a database's own trigrams (FTS5's tokenizer,
// pg_trgm) would differ between them, pg_trgm skips what is not a letter or a digit
// in the database's locale, and neither has a term for a text shorter than three
// characters. The index only narrows the search: the stores still check each
// candidate's NameKey for the exact text.

// NameGrams returns the terms a search index files a name under, given its NameKey:
// every distinct run of one, two or three characters of it, sorted. A key that
// contains a text has all of that text's SearchGrams.
func NameGrams(key string) []string {
	starts := runeStarts(key)
	grams := make([]string, 0, 3*(len(starts)-1))
	for i := range len(starts) - 1 {
		for n := 1; n <= 3 && i+n < len(starts); n++ {
			grams = append(grams, key[starts[i]:starts[i+n]])
		}
	}
	slices.Sort(grams)
	return slices.Compact(grams)
}

// SearchGrams returns terms that every NameKey containing query (itself a NameKey)
// is filed under by NameGrams: query itself when it has one or two characters, else
// runs of three that together cover every character of it (every third one and the
// last). Each term is a posting list the index intersects; more overlapping runs
// would narrow the candidates little and cost as much each.
func SearchGrams(query string) []string {
	starts := runeStarts(query)
	n := len(starts) - 1
	if n <= 3 {
		return []string{query}
	}
	var grams []string
	for i := 0; i+3 <= n; i += 3 {
		grams = append(grams, query[starts[i]:starts[i+3]])
	}
	if n%3 != 0 {
		grams = append(grams, query[starts[n-3]:])
	}
	slices.Sort(grams)
	return slices.Compact(grams)
}

// runeStarts returns the byte offset of each character of s, and len(s) last.
func runeStarts(s string) []int {
	starts := make([]int, 0, len(s)+1)
	for i := range s {
		starts = append(starts, i)
	}
	return append(starts, len(s))
}
