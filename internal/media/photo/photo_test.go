package photo

import (
	"github.com/acme-pets/petstore/internal/media/phototest"

	"archive/zip"
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/petstore"
)

type dims struct{ w, h int }

func TestProcessMakesRenditions(t *testing.T) {
	tests := []struct {
		name     string
		declared string
		body     []byte
		// want: the original, display and thumb sizes and content types.
		sizes [3]dims
		types [3]string
	}{
		{"a large JPEG stays JPEG and is scaled to 1200 and 400", JPEG, phototest.JPEG(t, 3000, 2000),
			[3]dims{{3000, 2000}, {1200, 800}, {400, 266}}, [3]string{JPEG, JPEG, JPEG}},
		{"a portrait JPEG is scaled by its height", JPEG, phototest.JPEG(t, 900, 1800),
			[3]dims{{900, 1800}, {600, 1200}, {200, 400}}, [3]string{JPEG, JPEG, JPEG}},
		{"a small JPEG is never upscaled", JPEG, phototest.JPEG(t, 300, 200),
			[3]dims{{300, 200}, {300, 200}, {300, 200}}, [3]string{JPEG, JPEG, JPEG}},
		{"a phone's JPEG with a second image after it (multi-picture, Ultra HDR)", JPEG,
			append(phototest.JPEG(t, 800, 600), phototest.JPEG(t, 200, 150)...),
			[3]dims{{800, 600}, {800, 600}, {400, 300}}, [3]string{JPEG, JPEG, JPEG}},
		{"a Samsung JPEG with its trailer", JPEG, append(phototest.JPEG(t, 800, 600), "SEFH\x00\x00Image_UTC_Data1700000000SEFT"...),
			[3]dims{{800, 600}, {800, 600}, {400, 300}}, [3]string{JPEG, JPEG, JPEG}},
		{"a grey JPEG", JPEG, phototest.EncodeJPEG(t, image.NewGray(image.Rect(0, 0, 640, 480))),
			[3]dims{{640, 480}, {640, 480}, {400, 300}}, [3]string{JPEG, JPEG, JPEG}},
		{"an opaque PNG keeps a PNG original and gets JPEG smaller sizes", PNG, phototest.PNG(t, 1600, 900),
			[3]dims{{1600, 900}, {1200, 675}, {400, 225}}, [3]string{PNG, JPEG, JPEG}},
		{"a transparent PNG stays PNG in every size", PNG, phototest.TransparentPNG(t, 500, 500),
			[3]dims{{500, 500}, {500, 500}, {400, 400}}, [3]string{PNG, PNG, PNG}},
		{"a PNG with zero padding after IEND is taken", PNG, append(phototest.PNG(t, 40, 30), 0, 0, 0, 0),
			[3]dims{{40, 30}, {40, 30}, {40, 30}}, [3]string{PNG, JPEG, JPEG}},
		{"an opaque lossy WebP becomes JPEG", WebP, testdata(t, "blue-purple-pink.lossy.webp"),
			[3]dims{{150, 100}, {150, 100}, {150, 100}}, [3]string{JPEG, JPEG, JPEG}},
		{"an opaque lossless WebP becomes JPEG", WebP, testdata(t, "gopher-doc.8bpp.lossless.webp"),
			[3]dims{{75, 100}, {75, 100}, {75, 100}}, [3]string{JPEG, JPEG, JPEG}},
		{"a WebP with alpha becomes PNG", WebP, testdata(t, "yellow_rose.lossy-with-alpha.webp"),
			[3]dims{{400, 301}, {400, 301}, {400, 301}}, [3]string{PNG, PNG, PNG}},
		{"a JPEG with EXIF orientation 6 is turned upright", JPEG, phototest.WithEXIF(phototest.JPEG(t, 640, 320), 6),
			[3]dims{{320, 640}, {320, 640}, {200, 400}}, [3]string{JPEG, JPEG, JPEG}},
		{"a JPEG with EXIF orientation 1 is left as it is", JPEG, phototest.WithEXIF(phototest.JPEG(t, 640, 320), 1),
			[3]dims{{640, 320}, {640, 320}, {400, 200}}, [3]string{JPEG, JPEG, JPEG}},
	}
	p := NewProcessor(1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Process(context.Background(), tt.declared, tt.body)
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			for i, r := range got.Renditions() {
				if r.Size != Sizes[i] {
					t.Errorf("rendition %d is %q, want %q", i, r.Size, Sizes[i])
				}
				if (dims{r.Width, r.Height}) != tt.sizes[i] || r.ContentType != tt.types[i] {
					t.Errorf("%s is %d×%d %s, want %d×%d %s", r.Size, r.Width, r.Height, r.ContentType,
						tt.sizes[i].w, tt.sizes[i].h, tt.types[i])
				}
				checkRendition(t, r)
			}
		})
	}
}

// checkRendition checks that a rendition's bytes are what it says and carry no
// metadata.
func checkRendition(t *testing.T, r Rendition) {
	t.Helper()
	if got := sniff(r.Data); got != r.ContentType {
		t.Errorf("%s says %s but its bytes are %q", r.Size, r.ContentType, got)
	}
	cfg, err := decodeConfig(r.ContentType, r.Data)
	if err != nil {
		t.Fatalf("%s does not decode: %v", r.Size, err)
	}
	if cfg.Width != r.Width || cfg.Height != r.Height {
		t.Errorf("%s says %d×%d but its header %d×%d", r.Size, r.Width, r.Height, cfg.Width, cfg.Height)
	}
	for _, leak := range []string{"Exif", phototest.Secret, "eXIf", "tEXt", "iCCP"} {
		if bytes.Contains(r.Data, []byte(leak)) {
			t.Errorf("%s holds %q", r.Size, leak)
		}
	}
	if r.ContentType == JPEG && bytes.Contains(r.Data, []byte{0xFF, 0xE1}) {
		t.Errorf("%s holds an APP1 marker", r.Size)
	}
}

func TestProcessAppliesEXIFOrientationAndDropsIt(t *testing.T) {
	// pattern's left half is red; orientation 6 means "rotate 90° clockwise to show",
	// so the shown image has its red half on top.
	body := phototest.WithEXIF(phototest.JPEG(t, 640, 320), 6)
	if !bytes.Contains(body, []byte(phototest.Secret)) {
		t.Fatal("the test's JPEG carries no EXIF")
	}
	got, err := NewProcessor(1).Process(context.Background(), JPEG, body)
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := image.Decode(bytes.NewReader(got.Display.Data))
	if err != nil {
		t.Fatal(err)
	}
	top, bottom := img.At(160, 40), img.At(160, 600)
	if !reddish(top) || reddish(bottom) {
		t.Errorf("after orientation 6 the top is %v and the bottom %v; want red above, blue below", top, bottom)
	}
}

func reddish(c color.Color) bool {
	r, _, b, _ := c.RGBA()
	return r > b
}

func TestProcessRefuses(t *testing.T) {
	jpg := phototest.JPEG(t, 64, 48)
	png := phototest.PNG(t, 64, 48)
	webp := testdata(t, "blue-purple-pink.lossy.webp")
	tests := []struct {
		name     string
		declared string
		body     []byte
		code     string
		says     string // in the message
	}{
		{"a GIF declared as GIF", "image/gif", phototest.GIF(t, 8, 8), petstore.EUnsupportedMedia, `not "image/gif"`},
		{"HTML declared as HTML", "text/html", []byte("<html><script>alert(1)</script>"), petstore.EUnsupportedMedia, "text/html"},
		{"an empty declared type", "", jpg, petstore.EUnsupportedMedia, `not ""`},
		{"a PNG declared as JPEG", JPEG, png, petstore.EUnsupportedMedia, "look like image/png"},
		{"a JPEG declared as WebP", WebP, jpg, petstore.EUnsupportedMedia, "look like image/jpeg"},
		{"a GIF declared as PNG", PNG, phototest.GIF(t, 8, 8), petstore.EUnsupportedMedia, "look like image/gif"},
		{"HTML declared as JPEG", JPEG, []byte("<!DOCTYPE html><html><body>hi</body></html>"), petstore.EUnsupportedMedia, "look like text/html"},
		{"an empty body", JPEG, nil, petstore.EInvalidImage, "0 bytes"},
		{"a JPEG with a ZIP after it", JPEG, append(append([]byte(nil), jpg...), zipFile(t)...), petstore.EUnsupportedMedia, "application/zip"},
		{"a JPEG with HTML after it", JPEG, append(append([]byte(nil), jpg...), "<html><script>alert(1)</script></html>"...), petstore.EUnsupportedMedia, "text/html"},
		{"a PNG with a GIF after it", PNG, append(append([]byte(nil), png...), phototest.GIF(t, 4, 4)...), petstore.EUnsupportedMedia, "image/gif"},
		{"a WebP with bytes after its RIFF", WebP, append(append([]byte(nil), webp...), "PK\x03\x04trailer"...), petstore.EUnsupportedMedia, "more bytes"},
		{"a 50,000 × 50,000 PNG of a few hundred bytes", PNG, phototest.PNGBomb(t, 50_000, 50_000), petstore.EPayloadTooLarge, "50000 × 50000"},
		{"a PNG wider than 12,000 px", PNG, phototest.PNGBomb(t, 12_001, 10), petstore.EPayloadTooLarge, "12001 × 10"},
		{"a PNG of 7,000 × 7,000 (49 MP)", PNG, phototest.PNGBomb(t, 7_000, 7_000), petstore.EPayloadTooLarge, "40 MP"},
		{"a JPEG whose header says 50,000 × 50,000", JPEG, phototest.JPEGBomb(t, 50_000, 50_000), petstore.EPayloadTooLarge, "50000 × 50000"},
		{"a JPEG cut in half", JPEG, jpg[:len(jpg)/2], petstore.EInvalidImage, "JPEG"},
		{"a JPEG without its end marker", JPEG, jpg[:len(jpg)-2], petstore.EInvalidImage, "truncated"},
		{"a JPEG cut inside its header", JPEG, jpg[:40], petstore.EInvalidImage, "JPEG"},
		{"a PNG cut in half", PNG, png[:len(png)/2], petstore.EInvalidImage, "PNG"},
		{"a PNG signature alone", PNG, pngSignature, petstore.EInvalidImage, "8 bytes"},
		{"a PNG with a corrupt IDAT", PNG, corruptIDAT(t, png), petstore.EInvalidImage, "PNG"},
		{"a WebP cut in half", WebP, webp[:len(webp)/2], petstore.EInvalidImage, "WebP"},
		{"a PNG bomb whose pixels are fewer than it says", PNG, phototest.PNGBomb(t, 4000, 4000), petstore.EInvalidImage, "PNG"},
	}
	p := NewProcessor(1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Process(context.Background(), tt.declared, tt.body)
			var e *petstore.Error
			if !errors.As(err, &e) {
				t.Fatalf("Process = %v, want a *petstore.Error %s", err, tt.code)
			}
			if e.Code != tt.code || !strings.Contains(e.Message, tt.says) {
				t.Errorf("Process = %s: %q, want %s saying %q", e.Code, e.Message, tt.code, tt.says)
			}
		})
	}
}

// zipFile is a ZIP archive holding one HTML file.
func zipFile(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("index.html")
	if err == nil {
		_, err = w.Write([]byte("<script>alert(1)</script>"))
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// corruptIDAT flips bytes inside the first IDAT's compressed data (its CRC still
// says otherwise, which Go's decoder checks too).
func corruptIDAT(t *testing.T, b []byte) []byte {
	t.Helper()
	out := append([]byte(nil), b...)
	i := bytes.Index(out, []byte("IDAT"))
	if i < 0 || i+20 > len(out) {
		t.Fatal("no IDAT")
	}
	for j := i + 6; j < i+20; j++ {
		out[j] ^= 0xA5
	}
	return out
}

func TestProcessWaitsForATurnUntilItsContextEnds(t *testing.T) {
	p := NewProcessor(1)
	p.slots <- struct{}{} // a decode under way
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Process(ctx, JPEG, phototest.JPEG(t, 32, 32)); !errors.Is(err, context.Canceled) {
		t.Fatalf("with every slot taken, Process = %v, want context.Canceled", err)
	}
	<-p.slots // the decode ends
	if _, err := p.Process(context.Background(), JPEG, phototest.JPEG(t, 32, 32)); err != nil {
		t.Fatalf("with a slot free, Process = %v", err)
	}
}

func TestProcessRefusesBeforeWaiting(t *testing.T) {
	// A refusal that needs no decoding does not queue behind decodes.
	p := NewProcessor(1)
	p.slots <- struct{}{}
	_, err := p.Process(context.Background(), PNG, phototest.PNGBomb(t, 50_000, 50_000))
	if petstore.ErrorCode(err) != petstore.EPayloadTooLarge {
		t.Fatalf("Process = %v, want payload_too_large at once", err)
	}
}

func TestNewProcessorHasAtLeastOneSlot(t *testing.T) {
	if got := cap(NewProcessor(0).slots); got != 1 {
		t.Errorf("NewProcessor(0) has %d slots, want 1", got)
	}
}
