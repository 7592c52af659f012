package petstore

import (
	"slices"
	"testing"

	"github.com/acme-pets/petstore/api"
)

// The document's PetStatus lists the statuses a request may set, and x-transitions the
// changes rule 7 allows by hand, which the console offers: both are the domain's
// (PetStatus.Valid, CheckStatusChange), so that a page reading the document offers exactly
// what the service accepts.
func TestTheDocumentsStatusTransitionsAreTheDomains(t *testing.T) {
	root, err := api.ParseTree(api.Source)
	if err != nil {
		t.Fatal(err)
	}
	schema := api.Value(api.Value(api.Value(root.Content[0], "components"), "schemas"), "PetStatus")
	var statuses []PetStatus
	for _, n := range api.Value(schema, "enum").Content {
		statuses = append(statuses, PetStatus(n.Value))
	}
	if want := []PetStatus{Available, Pending, Sold}; !slices.Equal(statuses, want) {
		t.Fatalf("the document's PetStatus is %v, the domain's statuses %v", statuses, want)
	}
	listed := map[PetStatus][]PetStatus{}
	table := api.Value(schema, "x-transitions")
	if table == nil {
		t.Fatal("the document's PetStatus has no x-transitions")
	}
	for i := 0; i+1 < len(table.Content); i += 2 {
		from := PetStatus(table.Content[i].Value)
		if !slices.Contains(statuses, from) {
			t.Errorf("x-transitions lists %q, not a status of the enum", from)
		}
		for _, n := range table.Content[i+1].Content {
			listed[from] = append(listed[from], PetStatus(n.Value))
		}
	}
	for _, from := range statuses {
		if _, ok := listed[from]; !ok && api.Value(table, string(from)) == nil {
			t.Errorf("x-transitions has no entry for %s (an empty list says none is allowed)", from)
		}
		for _, to := range statuses {
			if from == to {
				continue
			}
			allowed := CheckStatusChange(from, to) == nil
			if documented := slices.Contains(listed[from], to); documented != allowed {
				t.Errorf("%s → %s: the document lists it %v, the domain allows it %v", from, to, documented, allowed)
			}
		}
	}
}
