package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

// testPhotos checks which photos a pet has and in what order; the files are the media
// store's, not the store's.
func testPhotos(t *testing.T, open Opener) {
	t.Run("photos are added last, reordered, removed, and read with the pet", func(t *testing.T) { testPhotosLifecycle(t, open) })
	t.Run("a pet holds at most 8, also when many are added at once", func(t *testing.T) { testPhotoCap(t, open) })
	t.Run("deleting a pet forgets its photos", func(t *testing.T) { testPhotosOfDeletedPet(t, open) })
}

func newPhoto(i int) petstore.Photo {
	return petstore.Photo{ID: petstore.NewPhotoID(), Width: 100 + i, Height: 50 + i, ContentType: "image/jpeg"}
}

func photoIDs(photos []petstore.Photo) []string {
	ids := make([]string, len(photos))
	for i, p := range photos {
		ids[i] = p.ID
	}
	return ids
}

func testPhotosLifecycle(t *testing.T, open Opener) {
	f := setup(t, open)
	pet := f.availablePet(3)
	if got := f.pet(pet.ID).Photos; got == nil || len(got) != 0 {
		t.Errorf("a new pet's photos are %#v, want an empty list", got)
	}
	a, b, c := newPhoto(1), newPhoto(2), newPhoto(3)
	for _, p := range []petstore.Photo{a, b, c} {
		got, err := f.s.AddPetPhoto(f.ctx, pet.ID, p)
		must(t, err)
		if last := got.Photos[len(got.Photos)-1]; last != p {
			t.Errorf("added %+v, the pet ends with %+v", p, last)
		}
	}
	if got := f.pet(pet.ID); !slices.Equal(got.Photos, []petstore.Photo{a, b, c}) || got.Stock != 3 || got.Name != pet.Name {
		t.Errorf("read %+v, want the pet with photos a, b, c", got)
	}
	if got := f.allPets(petstore.PetFilter{IDs: []int64{pet.ID}}, 10); len(got) != 1 || !slices.Equal(got[0].Photos, []petstore.Photo{a, b, c}) {
		t.Errorf("listed %+v", got)
	}

	got, err := f.s.ReorderPetPhotos(f.ctx, pet.ID, []string{c.ID, a.ID, b.ID})
	must(t, err)
	if !slices.Equal(got.Photos, []petstore.Photo{c, a, b}) || !slices.Equal(f.pet(pet.ID).Photos, []petstore.Photo{c, a, b}) {
		t.Errorf("reordered to %v, read %v", photoIDs(got.Photos), photoIDs(f.pet(pet.ID).Photos))
	}
	for _, ids := range [][]string{{c.ID, a.ID}, {c.ID, a.ID, a.ID}, {c.ID, a.ID, b.ID, newPhoto(4).ID}} {
		_, err := f.s.ReorderPetPhotos(f.ctx, pet.ID, ids)
		wantCode(t, err, petstore.EConflict)
	}
	_, err = f.s.ReorderPetPhotos(f.ctx, 99999, nil)
	wantCode(t, err, petstore.ENotFound)

	// A change of the pet's fields keeps its photos.
	changed, err := f.s.UpdatePet(f.ctx, pet.ID, func(pf petstore.PetFields) (petstore.PetFields, error) { pf.Name = "Renamed"; return pf, nil })
	must(t, err)
	if !slices.Equal(changed.Photos, []petstore.Photo{c, a, b}) {
		t.Errorf("an update answered photos %v", photoIDs(changed.Photos))
	}

	got, err = f.s.RemovePetPhoto(f.ctx, pet.ID, a.ID)
	must(t, err)
	if !slices.Equal(got.Photos, []petstore.Photo{c, b}) || !slices.Equal(f.pet(pet.ID).Photos, []petstore.Photo{c, b}) {
		t.Errorf("after removing a: %v", photoIDs(f.pet(pet.ID).Photos))
	}
	_, err = f.s.RemovePetPhoto(f.ctx, pet.ID, a.ID)
	wantCode(t, err, petstore.ENotFound)
	other := f.availablePet(0)
	_, err = f.s.RemovePetPhoto(f.ctx, other.ID, b.ID)
	wantCode(t, err, petstore.ENotFound)
	_, err = f.s.AddPetPhoto(f.ctx, 99999, newPhoto(5))
	wantCode(t, err, petstore.ENotFound)

	known, err := f.s.KnownPhotos(f.ctx, []string{a.ID, b.ID, c.ID, "ph_unknown"})
	must(t, err)
	if want := map[string]bool{b.ID: true, c.ID: true}; fmt.Sprint(known) != fmt.Sprint(want) {
		t.Errorf("known photos %v, want %v", known, want)
	}
}

func testPhotoCap(t *testing.T, open Opener) {
	f := setup(t, open)
	pet := f.availablePet(0)
	const tries = 2 * petstore.MaxPhotosPerPet
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		added   []string
		refused int
	)
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newPhoto(i)
			_, err := f.s.AddPetPhoto(f.ctx, pet.ID, p)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				added = append(added, p.ID)
			case petstore.ErrorCode(err) == petstore.EConflict:
				refused++
			default:
				t.Errorf("add photo %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	got := photoIDs(f.pet(pet.ID).Photos)
	if len(added) != petstore.MaxPhotosPerPet || refused != tries-petstore.MaxPhotosPerPet || len(got) != len(added) {
		t.Fatalf("%d added, %d refused; the pet has %d", len(added), refused, len(got))
	}
	if !sameSet(got, added) {
		t.Errorf("the pet has %v; the adds that succeeded were %v", got, added)
	}
}

func testPhotosOfDeletedPet(t *testing.T, open Opener) {
	f := setup(t, open)
	pet := f.availablePet(0)
	p := newPhoto(1)
	_, err := f.s.AddPetPhoto(f.ctx, pet.ID, p)
	must(t, err)
	must(t, f.s.DeletePet(f.ctx, pet.ID))
	known, err := f.s.KnownPhotos(f.ctx, []string{p.ID})
	must(t, err)
	if known[p.ID] {
		t.Error("the photo of a deleted pet is still known")
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
