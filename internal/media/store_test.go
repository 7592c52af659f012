package media

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme-pets/petstore/internal/petstore"
)

// storeSuite is the behaviour every Store must have. newStore returns an empty store
// for one test.
func storeSuite(t *testing.T, newStore func(t *testing.T) Store) {
	pngData, jpegData := testPNG(t, 7), testJPEG(t)
	ctx := context.Background()
	put := func(t *testing.T, s Store, key, contentType string, data []byte) {
		t.Helper()
		if err := s.Put(ctx, key, contentType, data); err != nil {
			t.Fatalf("Put(%q): %v", key, err)
		}
	}
	wantObject := func(t *testing.T, s Store, key, contentType string, data []byte) {
		t.Helper()
		got, err := s.Get(ctx, key)
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		if !bytes.Equal(got.Data, data) || got.ContentType != contentType {
			t.Fatalf("Get(%q) = %d bytes of %s, want %d bytes of %s", key, len(got.Data), got.ContentType, len(data), contentType)
		}
	}
	wantNotFound := func(t *testing.T, s Store, key string) {
		t.Helper()
		if _, err := s.Get(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%q) = %v, want ErrNotFound", key, err)
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s Store)
	}{
		{"a put object is got back with its content type", func(t *testing.T, s Store) {
			put(t, s, "p1/original", "image/png", pngData)
			put(t, s, "p1/thumb", "image/jpeg", jpegData)
			wantObject(t, s, "p1/original", "image/png", pngData)
			wantObject(t, s, "p1/thumb", "image/jpeg", jpegData)
		}},
		{"a put replaces what was there", func(t *testing.T, s Store) {
			put(t, s, "p1/original", "image/png", pngData)
			other := testPNG(t, 9)
			put(t, s, "p1/original", "image/png", other)
			wantObject(t, s, "p1/original", "image/png", other)
		}},
		{"a key never put is not found", func(t *testing.T, s Store) {
			wantNotFound(t, s, "nothing/original")
			put(t, s, "p1/original", "image/png", pngData)
			wantNotFound(t, s, "p1") // a prefix is no object
		}},
		{"deleted objects are not found, and others stay", func(t *testing.T, s Store) {
			for _, k := range []string{"p1/original", "p1/display", "p1/thumb", "p2/thumb"} {
				put(t, s, k, "image/png", pngData)
			}
			if err := s.Delete(ctx, "p1/original", "p1/display", "p1/thumb"); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			wantNotFound(t, s, "p1/original")
			wantNotFound(t, s, "p1/thumb")
			wantObject(t, s, "p2/thumb", "image/png", pngData)
			put(t, s, "p1/original", "image/png", pngData) // the prefix can be used again
			wantObject(t, s, "p1/original", "image/png", pngData)
		}},
		{"deleting a missing key or none is no error", func(t *testing.T, s Store) {
			if err := s.Delete(ctx, "nothing/original", "nothing/thumb"); err != nil {
				t.Errorf("Delete of missing keys: %v", err)
			}
			if err := s.Delete(ctx); err != nil {
				t.Errorf("Delete of no keys: %v", err)
			}
		}},
		{"list gives the keys under a prefix with their times", func(t *testing.T, s Store) {
			start := time.Now().Add(-time.Minute) // the server's clock may differ a little
			for _, k := range []string{"p1/original", "p1/thumb", "p10/thumb", "p2/original"} {
				put(t, s, k, "image/png", pngData)
			}
			for prefix, want := range map[string][]string{
				"p1/":   {"p1/original", "p1/thumb"},
				"p1":    {"p1/original", "p1/thumb", "p10/thumb"},
				"":      {"p1/original", "p1/thumb", "p10/thumb", "p2/original"},
				"p2/or": {"p2/original"},
				"p3/":   nil,
				"../":   nil,
			} {
				var got []string
				err := s.List(ctx, prefix, func(key string, modified time.Time) error {
					if modified.Before(start) || modified.After(time.Now().Add(time.Minute)) {
						t.Errorf("List(%q): %s modified at %v", prefix, key, modified)
					}
					got = append(got, key)
					return nil
				})
				slices.Sort(got)
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("List(%q) = %q, %v; want %q", prefix, got, err, want)
				}
			}
		}},
		{"an error from the list's callback stops it and comes back", func(t *testing.T, s Store) {
			put(t, s, "p1/original", "image/png", pngData)
			put(t, s, "p1/thumb", "image/png", pngData)
			stop := errors.New("stop")
			calls := 0
			err := s.List(ctx, "", func(string, time.Time) error { calls++; return stop })
			if !errors.Is(err, stop) || calls != 1 {
				t.Errorf("List = %v after %d calls, want stop after 1", err, calls)
			}
		}},
		{"bad keys are refused by every method", func(t *testing.T, s Store) {
			for _, key := range badKeys {
				errs := map[string]error{
					"Put":    s.Put(ctx, key, "image/png", pngData),
					"Delete": s.Delete(ctx, "p1/thumb", key),
				}
				_, errs["Get"] = s.Get(ctx, key)
				for method, err := range errs {
					if !errors.Is(err, ErrInvalidKey) {
						t.Errorf("%s(%q) = %v, want ErrInvalidKey", method, key, err)
					}
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newStore(t)) })
	}
}

var badKeys = []string{
	"", "/abs/olute", "../up", "p1/../../up", "p1/..", "p1//thumb", "p1/", ".hidden/x",
	"p1/.put-123", `p1\thumb`, "p1/th umb", "p1/thümb", "p1/thumb\x00", strings.Repeat("k", 256),
}

func TestCheckKey(t *testing.T) {
	for _, key := range []string{"p1/original", petstore.PhotoKey(petstore.NewPhotoID(), petstore.PhotoThumb), "a", "a.b/c_d-e"} {
		if err := CheckKey(key); err != nil {
			t.Errorf("CheckKey(%q) = %v, want nil", key, err)
		}
	}
	for _, key := range badKeys {
		if err := CheckKey(key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("CheckKey(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}

// testPNG is a small PNG, different for each seed.
func testPNG(t testing.TB, seed uint8) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	img.SetNRGBA(1, 1, color.NRGBA{R: seed, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func testJPEG(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 8, 8)), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
