package petstore

import (
	"strings"
	"testing"
)

func TestPhotoIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewPhotoID()
		if !ValidPhotoID(id) || seen[id] || len(id) != 29 {
			t.Fatalf("NewPhotoID() = %q: valid %v, seen %v", id, ValidPhotoID(id), seen[id])
		}
		seen[id] = true
	}
	for _, id := range []string{"", "ph_", "ph_" + strings.Repeat("a", 25), "ph_" + strings.Repeat("a", 27), "ph_" + strings.Repeat("A", 26),
		"ph_" + strings.Repeat(".", 26), "px_" + strings.Repeat("a", 26), "ph_" + strings.Repeat("a", 24) + "/b", "ph_" + strings.Repeat("a", 25) + "1"} {
		if ValidPhotoID(id) {
			t.Errorf("ValidPhotoID(%q) = true", id)
		}
	}
}

func TestCheckPhotoOrder(t *testing.T) {
	have := []Photo{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	tests := []struct {
		name string
		ids  []string
		want string // the ids in order, or "" for a conflict
	}{
		{"a new order", []string{"c", "a", "b"}, "cab"},
		{"the same order", []string{"a", "b", "c"}, "abc"},
		{"one left out", []string{"c", "a"}, ""},
		{"one twice", []string{"c", "a", "a"}, ""},
		{"one of another pet", []string{"c", "a", "b", "d"}, ""},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		got, err := CheckPhotoOrder(1, have, tt.ids)
		var ids string
		for _, p := range got {
			ids += p.ID
		}
		if tt.want == "" && ErrorCode(err) != EConflict || tt.want != "" && (err != nil || ids != tt.want) {
			t.Errorf("%s: got %q, %v; want %q", tt.name, ids, err, tt.want)
		}
	}
}
