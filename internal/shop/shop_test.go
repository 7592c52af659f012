package shop

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/internal/webasset"
)

func serve(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// TestThePageAndItsAssets checks what the browser test cannot see directly: the page's
// headers, that every asset it names is served with its type, HEAD, and unknown paths.
func TestThePageAndItsAssets(t *testing.T) {
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	page := serve(t, h, http.MethodGet, Prefix)
	if page.Code != http.StatusOK || page.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET %s: %d %s", Prefix, page.Code, page.Header().Get("Content-Type"))
	}
	for header, want := range map[string]string{
		"Content-Security-Policy": webasset.ScriptPagePolicy,
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
		"Cache-Control":           "no-cache",
	} {
		if got := page.Header().Get(header); got != want {
			t.Errorf("%s: %q, want %q", header, got, want)
		}
	}
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "require-trusted-types-for 'script'", "frame-ancestors 'none'"} {
		if !strings.Contains(webasset.ScriptPagePolicy+";", directive+";") {
			t.Errorf("the CSP lacks %s", directive)
		}
	}
	if strings.Contains(webasset.ScriptPagePolicy, "unsafe") {
		t.Errorf("the CSP allows something unsafe: %s", webasset.ScriptPagePolicy)
	}

	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	urls := regexp.MustCompile(`(?:href|src)="(/shop/assets/[^"]+)"`).FindAllStringSubmatch(page.Body.String(), -1)
	if len(urls) != 3 {
		t.Fatalf("the page names %d assets, want the favicon, the stylesheet and the script: %s", len(urls), page.Body.String())
	}
	for _, m := range urls {
		res := serve(t, h, http.MethodGet, m[1])
		ext := m[1][strings.LastIndex(m[1], "."):]
		if res.Code != http.StatusOK || res.Header().Get("Content-Type") != types[ext] || res.Body.Len() == 0 {
			t.Errorf("GET %s: %d %q, %d bytes", m[1], res.Code, res.Header().Get("Content-Type"), res.Body.Len())
		}
	}

	if head := serve(t, h, http.MethodHead, Prefix); head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD %s: %d, %d bytes of body, Content-Length %q", Prefix, head.Code, head.Body.Len(), head.Header().Get("Content-Length"))
	}
	if res := serve(t, h, http.MethodGet, "/shop/assets/0000000000000000/shop.js"); res.Code != http.StatusNotFound {
		t.Errorf("an asset of another build: %d, want 404", res.Code)
	}
}
