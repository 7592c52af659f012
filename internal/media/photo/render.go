package photo

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"

	"github.com/disintegration/imaging"
)

// JPEG qualities: the original is kept close to what was sent; the smaller sizes are
// looked at on screens, where 85 is indistinguishable and a third smaller.
const (
	originalQuality = 90
	smallQuality    = 85
)

// render encodes the three renditions of a decoded image that came in as format.
func render(format string, img image.Image) (Photo, error) {
	opaque := isOpaque(img)
	small := PNG
	if opaque {
		small = JPEG
	}
	original := PNG
	if format == JPEG || format == WebP && opaque {
		original = JPEG
	}
	var p Photo
	var err error
	if p.Original, err = encode(Original, img, original, originalQuality); err != nil {
		return Photo{}, err
	}
	// Each smaller size is made from the one before it: the thumb from 1,200 px
	// rather than from 40 MP costs a hundredth of the work and looks the same.
	display := fit(img, DisplaySide)
	if p.Display, err = encode(Display, display, small, smallQuality); err != nil {
		return Photo{}, err
	}
	if p.Thumb, err = encode(Thumb, fit(display, ThumbSide), small, smallQuality); err != nil {
		return Photo{}, err
	}
	return p, nil
}

// fit scales img down so that its longest side is at most side; a smaller image is
// returned as it is.
func fit(img image.Image, side int) image.Image {
	b := img.Bounds()
	if b.Dx() <= side && b.Dy() <= side {
		return img
	}
	return imaging.Fit(img, side, side, imaging.Lanczos)
}

// isOpaque reports whether every pixel of img is opaque. The standard library's
// image types all answer it (scanning alpha where they have one).
func isOpaque(img image.Image) bool {
	o, ok := img.(interface{ Opaque() bool })
	return ok && o.Opaque()
}

func encode(size Size, img image.Image, contentType string, quality int) (Rendition, error) {
	var buf bytes.Buffer
	var err error
	if contentType == JPEG {
		err = jpeg.Encode(&buf, asRGBA(img), &jpeg.Options{Quality: quality})
	} else {
		// The default level: a rendition is written once and read many times.
		enc := png.Encoder{CompressionLevel: png.DefaultCompression}
		err = enc.Encode(&buf, img)
	}
	if err != nil {
		return Rendition{}, fmt.Errorf("photo: encode %s as %s: %w", size, contentType, err)
	}
	b := img.Bounds()
	return Rendition{Size: size, Data: buf.Bytes(), Width: b.Dx(), Height: b.Dy(), ContentType: contentType}, nil
}

// asRGBA views an NRGBA image as RGBA when it is opaque (then the two hold the same
// bytes), for image/jpeg's fast path: otherwise it reads each pixel through At, an
// allocation a pixel (a million for a display size). JPEG is only written for opaque
// images.
func asRGBA(img image.Image) image.Image {
	if n, ok := img.(*image.NRGBA); ok && n.Opaque() {
		return &image.RGBA{Pix: n.Pix, Stride: n.Stride, Rect: n.Rect}
	}
	return img
}
