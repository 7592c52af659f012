package petstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// MaxPhotoBytes is the largest photo the service takes (10 MiB); UploadPetPhotoFile
// refuses a larger file before it sends a byte.
const MaxPhotoBytes = 10 << 20

// photoTypes are the media types the service takes for an upload, by the extension a
// file of that type has.
var photoTypes = map[string]string{
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".png":  "image/png",
	".webp": "image/webp",
}

// UploadPetPhoto adds a photo to a pet (admins), last in its order: body is the image
// as it is, of contentType image/jpeg, image/png or image/webp, at most MaxPhotoBytes.
// The service checks what the bytes are: another format than contentType says is an
// *Error with CodeUnsupportedMediaType, a truncated image CodeInvalidImage, an image
// too large CodePayloadTooLarge, a ninth photo CodeConflict. UploadPetPhotoFile sets
// the type from a file.
//
// The body is read once: an upload is a POST, never sent twice, since a second attempt
// could store the photo twice (an *Error with RetryAfter tells when to try again). A
// body that is an io.Seeker and an io.ReaderAt (*os.File, *bytes.Reader) is sent with
// its length, from where it stands; UploadPetPhoto does not close body.
func (c *Client) UploadPetPhoto(ctx context.Context, petID int64, contentType string, body io.Reader, opts ...CallOption) (*Photo, error) {
	ctx = withCall(ctx, "uploadPetPhoto", opts)
	sized, err := sizedBody(body)
	if err != nil {
		return nil, fmt.Errorf("petstore: upload: %w", err)
	}
	p, err := decode[api.Photo](c.api.UploadPetPhotoWithBody(ctx, petID, contentType, body, sized))
	return convert(p, err, photoFrom)
}

// UploadPetPhotoFile uploads the image file at path as UploadPetPhoto does, with the
// content type its bytes say (PhotoContentType). A file of another type, or larger than
// MaxPhotoBytes, is refused here, before anything is sent.
func (c *Client) UploadPetPhotoFile(ctx context.Context, petID int64, path string, opts ...CallOption) (*Photo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("petstore: upload: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("petstore: upload: %w", err)
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("petstore: upload: %s is not a regular file", path)
	case info.Size() > MaxPhotoBytes:
		return nil, fmt.Errorf("petstore: upload: %s holds %d bytes; a photo may hold at most %d (10 MiB)", path, info.Size(), MaxPhotoBytes)
	}
	head := make([]byte, 512) // all that http.DetectContentType reads
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("petstore: upload: %w", err)
	}
	contentType, err := PhotoContentType(path, head[:n])
	if err != nil {
		return nil, fmt.Errorf("petstore: upload: %w", err)
	}
	return c.UploadPetPhoto(ctx, petID, contentType, f, opts...)
}

// PhotoContentType says which type of photo the service takes a file is, from its first
// bytes (head; 512 are enough) as http.DetectContentType reads them, or from the
// extension of name when the bytes say nothing known. It is an error for any type but
// image/jpeg, image/png and image/webp: the service would refuse it.
func PhotoContentType(name string, head []byte) (string, error) {
	sniffed, _, _ := strings.Cut(http.DetectContentType(head), ";")
	for _, t := range photoTypes {
		if sniffed == t {
			return t, nil
		}
	}
	if sniffed != "application/octet-stream" { // the bytes are something else: a GIF, text…
		return "", fmt.Errorf("%s is %s; a photo must be JPEG, PNG or WebP", name, sniffed)
	}
	if t, ok := photoTypes[strings.ToLower(filepath.Ext(name))]; ok {
		return t, nil
	}
	return "", fmt.Errorf("%s is neither JPEG, PNG nor WebP by its bytes or its name", name)
}

// sizedBody returns a request editor that sends body with its length and lets it be
// read again (GetBody, for a redirect), when body can tell its length: an io.Seeker and
// an io.ReaderAt. Each reading gets its own io.SectionReader, so that one still sending
// (a transport may read the body after the answer came) cannot move another's position.
// Any other body is sent once, as it is. Either way, body is never closed: it is the
// caller's.
func sizedBody(body io.Reader) (api.RequestEditorFn, error) {
	keep := func(_ context.Context, req *http.Request) error {
		if req.GetBody == nil && req.Body != nil && req.Body != http.NoBody {
			req.Body = io.NopCloser(body)
		}
		return nil
	}
	at, isReaderAt := body.(io.ReaderAt)
	seeker, isSeeker := body.(io.Seeker)
	if !isReaderAt || !isSeeker {
		return keep, nil
	}
	start, err := seeker.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	end, err := seeker.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if _, err := seeker.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	size := max(end-start, 0)
	return func(_ context.Context, req *http.Request) error {
		req.ContentLength = size
		req.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(io.NewSectionReader(at, start, size)), nil
		}
		req.Body, _ = req.GetBody()
		if size == 0 {
			req.Body, req.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
		}
		return nil
	}, nil
}

// ReorderPetPhotos puts a pet's photos in the order of photoIDs (admins), which names
// every photo of the pet once; a list that leaves one out, names one twice or one of
// another pet is an *Error with CodeConflict, and changes nothing. Returns the pet.
func (c *Client) ReorderPetPhotos(ctx context.Context, petID int64, photoIDs []string, opts ...CallOption) (*Pet, error) {
	ctx = withCall(ctx, "reorderPetPhotos", opts)
	if photoIDs == nil {
		photoIDs = []string{} // sent as [], not null
	}
	p, err := decode[api.Pet](c.api.ReorderPetPhotos(ctx, petID, api.PhotoOrder{PhotoIds: photoIDs}))
	return convert(p, err, petFrom)
}

// DeletePetPhoto removes a photo of a pet (admins). Its URLs answer CodeNotFound soon
// after, but a cache that holds it (a browser's, a CDN's) may show it a while longer.
func (c *Client) DeletePetPhoto(ctx context.Context, petID int64, photoID string, opts ...CallOption) error {
	ctx = withCall(ctx, "deletePetPhoto", opts)
	return noContent(c.api.DeletePetPhoto(ctx, petID, photoID))
}

// GetPhoto fetches one size of a photo, from the client's base URL. The photo is
// public: any client may, even one without a key. The whole photo is read into memory;
// to stream it, or to let a browser fetch it, use PhotoURL.
func (c *Client) GetPhoto(ctx context.Context, photoID string, size PhotoSize, opts ...CallOption) (*PhotoData, error) {
	ctx = withCall(ctx, "getPhoto", opts)
	res, err := c.api.GetPhoto(ctx, photoID, string(size))
	if err != nil {
		return nil, err
	}
	defer closeBody(res)
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, errorFrom(res)
	}
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("petstore: reading photo %s (%s): %w", photoID, size, err)
	}
	return &PhotoData{Bytes: data, ContentType: res.Header.Get("Content-Type"), ETag: res.Header.Get("ETag")}, nil
}

// PhotoURL returns the absolute URL of one size of a photo, for an <img> or a download:
// the photo's URL of that size (origin-relative, as the service writes it) resolved
// against the client's base URL. For a photo whose URLs are not known (only its ID),
// it is the base URL's /photos/{id}/{size}, where GetPhoto fetches it.
func (c *Client) PhotoURL(photo Photo, size PhotoSize) string {
	if ref, err := url.Parse(photo.URLs.of(size)); err == nil && ref.Path != "" {
		return c.base.ResolveReference(ref).String()
	}
	return c.base.JoinPath("photos", photo.ID, string(size)).String()
}
