package webasset

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"":                 false,
		"gzip":             true,
		"GZIP":             true,
		"br, gzip;q=0.5":   true,
		"gzip;q=0":         false,
		"gzip; q=0.0, *":   false,
		"*":                true,
		"*;q=0":            false,
		"identity":         false,
		"deflate, br":      false,
		"gzip;q=0.001, br": true,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

func TestAssetIsNamedByItsContentAndCompressedOnRequest(t *testing.T) {
	body := []byte(strings.Repeat("console.log('petstore');\n", 100))
	a := New("/console", "console.js", body)
	if b := New("/console", "console.js", append([]byte("//\n"), body...)); b.URL() == a.URL() {
		t.Errorf("two contents share the URL %s", a.URL())
	}
	if !strings.HasPrefix(a.URL(), "/console/assets/") || !strings.HasSuffix(a.URL(), "/console.js") {
		t.Errorf("URL %s", a.URL())
	}

	for _, gz := range []bool{false, true} {
		req := httptest.NewRequest(http.MethodGet, a.URL(), nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		res := rec.Result()
		if ct := res.Header.Get("Content-Type"); ct != "text/javascript; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("Cache-Control %q", cc)
		}
		var r io.Reader = res.Body
		if gz {
			if res.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("asked for gzip, got Content-Encoding %q", res.Header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		} else if res.Header.Get("Content-Encoding") != "" {
			t.Errorf("compressed for a client that did not ask")
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, body) {
			t.Errorf("gzip=%v: the body is not the asset", gz)
		}
	}
}
