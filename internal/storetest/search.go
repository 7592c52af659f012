package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

// testNameSearch checks the name filter against its rule done by hand: a pet is found
// when NameKey of its name contains NameKey of the cleaned filter. The names are random
// over an alphabet that mixes letter cases, multi-byte letters and the characters that
// are wildcards elsewhere (%, _, \); some pets are renamed and some deleted after they
// were indexed; each search reads every page.
func testNameSearch(t *testing.T, open Opener) {
	t.Run("every page of a search holds exactly the pets a scan by hand finds, in id order", func(t *testing.T) { testNameSearchPages(t, open) })
}

func testNameSearchPages(t *testing.T, open Opener) {
	f := setup(t, open)
	s := &nameSearch{f: f, r: rand.New(rand.NewPCG(uint64(unique.Add(1)), 20)),
		alphabet: []rune("abcABC%_\\ éÉßẞжЖωΩ日1")}
	s.cats = []petstore.Category{f.category(), f.category()}
	s.statuses = []petstore.PetStatus{petstore.Available, petstore.Pending, petstore.Sold}
	s.stock()
	for _, q := range s.queries() {
		s.check(q)
	}
}

// nameSearch is the state of testNameSearchPages: the pets it made as they are now,
// and the random source it draws names, queries and filters from.
type nameSearch struct {
	f        *fixture
	r        *rand.Rand
	alphabet []rune
	cats     []petstore.Category
	statuses []petstore.PetStatus
	pets     map[int64]petstore.Pet // the pets not deleted
	all      []int64                // the ids of every pet made, deleted or not, in order
}

// text returns n random characters of the alphabet.
func (s *nameSearch) text(n int) string {
	var b strings.Builder
	for range n {
		b.WriteRune(s.alphabet[s.r.IntN(len(s.alphabet))])
	}
	return b.String()
}

// randomName returns a random name that CleanName accepts, mostly short.
func (s *nameSearch) randomName() string {
	for {
		n := 1 + s.r.IntN(10)
		if s.r.IntN(10) == 0 {
			n = 60 + s.r.IntN(petstore.MaxName-59)
		}
		if name, err := petstore.CleanName("name", s.text(n)); err == nil {
			return name
		}
	}
}

// stock makes 300 pets with random names, changes 40 of them (the name, its letter
// case or the status) and deletes 20 more.
func (s *nameSearch) stock() {
	f, t, r := s.f, s.f.t, s.r
	s.pets = map[int64]petstore.Pet{}
	for range 300 {
		p, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: s.randomName(),
			CategoryID: s.cats[r.IntN(len(s.cats))].ID, Status: s.statuses[r.IntN(len(s.statuses))]})
		must(t, err)
		s.pets[p.ID] = p
	}
	s.all = slices.Sorted(func(yield func(int64) bool) {
		for id := range s.pets {
			if !yield(id) {
				return
			}
		}
	})
	for _, id := range s.all[:40] {
		p, err := f.s.UpdatePet(f.ctx, id, func(old petstore.PetFields) (petstore.PetFields, error) {
			switch r.IntN(3) {
			case 0: // a new name
				old.Name = s.randomName()
			case 1: // the same name in another letter case
				old.Name = strings.ToUpper(old.Name)
			case 2: // the same name, another status
				old.Status = petstore.Sold
			}
			return old, nil
		})
		must(t, err)
		s.pets[id] = p
	}
	for _, id := range s.all[40:60] {
		must(t, f.s.DeletePet(f.ctx, id))
		delete(s.pets, id)
	}
}

// queries returns the name filters to try: characters that are wildcards elsewhere,
// letters whose case folds oddly, and parts of stored names.
func (s *nameSearch) queries() []string {
	r := s.r
	queries := []string{"%", "_", `\`, `\%`, "a_", "%%", "ß", "ẞ", "SS", "ж", "Ж", "ω", "日", " ", "a b",
		strings.Repeat("a", petstore.MaxName), "no such name"}
	// -short (the race run) walks fewer: the plain run walks them all, and the race
	// detector needs the paths, not the number of names.
	most := 150
	if testing.Short() {
		most = 40
	}
	for _, p := range s.pets {
		if len(queries) > most {
			break
		}
		// Parts of stored names, in another letter case now and then, from one
		// character to the whole name.
		runes := []rune(p.Name)
		from := r.IntN(len(runes))
		to := from + 1 + r.IntN(len(runes)-from)
		q := string(runes[from:to])
		if r.IntN(2) == 0 {
			q = strings.ToUpper(q)
		}
		queries = append(queries, q, p.Name, s.text(1), s.text(2), s.text(3+r.IntN(3)))
	}
	return queries
}

// check reads every page of the name filter q alone and with each other filter, and
// compares them with a scan by hand.
func (s *nameSearch) check(q string) {
	f, t, r, all := s.f, s.f.t, s.r, s.all
	clean, err := petstore.CleanName("name", q)
	if err != nil {
		return // refused the same way by every store, tested with the filter
	}
	filters := []petstore.PetFilter{
		{Name: q},
		{Name: q, Status: s.statuses[r.IntN(len(s.statuses))]},
		{Name: q, CategoryID: s.cats[r.IntN(len(s.cats))].ID},
		{Name: q, IDs: all[r.IntN(len(all)/2):][:40]},
	}
	for _, filter := range filters {
		var want []int64
		for _, id := range all {
			p, ok := s.pets[id]
			if ok && strings.Contains(petstore.NameKey(p.Name), petstore.NameKey(clean)) &&
				(filter.Status == "" || p.Status == filter.Status) &&
				(filter.CategoryID == 0 || p.CategoryID == filter.CategoryID) &&
				(filter.IDs == nil || slices.Contains(filter.IDs, id)) {
				want = append(want, id)
			}
		}
		got := f.allPets(filter, 1+r.IntN(7))
		if !sameIDs(ids(got, petID), want) {
			t.Errorf("%s: got %v, want %v", describe(filter), ids(got, petID), want)
			continue
		}
		for _, p := range got {
			if !samePet(p, s.pets[p.ID]) {
				t.Errorf("%s: listed %+v, want %+v", describe(filter), p, s.pets[p.ID])
			}
		}
	}
}

// allPets reads every page of the pets that filter selects, size at a time, as a
// client following the next links would: a page that is full may have a next one.
func (f *fixture) allPets(filter petstore.PetFilter, size int) []petstore.Pet {
	f.t.Helper()
	var all []petstore.Pet
	page := petstore.Page{Limit: size}
	for {
		got, err := f.s.Pets(f.ctx, filter, page)
		must(f.t, err)
		all = append(all, got...)
		if len(got) < size {
			return all
		}
		page.After = got[len(got)-1].ID
	}
}

func describe(f petstore.PetFilter) string {
	s := fmt.Sprintf("name %q", f.Name)
	if f.Status != "" {
		s += ", status " + string(f.Status)
	}
	if f.CategoryID != 0 {
		s += fmt.Sprintf(", category %d", f.CategoryID)
	}
	if f.IDs != nil {
		s += fmt.Sprintf(", %d ids", len(f.IDs))
	}
	return s
}
