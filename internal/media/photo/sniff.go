package photo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"

	"golang.org/x/image/webp"
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// sniff returns the format the bytes' magic numbers say, or "" for none of ours.
func sniff(b []byte) string {
	switch {
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return JPEG
	case bytes.HasPrefix(b, pngSignature):
		return PNG
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return WebP
	}
	return ""
}

// describe says what bytes look like, for a refusal's message.
func describe(b []byte) string {
	if f := sniff(b); f != "" {
		return f
	}
	if len(b) == 0 {
		return "nothing (the body is empty)"
	}
	// The WHATWG sniffing algorithm knows GIF, BMP, ICO, ZIP, PDF, HTML, text…
	ct := http.DetectContentType(b)
	if ct == "application/octet-stream" {
		return "no known format"
	}
	return ct
}

// decodeConfig reads the header of an image in format.
func decodeConfig(format string, b []byte) (image.Config, error) {
	r := bytes.NewReader(b)
	switch format {
	case JPEG:
		return jpeg.DecodeConfig(r)
	case PNG:
		return png.DecodeConfig(r)
	case WebP:
		return webp.DecodeConfig(r)
	}
	return image.Config{}, fmt.Errorf("unknown format %q", format)
}

var errTruncated = errors.New("the file ends before its image does")

// imageEnd returns the offset just past the image in b: what follows it is not part
// of the image. It errors when the structure is broken or cut short.
func imageEnd(format string, b []byte) (int, error) {
	switch format {
	case JPEG:
		return jpegEnd(b)
	case PNG:
		return pngEnd(b)
	case WebP:
		return webpEnd(b)
	}
	return 0, fmt.Errorf("unknown format %q", format)
}

// jpegEnd walks the JPEG's segments by their lengths (so a thumbnail inside EXIF is
// skipped whole) and its entropy-coded data after each SOS (where FF is followed by
// 00 or a restart marker), to the EOI marker.
func jpegEnd(b []byte) (int, error) {
	i := 2 // past SOI
	for {
		if i >= len(b) {
			return 0, errTruncated
		}
		if b[i] != 0xFF {
			return 0, fmt.Errorf("no marker at byte %d", i)
		}
		for i < len(b) && b[i] == 0xFF { // fill bytes
			i++
		}
		if i >= len(b) {
			return 0, errTruncated
		}
		marker := b[i]
		i++
		switch {
		case marker == 0xD9: // EOI
			return i, nil
		case marker == 0x01 || marker >= 0xD0 && marker <= 0xD7: // no length
			continue
		}
		if i+2 > len(b) {
			return 0, errTruncated
		}
		n := int(binary.BigEndian.Uint16(b[i:]))
		if n < 2 {
			return 0, fmt.Errorf("segment %X has length %d", marker, n)
		}
		i += n
		if marker == 0xDA { // SOS: entropy-coded data follows, up to the next marker
			for ; ; i++ {
				if i+1 >= len(b) {
					return 0, errTruncated
				}
				if b[i] == 0xFF && b[i+1] != 0x00 && (b[i+1] < 0xD0 || b[i+1] > 0xD7) {
					break
				}
			}
		}
	}
}

// pngEnd walks the PNG's chunks to the end of IEND.
func pngEnd(b []byte) (int, error) {
	i := len(pngSignature)
	for {
		if i+8 > len(b) {
			return 0, errTruncated
		}
		n := int64(binary.BigEndian.Uint32(b[i:]))
		kind := string(b[i+4 : i+8])
		end := int64(i) + 12 + n // length, type, data, CRC
		if n > 1<<31-1 || end > int64(len(b)) {
			return 0, errTruncated
		}
		i = int(end)
		if kind == "IEND" {
			return i, nil
		}
	}
}

// webpEnd is the end the RIFF header declares: 8 bytes of header and its size.
func webpEnd(b []byte) (int, error) {
	end := 8 + int64(binary.LittleEndian.Uint32(b[4:8]))
	if end > int64(len(b)) {
		return 0, errTruncated
	}
	return int(end), nil
}
