package photo

import (
	"github.com/acme-pets/petstore/internal/media/phototest"

	"context"
	"image"
	"image/color"
	"testing"
)

// BenchmarkProcess12MPJPEG is a phone photo's worth: 4,000 × 3,000 pixels in, three
// renditions out.
func BenchmarkProcess12MPJPEG(b *testing.B) {
	body := phototest.EncodeJPEG(b, busy(4000, 3000))
	p := NewProcessor(1)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Process(context.Background(), JPEG, body); err != nil {
			b.Fatal(err)
		}
	}
}

// busy is an image with detail everywhere, so the JPEG encoders work as on a photo
// rather than on flat colour.
func busy(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			v := uint8(x*x/(y+1) + y*7)
			img.SetRGBA(x, y, color.RGBA{R: v, G: uint8(x + y), B: uint8(x ^ y), A: 255})
		}
	}
	return img
}
