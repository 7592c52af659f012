package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/acme-pets/petstore/internal/media"
	"github.com/acme-pets/petstore/internal/media/photo"
	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// MaxPhotoBytes bounds the body of a photo upload (the document's 10 MiB).
const MaxPhotoBytes = 10 << 20

// Operations the middleware treats apart: an upload's body is an image, not JSON, and
// getPhoto is served by servePhoto, outside the generated server.
const (
	uploadPetPhoto = "uploadPetPhoto"
	getPhoto       = "getPhoto"
	photoPattern   = apiPrefix + "/photos/{photoId}/{size}"
	photoPrefix    = apiPrefix + "/photos/"
)

// photoFiles keeps the files of pets' photos: written to the media store, served
// through the cache in front of it, and made by the processor from an upload.
type photoFiles struct {
	cache *media.Cache
	proc  *photo.Processor
	log   *slog.Logger
}

// newPhotoFiles is the photos of a server with cfg.Media; nil without.
func newPhotoFiles(cfg Config) *photoFiles {
	if cfg.Media == nil {
		return nil
	}
	return &photoFiles{cache: media.NewCache(cfg.Media, media.CacheOptions{MaxBytes: cfg.PhotoCacheBytes}),
		proc: photo.NewProcessor(cfg.PhotoConcurrency), log: cfg.Logger}
}

// errNoPhotos answers the photo operations of a server started without a media store.
var errNoPhotos = petstore.Errorf(petstore.ENotImplemented, "This server keeps no photos: its operator gave it no media store (--media-dir or --media-url).")

// photoURL is where one size of a photo is served, origin-relative as Location is.
func photoURL(id string, size petstore.PhotoSize) string {
	return apiPrefix + "/photos/" + id + "/" + string(size)
}

func toPhoto(p petstore.Photo) oas.Photo {
	return oas.Photo{ID: p.ID, Width: int32(p.Width), Height: int32(p.Height), ContentType: p.ContentType,
		Urls: oas.PhotoUrls{Thumb: photoURL(p.ID, petstore.PhotoThumb), Display: photoURL(p.ID, petstore.PhotoDisplay),
			Original: photoURL(p.ID, petstore.PhotoOriginal)}}
}

func (h *Handler) UploadPetPhoto(ctx context.Context, req oas.UploadPetPhotoReq, params oas.UploadPetPhotoParams) (oas.UploadPetPhotoRes, error) {
	if h.photos == nil {
		return nil, errNoPhotos
	}
	var (
		declared string
		body     io.Reader
	)
	switch r := req.(type) {
	case *oas.UploadPetPhotoReqImageJpeg:
		declared, body = photo.JPEG, r.Data
	case *oas.UploadPetPhotoReqImagePNG:
		declared, body = photo.PNG, r.Data
	case *oas.UploadPetPhotoReqImageWEBP:
		declared, body = photo.WebP, r.Data
	}
	data, err := io.ReadAll(body) // at most MaxPhotoBytes: the middleware bounds the body
	if err != nil {
		return nil, h.bodyError(ctx, err)
	}
	// What the store would refuse, refused before the costly part.
	pet, err := h.store.Pet(ctx, params.PetId)
	if err != nil {
		return nil, err
	}
	if len(pet.Photos) >= petstore.MaxPhotosPerPet {
		return nil, petstore.TooManyPhotos(pet.ID)
	}
	made, err := h.photos.proc.Process(ctx, declared, data)
	if err != nil {
		return nil, err
	}
	p, err := media.PutPhoto(ctx, h.photos.cache.Store(), made)
	if err != nil {
		return nil, err
	}
	if _, err := h.store.AddPetPhoto(ctx, pet.ID, p); err != nil {
		h.photos.remove(ctx, p.ID)
		return nil, err
	}
	return &oas.PhotoHeaders{Location: photoURL(p.ID, petstore.PhotoOriginal), Response: toPhoto(p)}, nil
}

// bodyError words a failure to read an upload's body: too large, too slow (the rest
// of it cannot be read, so the connection ends with the answer, as decodeError's does
// for JSON), or gone.
func (h *Handler) bodyError(ctx context.Context, err error) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return petstore.Errorf(petstore.EPayloadTooLarge, "The photo is larger than %d bytes (10 MiB).", tooLarge.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		if ri := info(ctx); ri.w != nil {
			ri.w.Header().Set("Connection", "close")
		}
		return requestTimeout(h.readTimeout)
	}
	return err
}

func (h *Handler) DeletePetPhoto(ctx context.Context, params oas.DeletePetPhotoParams) (oas.DeletePetPhotoRes, error) {
	if h.photos == nil {
		return nil, errNoPhotos
	}
	if _, err := h.store.RemovePetPhoto(ctx, params.PetId, params.PhotoId); err != nil {
		return nil, err
	}
	h.photos.remove(ctx, params.PhotoId)
	return &oas.DeletePetPhotoNoContent{}, nil
}

func (h *Handler) ReorderPetPhotos(ctx context.Context, req *oas.PhotoOrder, params oas.ReorderPetPhotosParams) (oas.ReorderPetPhotosRes, error) {
	p, err := h.store.ReorderPetPhotos(ctx, params.PetId, req.PhotoIds)
	if err != nil {
		return nil, err
	}
	out := h.toPet(p)
	return &out, nil
}

// remove deletes the files of the photo with this id, after its row is gone (or was
// never written). A failure is logged, not answered: the row is what the API shows,
// and Sweep removes the files later.
func (f *photoFiles) remove(ctx context.Context, id string) {
	if err := f.cache.Delete(context.WithoutCancel(ctx), media.PhotoKeys(id)...); err != nil {
		f.log.WarnContext(ctx, "remove photo files; the sweep will", "photo_id", id, "err", err)
	}
}

// photoCacheControl: a photo never changes; its URL changes when the photo does.
var photoCacheControl = []string{"public, max-age=31536000, immutable"}

// servePhoto serves GET /v1/photos/{photoId}/{size} (getPhoto), public, from the
// media cache: a hit reads no database and is not counted against the rate limit; a
// miss reads the media store and is. http.ServeContent answers If-None-Match (304)
// and Range (206, 416).
func (s *Server) servePhoto(w http.ResponseWriter, r *http.Request) {
	ri := info(r.Context())
	ri.handwritten, ri.pattern = getPhoto, photoPattern
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, r, "GET, HEAD")
		return
	}
	id, size := r.PathValue("photoId"), petstore.PhotoSize(r.PathValue("size"))
	switch {
	case !petstore.ValidPhotoID(id):
		writeError(w, petstore.Invalid("photoId", "must be a photo id: ph_ and 26 characters of 2–7 and a–z"))
		return
	case !size.Valid():
		writeError(w, petstore.Invalid("size", "must be thumb, display or original"))
		return
	case s.h.photos == nil:
		writeError(w, photoNotFound(id))
		return
	}
	key := petstore.PhotoKey(id, size)
	entry, ok := s.h.photos.cache.Cached(key)
	if !ok {
		if s.limiter != nil && !s.allow(w, r, ri, "", "") {
			return
		}
		if s.h.photos.streamLarge(w, r, key) {
			return
		}
		var err error
		if entry, err = s.h.photos.cache.Get(r.Context(), key); err != nil {
			writeError(w, s.h.photos.readFailure(r.Context(), id, err))
			return
		}
	}
	h := w.Header()
	h["Etag"] = []string{entry.ETag}
	h["Cache-Control"] = photoCacheControl
	h["Content-Type"] = []string{entry.ContentType}
	http.ServeContent(&rangeErrors{ResponseWriter: w, size: int64(len(entry.Data))}, r, "", time.Time{}, bytes.NewReader(entry.Data))
}

// streamLarge serves the photo under key from its file when the media store keeps
// files and this one is too large for the cache (an original, mostly), so that each
// request holds a buffer, not a copy of the photo. It reports whether it answered.
func (f *photoFiles) streamLarge(w http.ResponseWriter, r *http.Request, key string) bool {
	opener, ok := f.cache.Store().(media.FileOpener)
	if !ok {
		return false
	}
	file, ok, err := opener.OpenLarge(key, f.cache.MaxEntry())
	if err != nil || !ok {
		return false // read through the cache, which answers the errors
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return false
	}
	var head [512]byte
	n, _ := file.ReadAt(head[:], 0)
	h := w.Header()
	h["Etag"] = []string{media.ETag(key)}
	h["Cache-Control"] = photoCacheControl
	h["Content-Type"] = []string{http.DetectContentType(head[:n])}
	http.ServeContent(&rangeErrors{ResponseWriter: w, size: info.Size()}, r, "", time.Time{}, file)
	return true
}

// readFailure words a failed read of a photo: not found, or the media store out of
// reach (a passing failure: retry), logged.
func (f *photoFiles) readFailure(ctx context.Context, id string, err error) *petstore.Error {
	if petstore.ErrorCode(err) == petstore.ENotFound {
		return photoNotFound(id)
	}
	if ctx.Err() == nil {
		f.log.WarnContext(ctx, "read photo", "photo_id", id, "err", err, "request_id", RequestID(ctx))
	}
	return errUnavailable
}

func photoNotFound(id string) *petstore.Error {
	return petstore.Errorf(petstore.ENotFound, "No photo has the id %s.", id)
}

// rangeErrors answers ServeContent's 416 with the error body every error has, rather
// than its plain text, which it drops.
type rangeErrors struct {
	http.ResponseWriter
	size    int64
	refused bool
}

func (w *rangeErrors) WriteHeader(code int) {
	if code != http.StatusRequestedRangeNotSatisfiable {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.refused = true
	w.Header().Del("Cache-Control")
	writeError(w.ResponseWriter, petstore.Errorf(petstore.ERangeNotSatisfiable, "The range is not within the photo's %d bytes.", w.size))
}

func (w *rangeErrors) Write(b []byte) (int, error) {
	if w.refused {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
