package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

func testCategories(t *testing.T, open Opener) {
	t.Run("a new category reads back with its name trimmed", func(t *testing.T) { testCategoryCreated(t, open) })

	for _, c := range []struct {
		test string
		cat  petstore.Category
		want string
	}{
		{"an empty name is refused", petstore.Category{Name: "  "}, "name"},
		{"a name of 101 characters is refused", petstore.Category{Name: strings.Repeat("x", 101)}, "name"},
		{"a description of 501 characters is refused", petstore.Category{Name: "Dogs", Description: strings.Repeat("x", 501)}, "description"},
	} {
		t.Run(c.test, func(t *testing.T) {
			f := setup(t, open)
			_, err := f.s.CreateCategory(f.ctx, c.cat)
			wantField(t, err, c.want)
		})
	}

	for _, name := range []string{"Dogs", "dogs", "DOGS", " dOgS "} {
		t.Run("a category name already used is a conflict, written as "+strings.TrimSpace(name), func(t *testing.T) {
			f := setup(t, open)
			_, err := f.s.CreateCategory(f.ctx, petstore.Category{Name: "Dogs"})
			must(t, err)
			_, err = f.s.CreateCategory(f.ctx, petstore.Category{Name: name})
			wantCode(t, err, petstore.EConflict)
		})
	}

	t.Run("an unknown category is not found", func(t *testing.T) { testCategoryUnknown(t, open) })
	t.Run("categories are listed by id, a page at a time", func(t *testing.T) { testCategoriesListed(t, open) })
	t.Run("a replaced category reads back changed", func(t *testing.T) { testCategoryReplaced(t, open) })
	t.Run("a category may change the letter case of its own name", func(t *testing.T) { testCategoryRecased(t, open) })
	t.Run("a category cannot take another category's name in any letter case", func(t *testing.T) { testCategoryNameTaken(t, open) })
	t.Run("replacing an unknown category is not found", func(t *testing.T) { testCategoryReplaceUnknown(t, open) })
	t.Run("replacing a category with an invalid name is refused", func(t *testing.T) { testCategoryReplaceInvalid(t, open) })
	t.Run("a deleted category is gone and its name free again", func(t *testing.T) { testCategoryDeleted(t, open) })
	t.Run("a category that pets use cannot be deleted", func(t *testing.T) { testCategoryInUse(t, open) })
	t.Run("deleting an unknown category is not found", func(t *testing.T) { testCategoryDeleteUnknown(t, open) })
}

func testCategoryCreated(t *testing.T, open Opener) {
	f := setup(t, open)
	c, err := f.s.CreateCategory(f.ctx, petstore.Category{Name: "  Dogs ", Description: "Loyal."})
	must(t, err)
	want := petstore.Category{ID: c.ID, Name: "Dogs", Description: "Loyal."}
	if c.ID < 1 || c != want {
		t.Errorf("created %+v, want %+v", c, want)
	}
	got, err := f.s.Category(f.ctx, c.ID)
	must(t, err)
	if got != want {
		t.Errorf("read %+v, want %+v", got, want)
	}
}

func testCategoryUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.Category(f.ctx, 999)
	wantCode(t, err, petstore.ENotFound)
}

func testCategoriesListed(t *testing.T, open Opener) {
	f := setup(t, open)
	var all []int64
	for range 5 {
		all = append(all, f.category().ID)
	}
	pages := []struct {
		page petstore.Page
		want []int64
	}{
		{petstore.Page{Limit: 2}, all[:2]},
		{petstore.Page{Limit: 2, After: all[1]}, all[2:4]},
		{petstore.Page{Limit: 2, After: all[3]}, all[4:]},
		{petstore.Page{Limit: 2, After: all[4]}, nil},
		{petstore.Page{Limit: 100}, all},
	}
	for _, p := range pages {
		got, err := f.s.Categories(f.ctx, p.page)
		must(t, err)
		if !sameIDs(ids(got, categoryID), p.want) {
			t.Errorf("page %+v = %v, want %v", p.page, ids(got, categoryID), p.want)
		}
	}
}

func testCategoryReplaced(t *testing.T, open Opener) {
	f := setup(t, open)
	c := f.category()
	got, err := f.s.ReplaceCategory(f.ctx, petstore.Category{ID: c.ID, Name: " Cats ", Description: "Aloof."})
	must(t, err)
	want := petstore.Category{ID: c.ID, Name: "Cats", Description: "Aloof."}
	if got != want {
		t.Errorf("replaced %+v, want %+v", got, want)
	}
	if read, err := f.s.Category(f.ctx, c.ID); err != nil || read != want {
		t.Errorf("read %+v, %v; want %+v", read, err, want)
	}
}

func testCategoryRecased(t *testing.T, open Opener) {
	f := setup(t, open)
	c, err := f.s.CreateCategory(f.ctx, petstore.Category{Name: "dogs"})
	must(t, err)
	_, err = f.s.ReplaceCategory(f.ctx, petstore.Category{ID: c.ID, Name: "Dogs"})
	must(t, err)
}

func testCategoryNameTaken(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.CreateCategory(f.ctx, petstore.Category{Name: "Dogs"})
	must(t, err)
	c := f.category()
	_, err = f.s.ReplaceCategory(f.ctx, petstore.Category{ID: c.ID, Name: "DOGS"})
	wantCode(t, err, petstore.EConflict)
	if read, _ := f.s.Category(f.ctx, c.ID); read != c {
		t.Errorf("the category changed to %+v", read)
	}
}

func testCategoryReplaceUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.ReplaceCategory(f.ctx, petstore.Category{ID: 999, Name: "Dogs"})
	wantCode(t, err, petstore.ENotFound)
}

func testCategoryReplaceInvalid(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.ReplaceCategory(f.ctx, petstore.Category{ID: f.category().ID, Name: ""})
	wantField(t, err, "name")
}

func testCategoryDeleted(t *testing.T, open Opener) {
	f := setup(t, open)
	c := f.category()
	must(t, f.s.DeleteCategory(f.ctx, c.ID))
	_, err := f.s.Category(f.ctx, c.ID)
	wantCode(t, err, petstore.ENotFound)
	_, err = f.s.CreateCategory(f.ctx, petstore.Category{Name: c.Name})
	must(t, err)
}

func testCategoryInUse(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(0)
	wantCode(t, f.s.DeleteCategory(f.ctx, p.CategoryID), petstore.EConflict)
	if _, err := f.s.Category(f.ctx, p.CategoryID); err != nil {
		t.Errorf("the category is gone: %v", err)
	}
}

func testCategoryDeleteUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	wantCode(t, f.s.DeleteCategory(f.ctx, 999), petstore.ENotFound)
}

func testPets(t *testing.T, open Opener) {
	t.Run("a new pet has a stock of 0 and reads back with its name trimmed", func(t *testing.T) { testPetCreated(t, open) })
	t.Run("a pet in an unknown category is refused on categoryId", func(t *testing.T) { testPetUnknownCategory(t, open) })

	for _, c := range []struct {
		test   string
		fields petstore.PetFields
		want   string
	}{
		{"a pet without a name is refused", petstore.PetFields{Name: " ", Status: petstore.Available}, "name"},
		{"a pet with a control character in its name is refused", petstore.PetFields{Name: "Re\x00x", Status: petstore.Available}, "name"},
		{"a pet with an unknown status is refused", petstore.PetFields{Name: "Rex", Status: "lost"}, "status"},
	} {
		t.Run(c.test, func(t *testing.T) {
			f := setup(t, open)
			if c.fields.CategoryID == 0 {
				c.fields.CategoryID = f.category().ID
			}
			_, err := f.s.CreatePet(f.ctx, c.fields)
			wantField(t, err, c.want)
		})
	}

	t.Run("an unknown pet is not found", func(t *testing.T) { testPetUnknown(t, open) })
	t.Run("an updated pet keeps its stock", func(t *testing.T) { testPetUpdated(t, open) })

	testPetStatusTransitions(t, open)

	t.Run("a pet cannot move to an unknown category", func(t *testing.T) { testPetMoveToUnknownCategory(t, open) })
	t.Run("an update that makes the pet invalid is refused", func(t *testing.T) { testPetUpdateInvalid(t, open) })
	t.Run("an update whose change fails returns that error and changes nothing", func(t *testing.T) { testPetUpdateChangeFails(t, open) })
	t.Run("updating an unknown pet is not found", func(t *testing.T) { testPetUpdateUnknown(t, open) })
	t.Run("a deleted pet is gone", func(t *testing.T) { testPetDeleted(t, open) })
	t.Run("a pet with an incomplete order cannot be deleted", func(t *testing.T) { testPetDeleteWithOpenOrder(t, open) })
	t.Run("a pet whose orders are complete can be deleted, and the orders keep its id", func(t *testing.T) { testPetDeleteWithCompleteOrders(t, open) })
	t.Run("deleting an unknown pet is not found", func(t *testing.T) { testPetDeleteUnknown(t, open) })
	t.Run("pets are listed by id, a page at a time, with every filter applied", func(t *testing.T) { testPetsListed(t, open) })
	t.Run("pets are found by a part of their name in any letter case, every character taken as it is", func(t *testing.T) { testPetsByName(t, open) })
	t.Run("a renamed pet is found by its new name, not its old one", func(t *testing.T) { testPetRenamedFound(t, open) })

	for _, c := range []struct{ test, name string }{
		{"a name filter of white space only is refused", " \t "},
		{"a name filter longer than a name is refused", strings.Repeat("x", petstore.MaxName+1)},
		{"a name filter with NUL is refused", "re\x00x"},
		{"a name filter that is not UTF-8 is refused", "re\xffx"},
		{"a name filter with a control character is refused", "re\x1bx"},
	} {
		t.Run(c.test, func(t *testing.T) {
			f := setup(t, open)
			f.availablePet(0)
			_, err := f.s.Pets(f.ctx, petstore.PetFilter{Name: c.name}, petstore.Page{Limit: 100})
			wantField(t, err, "name")
		})
	}
}

// testPetStatusTransitions runs a subtest of t for each change of status by hand: the
// allowed ones are made, the others refused.
func testPetStatusTransitions(t *testing.T, open Opener) {
	statuses := []petstore.PetStatus{petstore.Available, petstore.Pending, petstore.Sold}
	allowed := map[[2]petstore.PetStatus]bool{
		{petstore.Available, petstore.Pending}: true,
		{petstore.Pending, petstore.Available}: true,
		{petstore.Pending, petstore.Sold}:      true,
		{petstore.Available, petstore.Sold}:    true,
		{petstore.Sold, petstore.Available}:    true,
	}
	for _, from := range statuses {
		for _, to := range statuses {
			ok := from == to || allowed[[2]petstore.PetStatus{from, to}]
			test := "a pet may go from " + string(from) + " to " + string(to) + " by hand"
			if !ok {
				test = "a pet may not go from " + string(from) + " to " + string(to) + " by hand"
			}
			t.Run(test, func(t *testing.T) {
				f := setup(t, open)
				p := f.petWith(from, 0)
				got, err := f.s.UpdatePet(f.ctx, p.ID, func(old petstore.PetFields) (petstore.PetFields, error) {
					old.Status = to
					return old, nil
				})
				if !ok {
					wantCode(t, err, petstore.EInvalidTransition)
					f.wantPet(p.ID, from, 0)
					return
				}
				must(t, err)
				if got.Status != to {
					t.Errorf("status = %s, want %s", got.Status, to)
				}
				f.wantPet(p.ID, to, 0)
			})
		}
	}
}

func testPetCreated(t *testing.T, open Opener) {
	f := setup(t, open)
	c := f.category()
	p, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: " Rex ", CategoryID: c.ID, Status: petstore.Pending})
	must(t, err)
	want := petstore.Pet{ID: p.ID, Name: "Rex", CategoryID: c.ID, Status: petstore.Pending, Stock: 0}
	if p.ID < 1 || !samePet(p, want) {
		t.Errorf("created %+v, want %+v", p, want)
	}
	if got := f.pet(p.ID); !samePet(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
}

func testPetUnknownCategory(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: "Rex", CategoryID: 999, Status: petstore.Available})
	wantField(t, err, "categoryId")
}

func testPetUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.Pet(f.ctx, 999)
	wantCode(t, err, petstore.ENotFound)
}

func testPetUpdated(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(7)
	c := f.category()
	got, err := f.s.UpdatePet(f.ctx, p.ID, func(old petstore.PetFields) (petstore.PetFields, error) {
		if old.Name != p.Name || old.CategoryID != p.CategoryID || old.Status != p.Status {
			t.Errorf("change got %+v, want the fields of %+v", old, p)
		}
		return petstore.PetFields{Name: " Fido ", CategoryID: c.ID, Status: petstore.Pending}, nil
	})
	must(t, err)
	want := petstore.Pet{ID: p.ID, Name: "Fido", CategoryID: c.ID, Status: petstore.Pending, Stock: 7}
	if !samePet(got, want) {
		t.Errorf("updated %+v, want %+v", got, want)
	}
	if read := f.pet(p.ID); !samePet(read, want) {
		t.Errorf("read %+v, want %+v", read, want)
	}
}

func testPetMoveToUnknownCategory(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(0)
	_, err := f.s.UpdatePet(f.ctx, p.ID, func(old petstore.PetFields) (petstore.PetFields, error) {
		old.CategoryID = 999
		return old, nil
	})
	wantField(t, err, "categoryId")
	if got := f.pet(p.ID); !samePet(got, p) {
		t.Errorf("pet changed to %+v", got)
	}
}

func testPetUpdateInvalid(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(0)
	_, err := f.s.UpdatePet(f.ctx, p.ID, func(old petstore.PetFields) (petstore.PetFields, error) {
		old.Name = ""
		return old, nil
	})
	wantField(t, err, "name")
	if got := f.pet(p.ID); !samePet(got, p) {
		t.Errorf("pet changed to %+v", got)
	}
}

func testPetUpdateChangeFails(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(0)
	failure := errors.New("merge patch failed")
	_, err := f.s.UpdatePet(f.ctx, p.ID, func(old petstore.PetFields) (petstore.PetFields, error) {
		return petstore.PetFields{Name: "Other", CategoryID: old.CategoryID, Status: old.Status}, failure
	})
	if !errors.Is(err, failure) {
		t.Errorf("error = %v, want %v", err, failure)
	}
	if got := f.pet(p.ID); !samePet(got, p) {
		t.Errorf("pet changed to %+v", got)
	}
}

func testPetUpdateUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	_, err := f.s.UpdatePet(f.ctx, 999, func(old petstore.PetFields) (petstore.PetFields, error) {
		t.Error("change was called for an unknown pet")
		return old, nil
	})
	wantCode(t, err, petstore.ENotFound)
}

func testPetDeleted(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(3)
	must(t, f.s.DeletePet(f.ctx, p.ID))
	_, err := f.s.Pet(f.ctx, p.ID)
	wantCode(t, err, petstore.ENotFound)
}

func testPetDeleteWithOpenOrder(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(3)
	f.order(f.account(petstore.Customer).ID, p.ID, 1)
	wantCode(t, f.s.DeletePet(f.ctx, p.ID), petstore.EConflict)
	f.wantPet(p.ID, petstore.Available, 2)
}

func testPetDeleteWithCompleteOrders(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(3)
	o := f.order(f.account(petstore.Customer).ID, p.ID, 1)
	f.complete(o.ID)
	must(t, f.s.DeletePet(f.ctx, p.ID))
	got, err := f.s.Order(f.ctx, o.ID, 0)
	must(t, err)
	if got.PetID != p.ID || !got.Complete {
		t.Errorf("order = %+v, want complete for pet %d", got, p.ID)
	}
	// A new pet never takes the id of the deleted one.
	if q := f.availablePet(0); q.ID == p.ID {
		t.Errorf("a new pet reused id %d", p.ID)
	}
}

func testPetDeleteUnknown(t *testing.T, open Opener) {
	f := setup(t, open)
	wantCode(t, f.s.DeletePet(f.ctx, 999), petstore.ENotFound)
}

func testPetsListed(t *testing.T, open Opener) {
	f := setup(t, open)
	dogs, cats := f.category(), f.category()
	mk := func(c petstore.Category, s petstore.PetStatus) int64 {
		p, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: name("Pet"), CategoryID: c.ID, Status: s})
		must(t, err)
		return p.ID
	}
	d1 := mk(dogs, petstore.Available)
	c1 := mk(cats, petstore.Available)
	d2 := mk(dogs, petstore.Sold)
	d3 := mk(dogs, petstore.Available)
	c2 := mk(cats, petstore.Pending)
	d4 := mk(dogs, petstore.Available)

	cases := []struct {
		test   string
		filter petstore.PetFilter
		page   petstore.Page
		want   []int64
	}{
		{"all", petstore.PetFilter{}, petstore.Page{Limit: 100}, []int64{d1, c1, d2, d3, c2, d4}},
		{"the first page", petstore.PetFilter{}, petstore.Page{Limit: 2}, []int64{d1, c1}},
		{"the second page", petstore.PetFilter{}, petstore.Page{Limit: 2, After: c1}, []int64{d2, d3}},
		{"the last page", petstore.PetFilter{}, petstore.Page{Limit: 2, After: d3}, []int64{c2, d4}},
		{"past the end", petstore.PetFilter{}, petstore.Page{Limit: 2, After: d4}, nil},
		{"by status", petstore.PetFilter{Status: petstore.Available}, petstore.Page{Limit: 100}, []int64{d1, c1, d3, d4}},
		{"by category", petstore.PetFilter{CategoryID: cats.ID}, petstore.Page{Limit: 100}, []int64{c1, c2}},
		{"by status and category", petstore.PetFilter{Status: petstore.Available, CategoryID: dogs.ID}, petstore.Page{Limit: 100}, []int64{d1, d3, d4}},
		{"by status and category, paged", petstore.PetFilter{Status: petstore.Available, CategoryID: dogs.ID}, petstore.Page{Limit: 2, After: d1}, []int64{d3, d4}},
		{"by ids, in id order, unknown ids left out", petstore.PetFilter{IDs: []int64{d4, 999, c1, d1}}, petstore.Page{Limit: 100}, []int64{d1, c1, d4}},
		{"by ids and status", petstore.PetFilter{IDs: []int64{d1, d2, c2}, Status: petstore.Sold}, petstore.Page{Limit: 100}, []int64{d2}},
		{"by ids, paged", petstore.PetFilter{IDs: []int64{d1, c1, d2, d3}}, petstore.Page{Limit: 2, After: c1}, []int64{d2, d3}},
		{"by a category without pets", petstore.PetFilter{CategoryID: f.category().ID}, petstore.Page{Limit: 100}, nil},
	}
	for _, c := range cases {
		got, err := f.s.Pets(f.ctx, c.filter, c.page)
		must(t, err)
		if !sameIDs(ids(got, petID), c.want) {
			t.Errorf("%s: got %v, want %v", c.test, ids(got, petID), c.want)
		}
	}
	got, err := f.s.Pets(f.ctx, petstore.PetFilter{IDs: []int64{d2}}, petstore.Page{Limit: 1})
	must(t, err)
	if len(got) != 1 || !samePet(got[0], f.pet(d2)) {
		t.Errorf("listed %+v, want %+v", got, f.pet(d2))
	}
}

func testPetsByName(t *testing.T, open Opener) {
	f := setup(t, open)
	dogs, cats := f.category(), f.category()
	mk := func(name string, c petstore.Category, s petstore.PetStatus) int64 {
		p, err := f.s.CreatePet(f.ctx, petstore.PetFields{Name: name, CategoryID: c.ID, Status: s})
		must(t, err)
		return p.ID
	}
	eclair := mk("Éclair", dogs, petstore.Available)
	rex := mk("Rex", dogs, petstore.Available)
	rexine := mk("REXINE", cats, petstore.Sold)
	wool := mk("100% Wool", cats, petstore.Available)
	plain := mk("100 Wool", dogs, petstore.Available)
	under := mk("under_score", dogs, petstore.Available)
	underX := mk("underXscore", dogs, petstore.Available)
	back := mk(`back\slash`, dogs, petstore.Available)
	backs := mk("backslash", dogs, petstore.Available)
	strasse := mk("Straße", dogs, petstore.Available)
	upper := mk("STRASSE", dogs, petstore.Available)
	omega := mk("Ωmega", dogs, petstore.Available)

	cases := []struct {
		test   string
		filter petstore.PetFilter
		page   petstore.Page
		want   []int64
	}{
		{"ASCII in lower case", petstore.PetFilter{Name: "rex"}, petstore.Page{Limit: 100}, []int64{rex, rexine}},
		{"ASCII in upper case", petstore.PetFilter{Name: "REX"}, petstore.Page{Limit: 100}, []int64{rex, rexine}},
		{"ASCII in mixed case, in the middle of a name", petstore.PetFilter{Name: "xIn"}, petstore.Page{Limit: 100}, []int64{rexine}},
		{"an accented letter in lower case", petstore.PetFilter{Name: "éc"}, petstore.Page{Limit: 100}, []int64{eclair}},
		{"an accented letter in upper case", petstore.PetFilter{Name: "ÉC"}, petstore.Page{Limit: 100}, []int64{eclair}},
		{"the end of a name after an accented letter", petstore.PetFilter{Name: "clair"}, petstore.Page{Limit: 100}, []int64{eclair}},
		{"a letter without its accent is another letter", petstore.PetFilter{Name: "eclair"}, petstore.Page{Limit: 100}, nil},
		{"a Greek capital", petstore.PetFilter{Name: "ωMEGA"}, petstore.Page{Limit: 100}, []int64{omega}},
		{"ß is not SS", petstore.PetFilter{Name: "straße"}, petstore.Page{Limit: 100}, []int64{strasse}},
		{"SS is not ß", petstore.PetFilter{Name: "strasse"}, petstore.Page{Limit: 100}, []int64{upper}},
		{"ß alone", petstore.PetFilter{Name: "ß"}, petstore.Page{Limit: 100}, []int64{strasse}},
		{"% is a percent sign", petstore.PetFilter{Name: "0% w"}, petstore.Page{Limit: 100}, []int64{wool}},
		{"% alone", petstore.PetFilter{Name: "%"}, petstore.Page{Limit: 100}, []int64{wool}},
		{"_ is an underscore", petstore.PetFilter{Name: "r_s"}, petstore.Page{Limit: 100}, []int64{under}},
		{"_ alone", petstore.PetFilter{Name: "_"}, petstore.Page{Limit: 100}, []int64{under}},
		{`\ is a backslash`, petstore.PetFilter{Name: `k\s`}, petstore.Page{Limit: 100}, []int64{back}},
		{`\ alone`, petstore.PetFilter{Name: `\`}, petstore.Page{Limit: 100}, []int64{back}},
		{"a backslash and a percent sign", petstore.PetFilter{Name: `\%`}, petstore.Page{Limit: 100}, nil},
		{"surrounding white space is trimmed, as from a name", petstore.PetFilter{Name: "  rex\t"}, petstore.Page{Limit: 100}, []int64{rex, rexine}},
		{"white space inside is kept", petstore.PetFilter{Name: "0 w"}, petstore.Page{Limit: 100}, []int64{plain}},
		{"a whole name", petstore.PetFilter{Name: "backslash"}, petstore.Page{Limit: 100}, []int64{backs}},
		{"text no name holds", petstore.PetFilter{Name: "rexx"}, petstore.Page{Limit: 100}, nil},
		{"with status", petstore.PetFilter{Name: "rex", Status: petstore.Sold}, petstore.Page{Limit: 100}, []int64{rexine}},
		{"with category", petstore.PetFilter{Name: "WOOL", CategoryID: dogs.ID}, petstore.Page{Limit: 100}, []int64{plain}},
		{"with ids", petstore.PetFilter{Name: "rex", IDs: []int64{rexine, eclair, 999}}, petstore.Page{Limit: 100}, []int64{rexine}},
		{"with status, category and ids", petstore.PetFilter{Name: "score", Status: petstore.Available, CategoryID: dogs.ID, IDs: []int64{underX, back}}, petstore.Page{Limit: 100}, []int64{underX}},
		{"the first page", petstore.PetFilter{Name: "s"}, petstore.Page{Limit: 2}, []int64{under, underX}},
		{"the next page", petstore.PetFilter{Name: "s"}, petstore.Page{Limit: 2, After: underX}, []int64{back, backs}},
		{"the last page", petstore.PetFilter{Name: "s"}, petstore.Page{Limit: 2, After: backs}, []int64{strasse, upper}},
		{"past the end", petstore.PetFilter{Name: "s"}, petstore.Page{Limit: 2, After: upper}, nil},
	}
	for _, c := range cases {
		got, err := f.s.Pets(f.ctx, c.filter, c.page)
		must(t, err)
		if !sameIDs(ids(got, petID), c.want) {
			t.Errorf("%s (%q): got %v, want %v", c.test, c.filter.Name, ids(got, petID), c.want)
		}
	}
	got, err := f.s.Pets(f.ctx, petstore.PetFilter{Name: "ÉCLAIR"}, petstore.Page{Limit: 1})
	must(t, err)
	if len(got) != 1 || !samePet(got[0], f.pet(eclair)) {
		t.Errorf("listed %+v, want %+v", got, f.pet(eclair))
	}
}

func testPetRenamedFound(t *testing.T, open Opener) {
	f := setup(t, open)
	p := f.availablePet(0)
	_, err := f.s.UpdatePet(f.ctx, p.ID, func(old petstore.PetFields) (petstore.PetFields, error) {
		old.Name = " Ölfleck "
		return old, nil
	})
	must(t, err)
	for _, c := range []struct {
		name string
		want []int64
	}{
		{"ölf", []int64{p.ID}},
		{"ÖLFLECK", []int64{p.ID}},
		{p.Name, nil},
	} {
		got, err := f.s.Pets(f.ctx, petstore.PetFilter{Name: c.name}, petstore.Page{Limit: 100})
		must(t, err)
		if !sameIDs(ids(got, petID), c.want) {
			t.Errorf("%q: got %v, want %v", c.name, ids(got, petID), c.want)
		}
	}
}

// samePet compares pets, prices by value.
func samePet(a, b petstore.Pet) bool {
	samePrice := (a.Price == nil) == (b.Price == nil) && (a.Price == nil || *a.Price == *b.Price)
	// A pet without tags may hold nil or an empty list: the same pet.
	return a.ID == b.ID && a.Name == b.Name && a.CategoryID == b.CategoryID && a.Status == b.Status && a.Stock == b.Stock &&
		a.Description == b.Description && slices.Equal(a.Tags, b.Tags) && slices.Equal(a.Photos, b.Photos) && samePrice
}
