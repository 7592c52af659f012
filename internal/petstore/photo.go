package petstore

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Photo is a photo of a pet, stored in three sizes (PhotoSizes) by the media store
// under its id. A photo never changes: a new upload is a new photo, so that its URLs
// can be cached for good.
type Photo struct {
	ID string
	// Width and Height are the original's, in pixels.
	Width, Height int
	// ContentType is the original's media type as stored: image/jpeg or image/png.
	ContentType string
}

// MaxPhotosPerPet bounds the photos of one pet.
const MaxPhotosPerPet = 8

// PhotoSize names one of the sizes a photo is stored in.
type PhotoSize string

// The sizes of a photo: the full size, one for a pet's page, one for lists.
const (
	PhotoOriginal PhotoSize = "original"
	PhotoDisplay  PhotoSize = "display"
	PhotoThumb    PhotoSize = "thumb"
)

// PhotoSizes are the sizes every photo is stored in.
var PhotoSizes = []PhotoSize{PhotoOriginal, PhotoDisplay, PhotoThumb}

// Valid reports whether s is one of PhotoSizes.
func (s PhotoSize) Valid() bool { return s == PhotoOriginal || s == PhotoDisplay || s == PhotoThumb }

const photoPrefix = "ph_"

// NewPhotoID makes a fresh photo id: "ph_" and 26 characters, of NewEventID's kind
// (the time first, then 80 random bits), so that ids are never guessed or reused.
func NewPhotoID() string { return newID(photoPrefix, time.Now()) }

// ValidPhotoID reports whether s has the form of a photo id, which a key of the media
// store is made from: nothing else may reach a file name.
func ValidPhotoID(s string) bool {
	rest, ok := strings.CutPrefix(s, photoPrefix)
	if !ok || len(rest) != 26 {
		return false
	}
	for i := range len(rest) {
		if strings.IndexByte(idAlphabet, rest[i]) < 0 {
			return false
		}
	}
	return true
}

// PhotoKey is the media store's key of one size of a photo.
func PhotoKey(id string, size PhotoSize) string { return id + "/" + string(size) }

// PhotoNotFound is the refusal of a photo the pet does not have.
func PhotoNotFound(petID int64, photoID string) *Error {
	return Errorf(ENotFound, "Pet %d has no photo %s.", petID, photoID)
}

// TooManyPhotos is the refusal of a photo past MaxPhotosPerPet.
func TooManyPhotos(petID int64) *Error {
	return Errorf(EConflict, "Pet %d has %d photos, the most a pet may have; remove one first.", petID, MaxPhotosPerPet)
}

// CheckPhotoOrder checks that ids names every photo of have once, and returns the
// photos in that order; EConflict otherwise (a list made before another editor's
// change: nothing is changed).
func CheckPhotoOrder(petID int64, have []Photo, ids []string) ([]Photo, error) {
	byID := make(map[string]Photo, len(have))
	for _, p := range have {
		byID[p.ID] = p
	}
	out := make([]Photo, 0, len(ids))
	for _, id := range ids {
		p, ok := byID[id]
		if !ok {
			return nil, Errorf(EConflict, "Pet %d has no photo %s, or it is named twice; send each of its %d photos once.", petID, id, len(have))
		}
		delete(byID, id)
		out = append(out, p)
	}
	if len(byID) > 0 {
		return nil, Errorf(EConflict, "photoIds names %d of the %d photos of pet %d; send each of them once.", len(ids), len(have), petID)
	}
	return out, nil
}

// storedPhoto is a photo as both stores keep it in a pet's row, and as events keep it.
type storedPhoto struct {
	ID          string `json:"id"`
	Width       int    `json:"w"`
	Height      int    `json:"h"`
	ContentType string `json:"t"`
}

// MarshalPhotos encodes a pet's photos for its row: "" for none, so that a pet without
// photos costs nothing to read.
func MarshalPhotos(photos []Photo) string {
	if len(photos) == 0 {
		return ""
	}
	list := make([]storedPhoto, len(photos))
	for i, p := range photos {
		list[i] = storedPhoto(p)
	}
	b, _ := json.Marshal(list) // strings and ints: cannot fail
	return string(b)
}

// UnmarshalPhotos decodes what MarshalPhotos made; "" is no photos (an empty list).
func UnmarshalPhotos(s string) ([]Photo, error) {
	if s == "" {
		return []Photo{}, nil
	}
	var list []storedPhoto
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		return nil, fmt.Errorf("pet photos: %w", err)
	}
	out := make([]Photo, len(list))
	for i, p := range list {
		out[i] = Photo(p)
	}
	return out, nil
}
