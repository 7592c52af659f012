package photo

import (
	"github.com/acme-pets/petstore/internal/media/phototest"

	"context"
	"image"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

var declaredTypes = [...]string{JPEG, PNG, WebP, "image/gif"}

// FuzzProcess sends anything as any type: Process must never panic, must refuse with
// one of its three codes, or must make renditions within the limits whose bytes are
// what they say.
//
//	go test ./internal/media/photo -run '^$' -fuzz FuzzProcess -fuzztime 2m
func FuzzProcess(f *testing.F) {
	jpg := phototest.JPEG(f, 64, 48)
	png := phototest.PNG(f, 48, 64)
	webp := testdata(f, "blue-purple-pink.lossy.webp")
	for _, seed := range []struct {
		declared uint8
		body     []byte
	}{
		{0, jpg},
		{0, phototest.WithEXIF(phototest.JPEG(f, 40, 20), 6)},
		{0, phototest.EncodeJPEG(f, image.NewGray(image.Rect(0, 0, 17, 9)))},
		{1, png},
		{1, phototest.TransparentPNG(f, 30, 30)},
		{2, webp},
		{2, testdata(f, "gopher-doc.8bpp.lossless.webp")},
		{0, png},
		{1, phototest.GIF(f, 8, 8)},
		{0, append(append([]byte(nil), jpg...), "PK\x03\x04"...)},
		{1, phototest.PNGBomb(f, 50_000, 50_000)},
		{1, phototest.PNGBomb(f, 300, 300)},
		{0, phototest.JPEGBomb(f, 50_000, 50_000)},
		{0, jpg[:len(jpg)/2]},
		{1, png[:len(png)/2]},
		{2, webp[:len(webp)/2]},
		{3, phototest.GIF(f, 8, 8)},
	} {
		f.Add(seed.declared, seed.body)
	}
	p := NewProcessor(1)
	f.Fuzz(func(t *testing.T, declared uint8, body []byte) {
		got, err := p.Process(context.Background(), declaredTypes[int(declared)%len(declaredTypes)], body)
		if err != nil {
			switch code := petstore.ErrorCode(err); code {
			case petstore.EUnsupportedMedia, petstore.EPayloadTooLarge, petstore.EInvalidImage:
			default:
				t.Fatalf("Process refused with %s: %v", code, err)
			}
			return
		}
		limits := [3]int{MaxSide, DisplaySide, ThumbSide}
		for i, r := range got.Renditions() {
			if r.Width < 1 || r.Height < 1 || r.Width > limits[i] || r.Height > limits[i] ||
				r.Width*r.Height > MaxPixels {
				t.Errorf("%s is %d×%d", r.Size, r.Width, r.Height)
			}
			if sniff(r.Data) != r.ContentType || r.ContentType != JPEG && r.ContentType != PNG {
				t.Errorf("%s says %s, its bytes are %q", r.Size, r.ContentType, sniff(r.Data))
			}
			if cfg, err := decodeConfig(r.ContentType, r.Data); err != nil || cfg.Width != r.Width || cfg.Height != r.Height {
				t.Errorf("%s (%d×%d) has the header %d×%d, %v", r.Size, r.Width, r.Height, cfg.Width, cfg.Height, err)
			}
		}
	})
}
