package docs

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/api"
	"github.com/acme-pets/petstore/internal/webasset"
)

// servedDocument is the document as a server on 127.0.0.1:8123 serves it, with the
// sunset of getPetById moved to show that the page follows the date in effect.
func servedDocument(t *testing.T) []byte {
	t.Helper()
	d, err := api.Render("http://127.0.0.1:8123/v1", map[string]string{"getPetById": "2027-09-01"})
	if err != nil {
		t.Fatal(err)
	}
	return d.JSON
}

func newHandler(t *testing.T) *webasset.Page {
	t.Helper()
	h, err := New(servedDocument(t))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

func get(t *testing.T, h http.Handler, path string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var assetRef = regexp.MustCompile(`(?:href|src)="(/docs/assets/[^"]+)"|"documentUrl":"(/docs/assets/[^"]+)"`)

func TestPage(t *testing.T) {
	h := newHandler(t)
	res := get(t, h, "/docs")
	page := body(t, res)

	t.Run("is HTML under a strict CSP", func(t *testing.T) {
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET /docs: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self';", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		for _, never := range []string{"http:", "https:", "*", "unsafe-eval"} {
			if strings.Contains(csp, never) {
				t.Errorf("CSP %q allows %q", csp, never)
			}
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("the page's Cache-Control is %q, want no-cache (it names versioned assets)", cc)
		}
	})

	t.Run("runs no inline script and names nothing off the origin", func(t *testing.T) {
		for _, m := range regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1) {
			if !strings.Contains(m, `src="/docs/assets/`) && !strings.Contains(m, `type="application/json"`) {
				t.Errorf("the page has an inline script: %s", m)
			}
		}
		if regexp.MustCompile(`(?:src|href)="(?:https?:)?//`).MatchString(page) {
			t.Errorf("the page loads something from another origin:\n%s", page)
		}
	})

	t.Run("every asset it names is served, cached for a year", func(t *testing.T) {
		refs := assetRef.FindAllStringSubmatch(page, -1)
		if len(refs) < 5 { // favicon, stylesheet, renderer, page script, document
			t.Fatalf("the page names %d assets:\n%s", len(refs), page)
		}
		for _, m := range refs {
			path := m[1] + m[2]
			res := get(t, h, path)
			if res.StatusCode != 200 {
				t.Errorf("GET %s: %d", path, res.StatusCode)
				continue
			}
			if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
				t.Errorf("GET %s: Cache-Control %q", path, cc)
			}
			sum := sha256.Sum256([]byte(body(t, res)))
			if !strings.Contains(path, "/"+hex.EncodeToString(sum[:8])+"/") {
				t.Errorf("GET %s: the URL does not carry the hash of the content", path)
			}
		}
	})

	t.Run("Paths lists the page and the assets", func(t *testing.T) {
		paths := h.Paths()
		// The page, the four embedded files, the styles and the document.
		if paths[0] != "/docs" || len(paths) != 7 {
			t.Errorf("Paths() = %v", paths)
		}
		for _, p := range paths {
			if res := get(t, h, p); res.StatusCode != 200 {
				t.Errorf("GET %s: %d", p, res.StatusCode)
			}
		}
	})

	t.Run("unknown assets are not found", func(t *testing.T) {
		for _, p := range []string{"/docs/assets/0000000000000000/scalar-standalone.js", "/docs/assets/", "/docs/x"} {
			if res := get(t, h, p); res.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
			}
		}
	})

	t.Run("the renderer is sent compressed when the client accepts it", func(t *testing.T) {
		var renderer string
		for _, p := range h.Paths() {
			if strings.HasSuffix(p, "/scalar-standalone.js") {
				renderer = p
			}
		}
		res := get(t, h, renderer, "Accept-Encoding", "br, gzip")
		if res.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("Content-Encoding %q", res.Header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(plain, embedded()["scalar-standalone.js"].Body()) {
			t.Error("the compressed renderer does not decompress to the bundle")
		}
		if res := get(t, h, renderer); res.Header.Get("Content-Encoding") != "" {
			t.Error("compressed for a client that did not ask")
		}
	})
}

// TestVendoredRenderer checks that the embedded bundle is the one scalar.json records,
// so that it is only ever changed by scripts/update-docs-assets.
func TestVendoredRenderer(t *testing.T) {
	raw, err := assetFiles.ReadFile("assets/scalar-standalone.js")
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct{ Package, Version, SHA256, License string }
	b, err := os.ReadFile("assets/scalar.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != manifest.SHA256 {
		t.Errorf("assets/scalar-standalone.js has SHA-256 %s, scalar.json records %s: run scripts/update-docs-assets", got, manifest.SHA256)
	}
	if manifest.Package != "@scalar/api-reference" || manifest.Version == "" || manifest.License != "MIT" {
		t.Errorf("scalar.json: %+v", manifest)
	}
	if !bytes.Contains(raw, []byte("@scalar/api-reference@"+manifest.Version)) {
		t.Errorf("the bundle does not announce version %s", manifest.Version)
	}
}

func TestTransform(t *testing.T) {
	src := servedDocument(t)
	p, err := transform(src)
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]any
	if err := json.Unmarshal(src, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(p.document, &after); err != nil {
		t.Fatalf("the transformed document is not JSON: %v", err)
	}
	op := func(doc map[string]any, path, method string) map[string]any {
		return doc["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any)
	}
	badges := func(o map[string]any) []string {
		var names []string
		for _, b := range asSlice(o["x-badges"]) {
			names = append(names, b.(map[string]any)["name"].(string))
		}
		return names
	}

	t.Run("the sunset in effect becomes a badge and a sentence", func(t *testing.T) {
		o := op(after, "/pets/{petId}", "get")
		if got := badges(o); !reflect.DeepEqual(got, []string{"Sunset 2027-09-01"}) {
			t.Errorf("badges %v", got)
		}
		if d := o["description"].(string); !strings.Contains(d, "will be removed on 2027-09-01") || !strings.HasPrefix(d, op(before, "/pets/{petId}", "get")["description"].(string)[:40]) {
			t.Errorf("description %q", d)
		}
		if o["deprecated"] != true {
			t.Error("no longer deprecated")
		}
	})

	t.Run("beta becomes a badge, experimental Scalar's stability", func(t *testing.T) {
		if got := badges(op(after, "/store/inventory/{petId}", "put")); !reflect.DeepEqual(got, []string{"Beta"}) {
			t.Errorf("setInventory badges %v", got)
		}
		if got := op(after, "/store/orders", "get")["x-scalar-stability"]; got != "experimental" {
			t.Errorf("listOrders x-scalar-stability %v", got)
		}
	})

	t.Run("x-hideTryItPanel turns try-it off", func(t *testing.T) {
		want := []operationRef{{Method: "GET", Path: "/store/orders", OperationID: "listOrders"}}
		if !reflect.DeepEqual(p.tryItOff, want) {
			t.Errorf("tryItOff %+v, want %+v", p.tryItOff, want)
		}
		if d := op(after, "/store/orders", "get")["description"].(string); !strings.Contains(d, "Try-it is turned off") {
			t.Errorf("description %q", d)
		}
		css := string(tryItOffCSS(p.tryItOff))
		for _, want := range []string{`section[id$="/GET/store/orders"] .show-api-client-button`, `.scalar-client [data-sidebar-id$="/GET/store/orders"]`, "display: none"} {
			if !strings.Contains(css, want) {
				t.Errorf("the generated CSS lacks %q:\n%s", want, css)
			}
		}
	})

	t.Run("the server path is read from servers[0]", func(t *testing.T) {
		if p.serverPath != "/v1" || p.title != "Pet Store API" {
			t.Errorf("serverPath %q, title %q", p.serverPath, p.title)
		}
	})

	t.Run("nothing else changes, and the order is kept", func(t *testing.T) {
		strip := func(doc map[string]any) {
			delete(doc["info"].(map[string]any), "description")
			for _, item := range doc["paths"].(map[string]any) {
				for _, o := range item.(map[string]any) {
					if o, ok := o.(map[string]any); ok {
						for _, k := range []string{"description", "x-badges", "x-scalar-stability"} {
							delete(o, k)
						}
					}
				}
			}
		}
		strip(before)
		strip(after)
		if !reflect.DeepEqual(before, after) {
			t.Error("the transform changed more than descriptions, badges and stability")
		}
		if got, want := pathOrder(t, p.document), pathOrder(t, src); !reflect.DeepEqual(got, want) {
			t.Errorf("path order %v, want %v", got, want)
		}
	})
}

func TestTransformRefusesWhatIsNotADocument(t *testing.T) {
	for _, doc := range []string{``, `[]`, `{"openapi": "3.0.3"}`, `{"paths": {}} {}`, `{"paths": {"/x": {"get": {"x-stability": 3}}}}`} {
		if _, err := New([]byte(doc)); err == nil {
			t.Errorf("New(%q) accepted it", doc)
		}
	}
}

func TestCSSString(t *testing.T) {
	for in, want := range map[string]string{
		`/GET/a/{b}`: `"/GET/a/{b}"`,
		`/GET/"x"`:   `"/GET/\22 x\22 "`,
		`/GET/\`:     `"/GET/\5c "`,
	} {
		if got := cssString(in); got != want {
			t.Errorf("cssString(%q) = %s, want %s", in, got, want)
		}
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// pathOrder lists the keys of "paths" in document order.
func pathOrder(t *testing.T, doc []byte) []string {
	t.Helper()
	root, err := api.ParseTree(doc)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	paths := api.Value(root.Content[0], "paths")
	for i := 0; i+1 < len(paths.Content); i += 2 {
		keys = append(keys, paths.Content[i].Value)
	}
	return keys
}
