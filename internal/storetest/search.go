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
	t.Run("every page of a search holds exactly the pets a scan by hand finds, in id order", func(t *testing.T) {
		f := setup(t, open)
		r := rand.New(rand.NewPCG(uint64(unique.Add(1)), 20))
		alphabet := []rune("abcABC%_\\ éÉßẞжЖωΩ日1")
		text := func(n int) string {
			var b strings.Builder
			for range n {
				b.WriteRune(alphabet[r.IntN(len(alphabet))])
			}
			return b.String()
		}
		randomName := func() string {
			for {
				n := 1 + r.IntN(10)
				if r.IntN(10) == 0 {
					n = 60 + r.IntN(petstore.MaxName-59)
				}
				if name, err := petstore.CleanName("name", text(n)); err == nil {
					return name
				}
			}
		}
		cats := []petstore.Category{f.category(), f.category()}
		statuses := []petstore.PetStatus{petstore.Available, petstore.Pending, petstore.Sold}

		pets := map[int64]petstore.Pet{}
		for range 300 {
			p, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: randomName(),
				CategoryID: cats[r.IntN(len(cats))].ID, Status: statuses[r.IntN(len(statuses))]})
			must(t, err)
			pets[p.ID] = p
		}
		all := slices.Sorted(func(yield func(int64) bool) {
			for id := range pets {
				if !yield(id) {
					return
				}
			}
		})
		for _, id := range all[:40] {
			p, err := f.s.UpdatePet(f.ctx, id, func(old petstore.PetFields) (petstore.PetFields, error) {
				switch r.IntN(3) {
				case 0: // a new name
					old.Name = randomName()
				case 1: // the same name in another letter case
					old.Name = strings.ToUpper(old.Name)
				case 2: // the same name, another status
					old.Status = petstore.Sold
				}
				return old, nil
			})
			must(t, err)
			pets[id] = p
		}
		for _, id := range all[40:60] {
			must(t, f.s.DeletePet(f.ctx, id))
			delete(pets, id)
		}

		queries := []string{"%", "_", `\`, `\%`, "a_", "%%", "ß", "ẞ", "SS", "ж", "Ж", "ω", "日", " ", "a b",
			strings.Repeat("a", petstore.MaxName), "no such name"}
		for _, p := range pets {
			if len(queries) > 150 {
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
			queries = append(queries, q, p.Name, text(1), text(2), text(3+r.IntN(3)))
		}

		for _, q := range queries {
			clean, err := petstore.CleanName("name", q)
			if err != nil {
				continue // refused the same way by every store, tested with the filter
			}
			filters := []petstore.PetFilter{
				{Name: q},
				{Name: q, Status: statuses[r.IntN(len(statuses))]},
				{Name: q, CategoryID: cats[r.IntN(len(cats))].ID},
				{Name: q, IDs: all[r.IntN(len(all)/2):][:40]},
			}
			for _, filter := range filters {
				var want []int64
				for _, id := range all {
					p, ok := pets[id]
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
					if p != pets[p.ID] {
						t.Errorf("%s: listed %+v, want %+v", describe(filter), p, pets[p.ID])
					}
				}
			}
		}
	})
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
