// Package phototest makes images for the tests of photo uploads: real JPEG, PNG and GIF
// files of a given size, and the hostile ones (a decompression bomb in a few hundred
// bytes, a JPEG whose EXIF holds a GPS position).
package phototest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

// Pattern is an opaque w × h image: a gradient with a left half redder than its
// right, so that a rotation shows.
func Pattern(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{R: 40, G: uint8(y * 255 / h), B: 220, A: 255}
			if x < w/2 {
				c.R, c.B = 220, 40
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// EncodeJPEG encodes img as a JPEG of quality 90.
func EncodeJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// EncodePNG encodes img as a PNG.
func EncodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// JPEG is a JPEG of Pattern(w, h).
func JPEG(t testing.TB, w, h int) []byte { return EncodeJPEG(t, Pattern(w, h)) }

// PNG is a PNG of Pattern(w, h).
func PNG(t testing.TB, w, h int) []byte { return EncodePNG(t, Pattern(w, h)) }

// TransparentPNG is a w × h PNG whose right half is fully transparent.
func TransparentPNG(t testing.TB, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w / 2 {
			img.SetNRGBA(x, y, color.NRGBA{R: 200, G: 120, B: 30, A: 255})
		}
	}
	return EncodePNG(t, img)
}

func GIF(t testing.TB, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gif.Encode(&buf, Pattern(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// PNGChunk is one PNG chunk with its length and CRC.
func PNGChunk(kind string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, kind...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// PNGBomb is a PNG of a few hundred bytes whose header says w × h RGB pixels: its
// IDAT holds a few rows of zeros, compressed, then the file ends properly.
func PNGBomb(t testing.TB, w, h uint32) []byte {
	t.Helper()
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // 8 bits, RGB, deflate, no filter set, no interlace
	var idat bytes.Buffer
	zw := zlib.NewWriter(&idat)
	if _, err := zw.Write(make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	b := append([]byte(nil), pngSignature...)
	b = append(b, PNGChunk("IHDR", ihdr)...)
	b = append(b, PNGChunk("IDAT", idat.Bytes())...)
	return append(b, PNGChunk("IEND", nil)...)
}

// JPEGBomb is a small JPEG whose SOF0 is rewritten to say w × h.
func JPEGBomb(t testing.TB, w, h uint16) []byte {
	t.Helper()
	b := JPEG(t, 16, 16)
	i := bytes.Index(b, []byte{0xFF, 0xC0})
	if i < 0 {
		t.Fatal("no SOF0 in the encoded JPEG")
	}
	// FF C0, length (2), precision (1), height (2), width (2)
	binary.BigEndian.PutUint16(b[i+5:], h)
	binary.BigEndian.PutUint16(b[i+7:], w)
	return b
}

// Secret is text the EXIF below carries, which no rendition may.
const Secret = "GPS 48.85837N 2.29448E"

// WithEXIF inserts after the SOI of a JPEG an APP1 EXIF segment (big-endian TIFF) with
// an orientation, an image description holding Secret, and a GPS IFD.
func WithEXIF(jpg []byte, orientation uint16) []byte {
	be := binary.BigEndian
	var tiff []byte
	tiff = append(tiff, "MM\x00\x2a"...)
	tiff = be.AppendUint32(tiff, 8) // IFD0 right after the header
	// IFD0: 3 entries (12 bytes each), then the next-IFD offset.
	const ifd0Entries = 3
	descOffset := uint32(8 + 2 + ifd0Entries*12 + 4)
	gpsOffset := descOffset + uint32(len(Secret)+1)
	entry := func(b []byte, tag, kind uint16, count, value uint32) []byte {
		b = be.AppendUint16(b, tag)
		b = be.AppendUint16(b, kind)
		b = be.AppendUint32(b, count)
		return be.AppendUint32(b, value)
	}
	tiff = be.AppendUint16(tiff, ifd0Entries)
	tiff = entry(tiff, 0x010E, 2, uint32(len(Secret)+1), descOffset) // ImageDescription, ASCII
	tiff = entry(tiff, 0x0112, 3, 1, uint32(orientation)<<16)        // Orientation, SHORT, left-justified
	tiff = entry(tiff, 0x8825, 4, 1, gpsOffset)                      // GPSInfo IFD pointer
	tiff = be.AppendUint32(tiff, 0)
	tiff = append(tiff, Secret...)
	tiff = append(tiff, 0)
	// GPS IFD: GPSLatitudeRef "N".
	tiff = be.AppendUint16(tiff, 1)
	tiff = entry(tiff, 0x0001, 2, 2, uint32('N')<<24)
	tiff = be.AppendUint32(tiff, 0)

	payload := append([]byte("Exif\x00\x00"), tiff...)
	seg := []byte{0xFF, 0xE1}
	seg = be.AppendUint16(seg, uint16(len(payload)+2))
	seg = append(seg, payload...)
	out := append([]byte(nil), jpg[:2]...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")
