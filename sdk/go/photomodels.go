package petstore

// The models of photos; the calls are in photos.go.

// Photo is a photo of a pet, stored by the service in three sizes (PhotoSize).
type Photo struct {
	ID            string // ph_…; a new upload is a new photo, so a photo never changes
	Width, Height int    // of the original, in pixels, after its EXIF orientation
	// ContentType is the media type of the original as stored, "image/jpeg" or
	// "image/png" (the service keeps no WebP); the smaller sizes are JPEG, or PNG when
	// the image has transparency. An open list, as the other enums of answers.
	ContentType string
	// URLs are where each size is served, as the service wrote them: origin-relative
	// ("/v1/photos/ph_…/thumb"). Client.PhotoURL makes them absolute.
	URLs PhotoURLs
}

// PhotoURLs are the origin-relative URLs of a photo's sizes.
type PhotoURLs struct {
	Thumb    string // at most 400 pixels on its longest side: for lists
	Display  string // at most 1,200: for a pet's page
	Original string // the full size: for a download
}

// PhotoSize is one of the sizes a photo is served in.
type PhotoSize string

// The sizes of a photo.
const (
	PhotoThumb    PhotoSize = "thumb"
	PhotoDisplay  PhotoSize = "display"
	PhotoOriginal PhotoSize = "original"
)

// of returns the URL of size among u, or "" for a size u does not hold.
func (u PhotoURLs) of(size PhotoSize) string {
	switch size {
	case PhotoThumb:
		return u.Thumb
	case PhotoDisplay:
		return u.Display
	case PhotoOriginal:
		return u.Original
	}
	return ""
}

// PhotoData is a photo's bytes, as GetPhoto fetched them.
type PhotoData struct {
	Bytes       []byte
	ContentType string // what the service said the bytes are: image/jpeg or image/png
	// ETag is the photo's strong validator; it never changes, as the photo does not.
	ETag string
}
