// Package media keeps the bytes of pet photos: a Store by key (a directory, or
// S3-compatible object storage when processes on several machines must see the same
// photos), and a Cache in memory in front of it for serving. Turning an upload into
// those bytes is package photo's job.
//
// Keys are "<photoID>/<size>" (Key): a photo's renditions share a prefix, so List
// finds them together and an orphan sweep can compare photo ids with the database.
// A key is a few slash-separated parts of letters, digits, '-', '_' and '.', none
// empty, none starting with '.': no "..", no absolute path, nothing the directory
// store's temporary files (".put-*") could be mistaken for.
//
// Photos are immutable: a changed photo gets a new id. So a stored object is never
// overwritten in practice (Put still replaces it atomically), the Cache never needs
// invalidating, and an ETag can be derived from the content once, when it is loaded.
package media

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/media/photo"
	"github.com/acme-pets/petstore/internal/petstore"
)

// Store keeps objects (bytes with a content type) by key. Implementations are safe for
// concurrent use.
type Store interface {
	// Put stores data under key, replacing what was there, all or nothing.
	Put(ctx context.Context, key, contentType string, data []byte) error
	// Get returns the object under key, or ErrNotFound.
	Get(ctx context.Context, key string) (Object, error)
	// Delete removes the objects under keys; a key with nothing under it is no error.
	Delete(ctx context.Context, keys ...string) error
	// List calls fn with every key that starts with prefix (a plain string prefix, as
	// S3 has it) and when its object was last written, in no promised order. An error
	// from fn stops the listing and is returned.
	List(ctx context.Context, prefix string, fn func(key string, modified time.Time) error) error
}

// Object is a stored photo rendition.
type Object struct {
	Data        []byte
	ContentType string
}

// ErrNotFound is what Get returns for a key with nothing under it. It is a
// not_found *petstore.Error, so the HTTP layer answers 404 with no more work.
var ErrNotFound = &petstore.Error{Code: petstore.ENotFound, Message: "The photo does not exist."}

// ErrInvalidKey is wrapped by every method given a key outside the scheme.
var ErrInvalidKey = errors.New("media: invalid key")

// maxKeyLen bounds a key: S3's limit is 1,024 bytes, a file name's 255.
const maxKeyLen = 255

// CheckKey returns an error wrapping ErrInvalidKey when key is outside the scheme.
func CheckKey(key string) error {
	if key == "" || len(key) > maxKeyLen {
		return fmt.Errorf("%w: %d bytes", ErrInvalidKey, len(key))
	}
	for part := range strings.SplitSeq(key, "/") {
		if part == "" || part[0] == '.' {
			return fmt.Errorf("%w: %q", ErrInvalidKey, key)
		}
		for i := range len(part) {
			if !keyByte(part[i]) {
				return fmt.Errorf("%w: %q", ErrInvalidKey, key)
			}
		}
	}
	return nil
}

func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// Open opens the store a URL names: s3://bucket/prefix?endpoint=…&region=… (see
// OpenS3), or file:///path or a plain path for a directory (see NewDir).
func Open(ctx context.Context, rawURL string) (Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("media: store URL: %w", err)
	}
	switch u.Scheme {
	case "s3":
		return OpenS3(ctx, u)
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("media: store URL %q: a file URL names no host", rawURL)
		}
		return NewDir(u.Path)
	case "":
		return NewDir(rawURL)
	}
	return nil, fmt.Errorf("media: store URL %q: unknown scheme %q (want s3 or file)", rawURL, u.Scheme)
}

// FileOpener is a Store whose objects are files: a large one is streamed from its file
// (http.ServeContent reads the ranges asked for) rather than read whole into memory
// for every request, which a few slow clients fetching originals would multiply.
type FileOpener interface {
	OpenLarge(key string, min int64) (f *os.File, ok bool, err error)
}

// PutPhoto writes the three sizes of a processed photo under a new photo id, and
// returns the photo for the store to list; on a failure it removes what it wrote. The
// caller adds the photo to its pet (petstore.Store.AddPetPhoto), and removes the
// files (RemovePhoto) if that fails.
func PutPhoto(ctx context.Context, s Store, made photo.Photo) (petstore.Photo, error) {
	p := petstore.Photo{ID: petstore.NewPhotoID(), Width: made.Original.Width, Height: made.Original.Height, ContentType: made.Original.ContentType}
	for _, r := range made.Renditions() {
		if err := s.Put(ctx, petstore.PhotoKey(p.ID, petstore.PhotoSize(r.Size)), r.ContentType, r.Data); err != nil {
			_ = RemovePhoto(context.WithoutCancel(ctx), s, p.ID)
			return petstore.Photo{}, err
		}
	}
	return p, nil
}

// RemovePhoto deletes the files of every size of the photo with this id.
func RemovePhoto(ctx context.Context, s Store, id string) error {
	return s.Delete(ctx, PhotoKeys(id)...)
}

// PhotoKeys are the keys of every size of the photo with this id.
func PhotoKeys(id string) []string {
	keys := make([]string, len(petstore.PhotoSizes))
	for i, size := range petstore.PhotoSizes {
		keys[i] = petstore.PhotoKey(id, size)
	}
	return keys
}
