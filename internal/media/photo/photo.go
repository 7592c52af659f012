// Package photo takes in a pet photo as an upload's bytes and makes the renditions the
// service stores and serves. Nothing an uploader sent is ever served: every rendition is
// re-encoded from decoded pixels, so metadata (EXIF with GPS, XMP, comments, ICC
// profiles) and anything hidden in or after the image (a polyglot's second file) are
// gone.
//
// The steps, each refusing with a *petstore.Error the HTTP layer maps:
//
//  1. The declared type (the request's Content-Type) must be image/jpeg, image/png or
//     image/webp: anything else is EUnsupportedMedia (415).
//  2. The bytes must be what was declared, by their magic numbers (JPEG FF D8 FF, the
//     PNG signature, RIFF....WEBP): a PNG sent as image/jpeg is EUnsupportedMedia,
//     and the message says what the bytes look like.
//  3. The header alone (DecodeConfig) must be within the pixel budget, MaxPixels
//     (40 MP) and MaxSide (12,000 px a side), before a pixel is decoded: a decoded
//     image costs 4 bytes a pixel or more, so a 50,000 × 50,000 PNG of a few KB would
//     ask for 10 GB. Over budget is EPayloadTooLarge (413). 40 MP holds every phone
//     and most cameras (a 48 MP phone sensor saves 12 MP by default).
//  4. The file must end where its image ends (the JPEG's EOI, the PNG's IEND, the
//     RIFF size of a WebP), give or take zero padding and what cameras append to a
//     JPEG (a second JPEG: multi-picture previews, Ultra HDR's gain map; Samsung's
//     SEFH…SEFT trailer), which is never kept: other bytes after it are another file
//     riding along (a JPEG+ZIP or JPEG+HTML polyglot) and are refused as
//     EUnsupportedMedia. Re-encoding would drop them anyway; refusing says so to
//     the uploader, as the OWASP suite asks. This also refuses phones' "motion photos"
//     (a video after the JPEG): the still must be exported first.
//  5. Decode (image/jpeg, image/png, golang.org/x/image/webp); a truncated or corrupt
//     image is EInvalidImage (400). A JPEG's EXIF orientation is applied to the pixels
//     (phones store portraits sideways and set orientation 6), since the EXIF that
//     says so is dropped.
//
// The renditions (Size): original at full size, display with its longest side at most
// 1,200 px and thumb at most 400 px, never upscaled. Formats:
//
//   - original keeps the upload's kind: JPEG in → JPEG (quality 90), PNG in → PNG
//     (lossless stays lossless). WebP in → JPEG, or PNG when it has transparency: Go
//     has no WebP encoder, and browsers all show JPEG and PNG.
//   - display and thumb are JPEG (quality 85), or PNG when the image has transparent
//     pixels: a cut-out pet keeps its transparency rather than gaining a white box that
//     clashes with a dark page. The opacity is read from the pixels, not from the
//     format, so an opaque PNG screenshot gets JPEG renditions.
//
// Decoding needs memory in proportion to the pixels (a 40 MP image is 160 MB as RGBA,
// and rotating it makes a second copy), so a Processor lets only a few decodes run at
// once; a request waiting its turn gives up when its context ends.
//
// Known loss: colour profiles are dropped with the rest of the metadata, so a Display
// P3 photo (recent iPhones) is shown as if it were sRGB, slightly less saturated.
package photo

import (
	"bytes"
	"context"
	"fmt"
	"image"

	"github.com/disintegration/imaging"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The pixel budget: what a header may declare before anything is decoded.
const (
	// MaxPixels bounds width × height: 40 MP decodes to 160 MB as RGBA.
	MaxPixels = 40_000_000
	// MaxSide bounds each side, so a 1 × 40,000,000 strip is refused too.
	MaxSide = 12_000
)

// The longest side of the smaller renditions; neither is ever upscaled.
const (
	DisplaySide = 1200
	ThumbSide   = 400
)

// The content types taken in and given out.
const (
	JPEG = "image/jpeg"
	PNG  = "image/png"
	WebP = "image/webp"
)

// Size names a rendition; it is the last part of its storage key and URL.
type Size string

// The renditions every photo has.
const (
	Original Size = "original"
	Display  Size = "display"
	Thumb    Size = "thumb"
)

// Sizes lists the renditions in the order Photo.Renditions gives them.
var Sizes = [...]Size{Original, Display, Thumb}

// Rendition is one encoded size of a photo.
type Rendition struct {
	Size          Size
	Data          []byte
	Width, Height int
	ContentType   string // JPEG or PNG
}

// Photo is what Process makes of an upload: three renditions, metadata-free.
type Photo struct {
	Original, Display, Thumb Rendition
}

// Renditions returns the three renditions, original first.
func (p Photo) Renditions() [3]Rendition {
	return [3]Rendition{p.Original, p.Display, p.Thumb}
}

// Processor turns uploads into photos, a bounded number at a time.
type Processor struct {
	// slots holds one token per decode under way; its capacity is the bound.
	slots chan struct{}
}

// DefaultConcurrency is how many decodes a Processor runs at once unless told: one
// 40 MP photo allocates about 400 MB on its way to three renditions (measured: 290 MB
// for a rotated JPEG, 220 MB for a PNG) and keeps a core busy for seconds.
const DefaultConcurrency = 1

// NewProcessor returns a Processor that runs at most concurrent decodes at once;
// below 1 means DefaultConcurrency.
func NewProcessor(concurrent int) *Processor {
	if concurrent < 1 {
		concurrent = DefaultConcurrency
	}
	return &Processor{slots: make(chan struct{}, concurrent)}
}

// Process checks an upload and makes its renditions. declared is the request's media
// type without parameters. Refusals are *petstore.Error with EUnsupportedMedia,
// EPayloadTooLarge or EInvalidImage; a context that ends while waiting for a turn
// returns its error.
func (p *Processor) Process(ctx context.Context, declared string, body []byte) (Photo, error) {
	format, err := check(declared, body)
	if err != nil {
		return Photo{}, err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return Photo{}, ctx.Err()
	}
	defer func() { <-p.slots }()
	// A select with both ready picks either: a request that gave up meanwhile does
	// not decode.
	if err := ctx.Err(); err != nil {
		return Photo{}, err
	}
	img, err := decode(format, body)
	if err != nil {
		return Photo{}, err
	}
	return render(format, img)
}

// check runs every refusal that needs no decoding: the declared type, the magic
// numbers, the pixel budget and the end of the file. It returns the format.
func check(declared string, body []byte) (string, error) {
	if declared != JPEG && declared != PNG && declared != WebP {
		return "", petstore.Errorf(petstore.EUnsupportedMedia,
			"A photo must be sent as image/jpeg, image/png or image/webp, not %q.", declared)
	}
	if len(body) < 12 { // shorter than any image's header: a truncated upload
		return "", petstore.Errorf(petstore.EInvalidImage, "The body holds %d bytes: too few for any %s image.", len(body), declared)
	}
	if got := sniff(body); got != declared {
		return "", petstore.Errorf(petstore.EUnsupportedMedia,
			"The body was declared %s but its bytes look like %s.", declared, describe(body))
	}
	cfg, err := decodeConfig(declared, body)
	if err != nil {
		return "", invalidImage(declared, err)
	}
	if err := withinBudget(cfg.Width, cfg.Height); err != nil {
		return "", err
	}
	end, err := imageEnd(declared, body)
	if err != nil {
		return "", invalidImage(declared, err)
	}
	if rest := body[end:]; !cameraTrailer(declared, rest) {
		return "", petstore.Errorf(petstore.EUnsupportedMedia,
			"The body holds %d more bytes after the end of its image (they look like %s); send the image alone.",
			len(rest), describe(rest))
	}
	return declared, nil
}

// cameraTrailer reports whether what follows an image's end is nothing a polyglot
// could be made of: padding, or what cameras and phones append to a JPEG (a second
// JPEG: the multi-picture format's previews, Ultra HDR's gain map; Samsung's trailer,
// SEFH…SEFT). The renditions are re-encoded from the first image only, so none of it
// is kept; another format after the image (HTML, ZIP, a script) is still refused.
func cameraTrailer(format string, rest []byte) bool {
	rest = bytes.TrimRight(rest, "\x00")
	switch {
	case len(rest) == 0:
		return true
	case format != JPEG:
		return false
	case bytes.HasPrefix(rest, []byte{0xFF, 0xD8, 0xFF}):
		return true
	case bytes.HasSuffix(rest, []byte("SEFT")) && bytes.Contains(rest, []byte("SEFH")):
		return true
	}
	return false
}

// withinBudget refuses dimensions over MaxSide or MaxPixels.
func withinBudget(w, h int) error {
	if w <= 0 || h <= 0 {
		return petstore.Errorf(petstore.EInvalidImage, "The image declares a size of %d × %d pixels.", w, h)
	}
	if w > MaxSide || h > MaxSide || int64(w)*int64(h) > MaxPixels {
		return petstore.Errorf(petstore.EPayloadTooLarge,
			"The image is %d × %d pixels; a photo may have at most %d pixels (%d MP) and %d on a side.",
			w, h, MaxPixels, MaxPixels/1_000_000, MaxSide)
	}
	return nil
}

// decode decodes a checked body, applying a JPEG's EXIF orientation.
func decode(format string, body []byte) (img image.Image, err error) {
	// The decoders are meant not to panic on bad input, but they are fed by strangers:
	// a panic is a refusal of this image, not the end of the process.
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, invalidImage(format, fmt.Errorf("decoder panic: %v", r))
		}
	}()
	img, err = imaging.Decode(bytes.NewReader(body), imaging.AutoOrientation(format == JPEG))
	if err != nil {
		return nil, invalidImage(format, err)
	}
	// The budget was checked on the header; the pixels must agree with it (orientation
	// may have swapped the sides).
	b := img.Bounds()
	if err := withinBudget(b.Dx(), b.Dy()); err != nil {
		return nil, err
	}
	return img, nil
}

func invalidImage(format string, err error) error {
	return petstore.Errorf(petstore.EInvalidImage, "The %s image cannot be read: it is truncated, corrupt or uses a feature not supported here (%v).", name(format), err)
}

// name is a format's name for messages.
func name(format string) string {
	switch format {
	case JPEG:
		return "JPEG"
	case PNG:
		return "PNG"
	case WebP:
		return "WebP"
	}
	return format
}
