package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

// testTags checks a pet's description and tags: what is kept, what is refused, and
// the tag filter against its rule done by hand.
func testTags(t *testing.T, open Opener) {
	t.Run("a description and tags are kept as written, trimmed, and shown in a status event", func(t *testing.T) { testTagsKept(t, open) })
	t.Run("bad descriptions and tags are refused, naming the field, and change nothing", func(t *testing.T) { testTagsRefused(t, open) })
	t.Run("every page of a tag search holds exactly the pets a scan by hand finds", func(t *testing.T) { testTagSearchPages(t, open) })
}

func testTagsKept(t *testing.T, open Opener) {
	f := setup(t, open)
	c := f.category()
	desc := "A calm beagle.\r\nLoves walks;\tnaps 😴."
	p, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: "Rex", CategoryID: c.ID, Status: petstore.Available,
		Description: desc, Tags: []string{" House-Trained ", "calm", "Ωmega"}})
	must(t, err)
	want := petstore.Pet{ID: p.ID, Name: "Rex", CategoryID: c.ID, Status: petstore.Available, Description: desc,
		Tags: []string{"House-Trained", "calm", "Ωmega"}}
	if !samePet(p, want) {
		t.Errorf("created %+v, want %+v", p, want)
	}
	if got := f.pet(p.ID); !samePet(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	if got := f.allPets(petstore.PetFilter{Tags: []string{"HOUSE-TRAINED", "ωMEGA"}}, 10); len(got) != 1 || !samePet(got[0], want) {
		t.Errorf("the pet by its tags in another case: %+v", got)
	}

	// An order that takes the last unit makes the pet pending: the event shows the
	// pet whole, its description and tags too.
	fd := f.feed()
	_, err = f.s.UpdatePet(f.ctx, p.ID, func(pf petstore.PetFields) (petstore.PetFields, error) { pf.Price = Price(100); return pf, nil })
	must(t, err)
	_, err = f.s.SetInventory(f.ctx, p.ID, 1)
	must(t, err)
	fd.next(invUpd, restocked)
	f.order(f.account(petstore.Customer).ID, p.ID, 1)
	events := fd.nextAnyOrder(placed, invUpd, soldOut, statusChg)
	for _, e := range events {
		if e.Type == statusChg && (e.Pet.Description != desc || !slices.Equal(e.Pet.Tags, want.Tags)) {
			t.Errorf("the status event shows %+v, want the description and tags of %+v", *e.Pet, want)
		}
	}

	// Tags and description change together with the rest; the old tags find nothing.
	_, err = f.s.UpdatePet(f.ctx, p.ID, func(pf petstore.PetFields) (petstore.PetFields, error) {
		pf.Tags, pf.Description = []string{"senior"}, ""
		return pf, nil
	})
	must(t, err)
	if got := f.pet(p.ID); got.Description != "" || !slices.Equal(got.Tags, []string{"senior"}) {
		t.Errorf("after the change: %+v", got)
	}
	if got := f.allPets(petstore.PetFilter{Tags: []string{"calm"}}, 10); len(got) != 0 {
		t.Errorf("an old tag still finds %+v", got)
	}
	if got := f.allPets(petstore.PetFilter{Tags: []string{"Senior"}}, 10); len(got) != 1 {
		t.Errorf("the new tag finds %+v", got)
	}
}

func testTagsRefused(t *testing.T, open Opener) {
	f := setup(t, open)
	c := f.category()
	p := f.availablePet(0)
	long := strings.Repeat("x", petstore.MaxTag+1)
	eleven := make([]string, petstore.MaxTags+1)
	for i := range eleven {
		eleven[i] = fmt.Sprint("t", i)
	}
	tests := []struct {
		name   string
		fields petstore.PetFields
		field  string
	}{
		{"a tag repeated in another case", petstore.PetFields{Tags: []string{"calm", " CALM"}}, "tags[1]"},
		{"eleven tags", petstore.PetFields{Tags: eleven}, "tags"},
		{"a tag too long", petstore.PetFields{Tags: []string{"ok", long}}, "tags[1]"},
		{"an empty tag", petstore.PetFields{Tags: []string{"  "}}, "tags[0]"},
		{"a tag with a control character", petstore.PetFields{Tags: []string{"a\tb"}}, "tags[0]"},
		{"a tag with an invisible character", petstore.PetFields{Tags: []string{"ca\u200blm"}}, "tags[0]"},
		{"a description too long", petstore.PetFields{Description: strings.Repeat("é", petstore.MaxPetDescription+1)}, "description"},
		{"a description with an escape", petstore.PetFields{Description: "a\x1b[31mred"}, "description"},
		{"a description with a bidirectional override", petstore.PetFields{Description: "a\u202eb"}, "description"},
	}
	for _, tt := range tests {
		fields := tt.fields
		fields.Name, fields.CategoryID, fields.Status = "Rex", c.ID, petstore.Available
		_, err := f.s.CreatePet(f.ctx, fields)
		wantField(t, err, tt.field)
		_, err = f.s.UpdatePet(f.ctx, p.ID, func(petstore.PetFields) (petstore.PetFields, error) { return fields, nil })
		wantField(t, err, tt.field)
		if got := f.pet(p.ID); !samePet(got, p) {
			t.Errorf("%s: the pet changed to %+v", tt.name, got)
		}
	}
	if _, err := f.s.Pets(f.ctx, petstore.PetFilter{Tags: []string{long}}, petstore.Page{Limit: 1}); err == nil {
		t.Error("a filter by a tag too long was not refused")
	}
	if _, err := f.s.Pets(f.ctx, petstore.PetFilter{Tags: eleven}, petstore.Page{Limit: 1}); err == nil {
		t.Error("a filter by eleven tags was not refused")
	}
}

// testTagSearchPages makes pets with random tags from a small vocabulary in mixed
// case, changes and deletes some, and checks random searches (one to three tags, with
// and without the other filters) page by page against a scan of the pets by hand.
func testTagSearchPages(t *testing.T, open Opener) {
	f := setup(t, open)
	r := rand.New(rand.NewPCG(uint64(unique.Add(1)), 35))
	vocab := []string{"calm", "Small", "ÉTÉ", "house trained", "senior", "x"}
	randomTags := func() []string {
		var tags []string
		for _, i := range r.Perm(len(vocab))[:r.IntN(4)] {
			tag := vocab[i]
			if r.IntN(2) == 0 {
				tag = strings.ToUpper(tag)
			}
			tags = append(tags, tag)
		}
		return tags
	}
	cats := []petstore.Category{f.category(), f.category()}
	pets := map[int64]petstore.Pet{}
	for i := range 60 {
		p, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: fmt.Sprint("Pet ", i, []string{"a", "b"}[i%2]), CategoryID: cats[r.IntN(2)].ID,
			Status: petstore.Available, Tags: randomTags()})
		must(t, err)
		pets[p.ID] = p
	}
	for id := range pets {
		switch r.IntN(6) {
		case 0:
			must(t, f.s.DeletePet(f.ctx, id))
			delete(pets, id)
		case 1:
			p, err := f.s.UpdatePet(f.ctx, id, func(pf petstore.PetFields) (petstore.PetFields, error) { pf.Tags = randomTags(); return pf, nil })
			must(t, err)
			pets[id] = p
		}
	}
	live := slices.Sorted(func(yield func(int64) bool) {
		for id := range pets {
			if !yield(id) {
				return
			}
		}
	})
	for range 40 {
		filter := petstore.PetFilter{}
		for _, i := range r.Perm(len(vocab))[:1+r.IntN(3)] {
			filter.Tags = append(filter.Tags, vocab[i])
		}
		switch r.IntN(4) {
		case 0:
			filter.CategoryID = cats[r.IntN(2)].ID
		case 1:
			filter.Name = []string{"a", "b"}[r.IntN(2)]
		case 2:
			filter.IDs = live[:len(live)/2]
		}
		var want []int64
		for _, id := range live {
			if p := pets[id]; hasTags(p, filter.Tags) && (filter.CategoryID == 0 || p.CategoryID == filter.CategoryID) &&
				strings.Contains(p.Name, filter.Name) && (filter.IDs == nil || slices.Contains(filter.IDs, id)) {
				want = append(want, id)
			}
		}
		sought := slices.Clone(filter.Tags)
		got := f.allPets(filter, 1+r.IntN(5))
		if !sameIDs(ids(got, petID), want) {
			t.Errorf("tags %q, category %d, name %q, ids %v: got %v, want %v", sought, filter.CategoryID, filter.Name, filter.IDs != nil, ids(got, petID), want)
		}
	}
}

// hasTags reports whether p has every tag of sought, compared by TagKey.
func hasTags(p petstore.Pet, sought []string) bool {
	for _, s := range sought {
		if !slices.ContainsFunc(p.Tags, func(t string) bool { return petstore.TagKey(t) == petstore.TagKey(s) }) {
			return false
		}
	}
	return true
}
