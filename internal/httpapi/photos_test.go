package httpapi_test

import (
	"bytes"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/httpapi"
	"github.com/acme-pets/petstore/internal/media/phototest"
)

// photoOut is what these tests read of a photo.
type photoOut struct {
	ID          string `json:"id"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	ContentType string `json:"contentType"`
	URLs        struct {
		Thumb, Display, Original string
	} `json:"urls"`
}

type petWithPhotos struct {
	ID     int64      `json:"id"`
	Photos []photoOut `json:"photos"`
}

func (a *testAPI) upload(t *testing.T, petID int64, contentType string, body []byte, status int, code string) *response {
	t.Helper()
	return a.do(t, req{Method: "POST", Path: path("/v1/pets/%d/photos", petID), Key: a.Admin, Body: body,
		Header: map[string]string{"Content-Type": contentType}}).expect(status, code)
}

func (a *testAPI) photosOf(t *testing.T, petID int64) []photoOut {
	t.Helper()
	var p petWithPhotos
	a.do(t, req{Method: "GET", Path: path("/v1/pets/%d", petID), Key: a.Customer}).expect(200, "").JSON(&p)
	return p.Photos
}

// decodedSize reads the dimensions of an image.
func decodedSize(t *testing.T, b []byte) (int, int, string) {
	t.Helper()
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the served bytes are not an image: %v", err)
	}
	return cfg.Width, cfg.Height, format
}

func TestPhotoUploadAndServing(t *testing.T) {
	a := newTestAPI(t)
	pet := a.pet(t, "Rex", 0)

	var ph photoOut
	res := a.upload(t, pet.ID, "image/jpeg", phototest.WithEXIF(phototest.JPEG(t, 1600, 900), 1), 201, "")
	res.JSON(&ph)
	if ph.Width != 1600 || ph.Height != 900 || ph.ContentType != "image/jpeg" || !strings.HasPrefix(ph.ID, "ph_") {
		t.Fatalf("uploaded %+v", ph)
	}
	if want := "/v1/photos/" + ph.ID + "/thumb"; ph.URLs.Thumb != want || res.Header.Get("Location") != "/v1/photos/"+ph.ID+"/original" {
		t.Errorf("urls %+v, Location %q", ph.URLs, res.Header.Get("Location"))
	}
	if got := a.photosOf(t, pet.ID); len(got) != 1 || got[0] != ph {
		t.Fatalf("the pet lists %+v", got)
	}

	t.Run("each size is served publicly, cacheable for good, without metadata", func(t *testing.T) {
		for _, tt := range []struct {
			url     string
			longest int
		}{{ph.URLs.Thumb, 400}, {ph.URLs.Display, 1200}, {ph.URLs.Original, 1600}} {
			res := a.do(t, req{Method: "GET", Path: tt.url}).expect(200, "")
			w, h, format := decodedSize(t, res.Body)
			if max(w, h) != tt.longest || format != "jpeg" || res.Header.Get("Content-Type") != "image/jpeg" {
				t.Errorf("%s: %d×%d %s (%s)", tt.url, w, h, format, res.Header.Get("Content-Type"))
			}
			if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
				t.Errorf("%s: Cache-Control %q", tt.url, cc)
			}
			if etag := res.Header.Get("ETag"); !strings.HasPrefix(etag, `"`) {
				t.Errorf("%s: ETag %q is not a strong validator", tt.url, etag)
			}
			if bytes.Contains(res.Body, []byte(phototest.Secret)) || bytes.Contains(res.Body, []byte("Exif")) {
				t.Errorf("%s: the served bytes keep the EXIF", tt.url)
			}
		}
	})
	t.Run("If-None-Match answers 304, Range 206, a range past the end 416", func(t *testing.T) {
		full := a.do(t, req{Method: "GET", Path: ph.URLs.Thumb}).expect(200, "")
		etag := full.Header.Get("ETag")
		a.do(t, req{Method: "GET", Path: ph.URLs.Thumb, Header: map[string]string{"If-None-Match": etag}}).expect(304, "")
		part := a.do(t, req{Method: "GET", Path: ph.URLs.Thumb, Header: map[string]string{"Range": "bytes=0-9"}}).expect(206, "")
		if !bytes.Equal(part.Body, full.Body[:10]) || part.Header.Get("Content-Range") == "" {
			t.Errorf("206: %d bytes, Content-Range %q", len(part.Body), part.Header.Get("Content-Range"))
		}
		a.do(t, req{Method: "GET", Path: ph.URLs.Thumb, Header: map[string]string{"Range": "bytes=99999999-"}}).expect(416, "range_not_satisfiable")
		head := a.do(t, req{Method: "HEAD", Path: ph.URLs.Thumb}).expect(200, "")
		if len(head.Body) != 0 || head.Header.Get("ETag") != etag {
			t.Errorf("HEAD: %d bytes, ETag %q", len(head.Body), head.Header.Get("ETag"))
		}
	})
	t.Run("a malformed id or size is refused, an unknown photo is 404, other methods 405", func(t *testing.T) {
		a.do(t, req{Method: "GET", Path: "/v1/photos/ph_" + strings.Repeat("a", 26) + "/thumb"}).expect(404, "not_found")
		a.do(t, req{Method: "GET", Path: "/v1/photos/../../etc/passwd/thumb"}).expect(404, "not_found")
		a.do(t, req{Method: "GET", Path: "/v1/photos/ph_..%2F..%2F" + strings.Repeat("a", 20) + "/thumb"}).expect(400, "validation_failed")
		a.do(t, req{Method: "GET", Path: "/v1/photos/" + ph.ID + "/huge"}).expect(400, "validation_failed")
		a.do(t, req{Method: "DELETE", Path: ph.URLs.Thumb, Key: a.Admin}).expect(405, "method_not_allowed")
	})
}

// The OWASP suite's uploads (API4, API8): every hostile or broken image, a body too large, a
// type that is not an image, a customer's key: a clear 4xx, and nothing kept, neither
// a photo on the pet nor a file. A slow upload is in cmd/petstore (timeouts_test.go).
func TestOWASP_Uploads_RefusedAndNothingKept(t *testing.T) {
	a := newTestAPI(t)
	pet := a.pet(t, "Rex", 0)
	jpg := phototest.JPEG(t, 64, 48)
	png := phototest.PNG(t, 64, 48)
	tests := []struct {
		name, contentType string
		body              []byte
		status            int
		code              string
	}{
		{"a PNG declared as JPEG", "image/jpeg", png, 415, "unsupported_media_type"},
		{"a JPEG declared as WebP", "image/webp", jpg, 415, "unsupported_media_type"},
		{"a GIF", "image/gif", phototest.GIF(t, 8, 8), 415, "unsupported_media_type"},
		{"HTML declared as HTML", "text/html", []byte("<script>alert(1)</script>"), 415, "unsupported_media_type"},
		{"JSON", "application/json", []byte(`{"name":"x"}`), 415, "unsupported_media_type"},
		{"a JPEG polyglot with HTML after it", "image/jpeg", append(append([]byte{}, jpg...), "<html><script>alert(1)</script>"...), 415, "unsupported_media_type"},
		{"a truncated JPEG", "image/jpeg", jpg[:len(jpg)/2], 400, "invalid_image"},
		{"a truncated PNG", "image/png", png[:len(png)/2], 400, "invalid_image"},
		{"a 50,000 × 50,000 PNG in a small file", "image/png", phototest.PNGBomb(t, 50000, 50000), 413, "payload_too_large"},
		{"a JPEG that says 50,000 × 50,000", "image/jpeg", phototest.JPEGBomb(t, 50000, 50000), 413, "payload_too_large"},
		{"11 MiB", "image/jpeg", append(append([]byte{}, jpg...), make([]byte, 11<<20)...), 413, "payload_too_large"},
		{"an empty body", "image/jpeg", []byte{}, 400, "invalid_image"},
		{"a JPEG's first bytes only", "image/jpeg", jpg[:3], 400, "invalid_image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.upload(t, pet.ID, tt.contentType, tt.body, tt.status, tt.code)
		})
	}
	a.do(t, req{Method: "POST", Path: path("/v1/pets/%d/photos", pet.ID), Key: a.Customer, Body: jpg,
		Header: map[string]string{"Content-Type": "image/jpeg"}}).expect(403, "forbidden")
	a.do(t, req{Method: "POST", Path: path("/v1/pets/%d/photos", pet.ID), Body: jpg,
		Header: map[string]string{"Content-Type": "image/jpeg"}}).expect(401, "unauthorized")
	a.upload(t, 99999, "image/jpeg", jpg, 404, "not_found")
	if got := a.photosOf(t, pet.ID); len(got) != 0 {
		t.Errorf("a refused upload left photos: %+v", got)
	}
	if files := mediaFiles(t, a); len(files) != 0 {
		t.Errorf("a refused upload left files: %v", files)
	}
}

// mediaFiles lists the files of the test server's media directory.
func mediaFiles(t *testing.T, a *testAPI) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(a.mediaDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestPhotoOrderCapAndRemoval(t *testing.T) {
	a := newTestAPI(t)
	pet := a.pet(t, "Rex", 0)
	var ids []string
	for i := range 8 {
		var ph photoOut
		a.upload(t, pet.ID, "image/png", phototest.PNG(t, 20+i, 10), 201, "").JSON(&ph)
		ids = append(ids, ph.ID)
	}
	a.upload(t, pet.ID, "image/png", phototest.PNG(t, 30, 10), 409, "conflict")

	reversed := make([]string, len(ids))
	for i, id := range ids {
		reversed[len(ids)-1-i] = id
	}
	var p petWithPhotos
	a.do(t, req{Method: "PUT", Path: path("/v1/pets/%d/photos", pet.ID), Key: a.Admin, Body: map[string]any{"photoIds": reversed}}).expect(200, "").JSON(&p)
	if len(p.Photos) != 8 || p.Photos[0].ID != ids[7] || p.Photos[7].ID != ids[0] {
		t.Fatalf("reordered: %+v", p.Photos)
	}
	a.do(t, req{Method: "PUT", Path: path("/v1/pets/%d/photos", pet.ID), Key: a.Admin, Body: map[string]any{"photoIds": reversed[1:]}}).expect(409, "conflict")
	a.do(t, req{Method: "PUT", Path: path("/v1/pets/%d/photos", pet.ID), Key: a.Admin, Body: map[string]any{"photoIds": []string{"nope"}}}).expect(400, "validation_failed")

	// Removing one: gone from the pet, and its files with it.
	thumb := "/v1/photos/" + ids[3] + "/thumb"
	a.do(t, req{Method: "GET", Path: thumb}).expect(200, "")
	a.do(t, req{Method: "DELETE", Path: path("/v1/pets/%d/photos/%s", pet.ID, ids[3]), Key: a.Admin}).expect(204, "")
	a.do(t, req{Method: "DELETE", Path: path("/v1/pets/%d/photos/%s", pet.ID, ids[3]), Key: a.Admin}).expect(404, "not_found")
	a.do(t, req{Method: "GET", Path: thumb}).expect(404, "not_found")
	if got := a.photosOf(t, pet.ID); len(got) != 7 {
		t.Errorf("%d photos after removing one", len(got))
	}
	if files := mediaFiles(t, a); len(files) != 7*3 {
		t.Errorf("%d files for 7 photos of 3 sizes", len(files))
	}
	// Deleting the pet removes every file.
	a.do(t, req{Method: "DELETE", Path: path("/v1/pets/%d", pet.ID), Key: a.Admin}).expect(204, "")
	if files := mediaFiles(t, a); len(files) != 0 {
		t.Errorf("the deleted pet's files are left: %d", len(files))
	}
}

func TestPhotoHitsReadNoDatabase(t *testing.T) {
	a := newTestAPI(t)
	pet := a.pet(t, "Rex", 0)
	var ph photoOut
	a.upload(t, pet.ID, "image/jpeg", phototest.JPEG(t, 500, 500), 201, "").JSON(&ph)
	a.do(t, req{Method: "GET", Path: ph.URLs.Thumb}).expect(200, "")
	// With the database closed, a request that read it would fail: photos are still
	// served, from memory and from the media store, which never ask it.
	if err := a.Store.Close(); err != nil {
		t.Fatal(err)
	}
	a.do(t, req{Method: "GET", Path: ph.URLs.Thumb}).expect(200, "")
	a.do(t, req{Method: "GET", Path: ph.URLs.Display}).expect(200, "")
}

// A photo too large for the cache (an original, mostly) is streamed from its file:
// the same bytes, ETag and ranges as one served from memory.
func TestPhotoLargerThanTheCacheIsStreamed(t *testing.T) {
	a := newTestAPI(t, func(c *httpapi.Config) { c.PhotoCacheBytes = 1 << 20 }) // entries up to 256 KiB
	pet := a.pet(t, "Rex", 0)
	var ph photoOut
	noise := image.NewRGBA(image.Rect(0, 0, 400, 400)) // noise does not compress
	rng := rand.New(rand.NewPCG(35, 35))
	for i := range noise.Pix {
		noise.Pix[i] = byte(rng.IntN(256))
		if i%4 == 3 {
			noise.Pix[i] = 255
		}
	}
	a.upload(t, pet.ID, "image/png", phototest.EncodePNG(t, noise), 201, "").JSON(&ph)
	file, err := os.ReadFile(filepath.Join(a.mediaDir, ph.ID, "original"))
	if err != nil {
		t.Fatal(err)
	}
	if len(file) <= 256<<10 {
		t.Fatalf("the original is %d bytes: not larger than the cache's largest entry", len(file))
	}
	for range 2 { // the second would be a hit, were it kept
		res := a.do(t, req{Method: "GET", Path: ph.URLs.Original}).expect(200, "")
		if !bytes.Equal(res.Body, file) || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("ETag") != `"`+ph.ID+`-original"` {
			t.Fatalf("streamed %d bytes (%s, %s), want the file's %d", len(res.Body), res.Header.Get("Content-Type"), res.Header.Get("ETag"), len(file))
		}
	}
	part := a.do(t, req{Method: "GET", Path: ph.URLs.Original, Header: map[string]string{"Range": "bytes=100-199"}}).expect(206, "")
	if !bytes.Equal(part.Body, file[100:200]) {
		t.Error("the range is not those bytes of the file")
	}
	a.do(t, req{Method: "GET", Path: ph.URLs.Original, Header: map[string]string{"If-None-Match": `"` + ph.ID + `-original"`}}).expect(304, "")
}
