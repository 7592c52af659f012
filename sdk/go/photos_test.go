package petstore_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	petstore "github.com/acme-pets/petstore/sdk/go"
)

// picture is a w×h image with a gradient, so that no encoder can make it trivially small.
func picture(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{R: uint8(x * 255 / w), G: uint8(y * 255 / h), B: 128, A: 255})
		}
	}
	return img
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, picture(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, picture(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeFile writes data to a new file named name in a temporary directory.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// photoIDs are the ids of photos, in order.
func photoIDs(photos []petstore.Photo) []string {
	ids := make([]string, len(photos))
	for i, p := range photos {
		ids[i] = p.ID
	}
	return ids
}

// photoStory makes the photo operations on pet, for TestEveryOperationAgainstTheService:
// an admin uploads a PNG from memory and a JPEG from a file, anyone fetches the thumb
// without a key, the admin swaps the two and removes one.
func photoStory(t *testing.T, admin, anyone *petstore.Client, petID int64) {
	t.Helper()
	ctx := context.Background()
	var res petstore.Response
	first := must(admin.UploadPetPhoto(ctx, petID, "image/png", bytes.NewReader(pngOf(t, 640, 480)), petstore.WithResponse(&res)))(t)
	if first.Width != 640 || first.Height != 480 || first.ContentType != "image/png" || res.StatusCode != http.StatusCreated ||
		res.Location == nil || first.URLs.Thumb != "/v1/photos/"+first.ID+"/thumb" {
		t.Errorf("uploaded PNG = %+v, answered %d at %v", first, res.StatusCode, res.Location)
	}
	second := must(admin.UploadPetPhotoFile(ctx, petID, writeFile(t, "rex.jpg", jpegOf(t, 300, 500))))(t)
	if second.ContentType != "image/jpeg" || second.Width != 300 || second.Height != 500 {
		t.Errorf("uploaded JPEG = %+v", second)
	}
	listed := mustPet(t, admin, petID)
	if got := photoIDs(listed.Photos); !slices.Equal(got, []string{first.ID, second.ID}) || listed.Photos[1] != *second {
		t.Errorf("the pet's photos = %+v, want %s then %s", listed.Photos, first.ID, second.ID)
	}

	// The thumb, public: fetched without a key, by GetPhoto and at PhotoURL. The PNG
	// has no transparency, so its smaller sizes are JPEG.
	thumb := must(anyone.GetPhoto(ctx, first.ID, petstore.PhotoThumb))(t)
	img, format, err := image.Decode(bytes.NewReader(thumb.Bytes))
	if err != nil || format != "jpeg" || thumb.ContentType != "image/jpeg" || thumb.ETag == "" ||
		img.Bounds().Dx() != 400 || img.Bounds().Dy() != 300 {
		t.Errorf("thumb: %s %s, etag %q, err %v; want a 400×300 JPEG", thumb.ContentType, format, thumb.ETag, err)
	}
	got, err := http.Get(anyone.PhotoURL(*first, petstore.PhotoThumb))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if got.StatusCode != http.StatusOK || !bytes.Equal(body, thumb.Bytes) {
		t.Errorf("GET %s = %d with %d bytes, want the thumb's %d", anyone.PhotoURL(*first, petstore.PhotoThumb), got.StatusCode, len(body), len(thumb.Bytes))
	}

	// Swapped, then one removed: it leaves the pet and its URLs.
	swapped := must(admin.ReorderPetPhotos(ctx, petID, []string{second.ID, first.ID}))(t)
	if got := photoIDs(swapped.Photos); !slices.Equal(got, []string{second.ID, first.ID}) {
		t.Errorf("reordered photos = %v, want %s then %s", got, second.ID, first.ID)
	}
	if err := admin.DeletePetPhoto(ctx, petID, second.ID); err != nil {
		t.Fatal(err)
	}
	if got := photoIDs(mustPet(t, admin, petID).Photos); !slices.Equal(got, []string{first.ID}) {
		t.Errorf("photos after the delete = %v, want only %s", got, first.ID)
	}
	var apiErr *petstore.Error
	if _, err := anyone.GetPhoto(ctx, second.ID, petstore.PhotoDisplay); !errors.As(err, &apiErr) || apiErr.Code != petstore.CodeNotFound {
		t.Errorf("the deleted photo: err = %v, want not_found", err)
	}
}

// mustPet reads one pet through ListPets.
func mustPet(t *testing.T, c *petstore.Client, id int64) *petstore.Pet {
	t.Helper()
	pets := must(collect(c.ListPets(context.Background(), &petstore.ListPetsOptions{IDs: []int64{id}})))(t)
	if len(pets) != 1 {
		t.Fatalf("pet %d: %d pets listed", id, len(pets))
	}
	return pets[0]
}

// Against the real service: what it refuses comes back as an *Error with its code, and
// nothing is stored.
func TestTheServiceRefusesPhotosWithTheirCodes(t *testing.T) {
	ctx := context.Background()
	admin := service(t, &recorder{}, os.Getenv("PETSTORE_ADMIN_KEY"))
	customer := service(t, &recorder{}, os.Getenv("PETSTORE_API_KEY"))
	cat := must(admin.CreateCategory(ctx, petstore.NewCategory{Name: "Photos " + strconv.FormatInt(time.Now().UnixNano(), 36)}))(t)
	pet := must(admin.CreatePet(ctx, petstore.NewPet{Name: "Camera-shy", CategoryID: cat.ID}))(t)
	t.Cleanup(func() {
		_ = admin.DeletePet(ctx, pet.ID)
		_ = admin.DeleteCategory(ctx, cat.ID)
	})

	tests := []struct {
		name        string
		client      *petstore.Client
		contentType string
		body        []byte
		code        petstore.ErrorCode
	}{
		{"a PNG declared as JPEG", admin, "image/jpeg", pngOf(t, 20, 20), petstore.CodeUnsupportedMediaType},
		{"a GIF", admin, "image/gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), petstore.CodeUnsupportedMediaType},
		{"a truncated PNG", admin, "image/png", pngOf(t, 200, 200)[:300], petstore.CodeInvalidImage},
		{"a customer's upload", customer, "image/png", pngOf(t, 20, 20), petstore.CodeForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.client.UploadPetPhoto(ctx, pet.ID, tt.contentType, bytes.NewReader(tt.body))
			var apiErr *petstore.Error
			if !errors.As(err, &apiErr) || apiErr.Code != tt.code {
				t.Errorf("err = %v, want %s", err, tt.code)
			}
		})
	}
	if photos := mustPet(t, admin, pet.ID).Photos; len(photos) != 0 || photos == nil {
		t.Errorf("photos = %#v, want an empty list", photos)
	}
}

func TestUploadPetPhotoFileRefusesWhatTheServiceWould(t *testing.T) {
	rec := &recorder{}
	admin := service(t, rec, os.Getenv("PETSTORE_ADMIN_KEY"))
	tests := []struct {
		name string
		path string
	}{
		{"a GIF named .png", writeFile(t, "cat.png", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))},
		{"text", writeFile(t, "notes.jpg", []byte("not a picture at all"))},
		{"unknown bytes of no photo's name", writeFile(t, "rex.bin", []byte{0, 1, 2, 3})},
		{"a file past 10 MiB", writeFile(t, "huge.jpg", append(jpegOf(t, 8, 8), make([]byte, petstore.MaxPhotoBytes)...))},
		{"a directory", t.TempDir()},
		{"no file", filepath.Join(t.TempDir(), "missing.jpg")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p, err := admin.UploadPetPhotoFile(context.Background(), 1, tt.path); err == nil {
				t.Errorf("uploaded %+v, want an error", p)
			}
		})
	}
	if len(rec.answers) != 0 {
		t.Errorf("sent %+v, want nothing sent", rec.answers)
	}
}

func TestPhotoContentTypeReadsTheBytesThenTheName(t *testing.T) {
	webp := []byte("RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00")
	tests := []struct {
		name, file string
		head       []byte
		want       string // "" for an error
	}{
		{"JPEG bytes", "rex.jpg", jpegOf(t, 4, 4), "image/jpeg"},
		{"PNG bytes under a JPEG's name: the bytes win", "rex.jpg", pngOf(t, 4, 4), "image/png"},
		{"WebP bytes", "rex", webp, "image/webp"},
		{"unknown bytes named .webp", "rex.WEBP", []byte{0, 1, 2}, "image/webp"},
		{"unknown bytes named .jpeg", "rex.jpeg", []byte{0, 1, 2}, "image/jpeg"},
		{"unknown bytes of another name", "rex.tiff", []byte{0, 1, 2}, ""},
		{"a GIF", "rex.png", []byte("GIF89a"), ""},
		{"HTML", "rex.png", []byte("<html><body>"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := petstore.PhotoContentType(tt.file, tt.head)
			if got != tt.want || (err == nil) != (tt.want != "") {
				t.Errorf("PhotoContentType(%q) = %q, %v; want %q", tt.file, got, err, tt.want)
			}
		})
	}
}

func TestPhotoURLResolvesAgainstTheBaseURL(t *testing.T) {
	photo := petstore.Photo{ID: "ph_2ocjcdj23o2hkliy2weuirxv2a", URLs: petstore.PhotoURLs{
		Thumb: "/v1/photos/ph_2ocjcdj23o2hkliy2weuirxv2a/thumb", Display: "/v1/photos/ph_2ocjcdj23o2hkliy2weuirxv2a/display",
		Original: "https://cdn.example.com/ph_2ocjcdj23o2hkliy2weuirxv2a",
	}}
	tests := []struct {
		name, base string
		photo      petstore.Photo
		size       petstore.PhotoSize
		want       string
	}{
		{"an origin-relative URL", "http://localhost:8080/v1", photo, petstore.PhotoThumb, "http://localhost:8080/v1/photos/ph_2ocjcdj23o2hkliy2weuirxv2a/thumb"},
		{"a base with a trailing slash", "https://shop.example.com/v1/", photo, petstore.PhotoDisplay, "https://shop.example.com/v1/photos/ph_2ocjcdj23o2hkliy2weuirxv2a/display"},
		{"an absolute URL stays", "http://localhost:8080/v1", photo, petstore.PhotoOriginal, "https://cdn.example.com/ph_2ocjcdj23o2hkliy2weuirxv2a"},
		{"only the id: where GetPhoto fetches it", "https://shop.example.com/api/v1", petstore.Photo{ID: photo.ID}, petstore.PhotoThumb,
			"https://shop.example.com/api/v1/photos/ph_2ocjcdj23o2hkliy2weuirxv2a/thumb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := petstore.NewClient(tt.base)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.PhotoURL(tt.photo, tt.size); got != tt.want {
				t.Errorf("PhotoURL = %s, want %s", got, tt.want)
			}
		})
	}
}

// sent is what a fake service took: each request's body, length and Content-Type.
type sent struct {
	mu     sync.Mutex
	bodies [][]byte
	length []int64
	types  []string
}

func (s *sent) take(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodies, s.length, s.types = append(s.bodies, body), append(s.length, r.ContentLength), append(s.types, r.Header.Get("Content-Type"))
}

// An upload is a POST: answered 503, it is not sent again (a second attempt could
// store the photo twice), whatever the body; a file goes with its length, from where
// it stands, and stays open for its owner. A reorder is a PUT: sent again, whole.
func TestAnUploadIsSentOnceAndAReorderAgain(t *testing.T) {
	photo := jpegOf(t, 16, 16)
	file := func(t *testing.T) io.Reader {
		f, err := os.Open(writeFile(t, "rex.jpg", append([]byte("skipped"), photo...)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if _, err := f.Seek(int64(len("skipped")), io.SeekStart); err != nil {
			t.Fatal(err)
		}
		return f
	}
	tests := []struct {
		name   string
		body   func(t *testing.T) io.Reader
		length int64 // what Content-Length says; -1: none (chunked)
	}{
		{"bytes", func(*testing.T) io.Reader { return bytes.NewReader(photo) }, int64(len(photo))},
		{"a file, from where it stands", file, int64(len(photo))},
		{"a reader that cannot seek", func(*testing.T) io.Reader { return io.MultiReader(bytes.NewReader(photo)) }, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got sent
			c := fake(t, func(w http.ResponseWriter, r *http.Request) {
				got.take(r)
				w.Header().Set("Retry-After", "1")
				answer(w, http.StatusServiceUnavailable, `{"code":"unavailable","message":"Busy.","status":503}`)
			}, petstore.WithRetries(3))
			body := tt.body(t)
			_, err := c.UploadPetPhoto(context.Background(), 1, "image/jpeg", body)
			var apiErr *petstore.Error
			if !errors.As(err, &apiErr) || apiErr.Status != http.StatusServiceUnavailable || apiErr.RetryAfter != time.Second {
				t.Errorf("err = %v, want the 503 with its Retry-After", err)
			}
			if len(got.bodies) != 1 || !bytes.Equal(got.bodies[0], photo) || got.length[0] != tt.length || got.types[0] != "image/jpeg" {
				t.Fatalf("the service took %d requests (lengths %v), want one of the %d bytes, Content-Length %d", len(got.bodies), got.length, len(photo), tt.length)
			}
			if f, ok := body.(*os.File); ok {
				if _, err := f.Stat(); err != nil {
					t.Errorf("the caller's file: %v, want it open", err)
				}
			}
		})
	}

	t.Run("a reorder", func(t *testing.T) {
		var got sent
		c := fake(t, func(w http.ResponseWriter, r *http.Request) {
			got.take(r)
			if len(got.bodies) == 1 {
				w.Header().Set("Retry-After", "1")
				answer(w, http.StatusServiceUnavailable, `{"code":"unavailable","message":"Busy.","status":503}`)
				return
			}
			answer(w, http.StatusOK, `{"id":1,"name":"Rex","categoryId":1,"status":"available","stock":0,"tags":[],"photos":[]}`)
		})
		if _, err := c.ReorderPetPhotos(context.Background(), 1, []string{"ph_b", "ph_a"}); err != nil {
			t.Fatal(err)
		}
		want := `{"photoIds":["ph_b","ph_a"]}`
		if len(got.bodies) != 2 || string(got.bodies[0]) != want || string(got.bodies[1]) != want {
			t.Errorf("bodies = %q, want %s twice", got.bodies, want)
		}
	})
}
