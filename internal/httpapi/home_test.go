package httpapi_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The bare address says where everything is: a page for a browser, JSON for any
// other client, chosen by Accept.
func TestTheRootNamesTheDocsTheConsoleAndTheDocument(t *testing.T) {
	a := newTestAPI(t)
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
	tests := []struct {
		name, accept string
		html         bool
	}{
		{"a browser gets the page", browser, true},
		{"text/html alone gets the page", "text/html", true},
		{"text/* gets the page", "text/*", true},
		{"HTML preferred over JSON gets the page", "application/json;q=0.5, text/html", true},
		{"no Accept gets JSON", "", false},
		{"curl's */* gets JSON", "*/*", false},
		{"application/json gets JSON", "application/json", false},
		{"JSON preferred over HTML gets JSON", "text/html;q=0.5, application/json", false},
		{"HTML refused gets JSON", "text/html;q=0, */*", false},
		{"the specific entry decides over its range", "text/html;q=0.2, text/*, */*;q=0.5", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := a.do(t, req{Method: "GET", Path: "/", Header: map[string]string{"Accept": tt.accept}}).expect(200, "")
			if v := res.Header.Get("Vary"); v != "Accept" {
				t.Errorf("Vary %q, want Accept: the answer depends on it", v)
			}
			if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("Cache-Control %q, want no-cache", cc)
			}
			ct := res.Header.Get("Content-Type")
			if got := strings.HasPrefix(ct, "text/html"); got != tt.html {
				t.Fatalf("Content-Type %q; want HTML: %v", ct, tt.html)
			}
			if !tt.html {
				var links map[string]string
				if err := json.Unmarshal(res.Body, &links); err != nil || !strings.HasPrefix(ct, "application/json") {
					t.Fatalf("%q is not JSON (%v): %s", ct, err, res.Body)
				}
				want := map[string]string{"name": "petstore", "version": "1.0.0", "api": "/v1", "docs": "/docs",
					"console": "/console", "shop": "/shop", "openapi": "/openapi.json", "openapiYaml": "/openapi.yaml"}
				for k, v := range want {
					if links[k] != v {
						t.Errorf("%s = %q, want %q", k, links[k], v)
					}
				}
			}
		})
	}
}

// The page holds to what /docs and /console hold to: a CSP that allows only its own
// style, no framing, no Referer; and every link on it leads somewhere.
func TestTheRootPageIsLockedDownAndItsLinksWork(t *testing.T) {
	a := newTestAPI(t)
	res := a.do(t, req{Method: "GET", Path: "/", Header: map[string]string{"Accept": "text/html"}}).expect(200, "")
	h := res.Header
	if h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", h)
	}
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q allows script or inline code", csp)
	}
	page := string(res.Body)
	styles := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(page, -1)
	if len(styles) != 1 {
		t.Fatalf("%d style elements, want 1", len(styles))
	}
	sum := sha256.Sum256([]byte(styles[0][1]))
	if hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, "style-src "+hash) {
		t.Errorf("CSP %q does not allow the page's style (%s): the browser would drop it", csp, hash)
	}
	if strings.Contains(page, "<script") {
		t.Error("the page has a script")
	}
	hrefs := regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1)
	seen := map[string]bool{}
	for _, m := range hrefs {
		seen[m[1]] = true
		a.do(t, req{Method: "GET", Path: m[1]}).expect(200, "")
	}
	for _, want := range []string{"/docs", "/console", "/shop", "/openapi.json", "/openapi.yaml"} {
		if !seen[want] {
			t.Errorf("the page does not link %s (links: %v)", want, hrefs)
		}
	}
	if !strings.Contains(page, "<code>/v1</code>") {
		t.Error("the page does not name /v1")
	}
}

func TestTheRootAnswersHEADAndRefusesOtherMethods(t *testing.T) {
	a := newTestAPI(t)
	for _, accept := range []string{"text/html", "application/json"} {
		get := a.do(t, req{Method: "GET", Path: "/", Header: map[string]string{"Accept": accept}}).expect(200, "")
		head := a.do(t, req{Method: "HEAD", Path: "/", Header: map[string]string{"Accept": accept}}).expect(200, "")
		if len(head.Body) != 0 || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") ||
			head.Header.Get("Content-Length") != get.Header.Get("Content-Length") {
			t.Errorf("HEAD (%s) = %v %q; want GET's headers, no body", accept, head.Header, head.Body)
		}
	}
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		res := a.do(t, req{Method: m, Path: "/", Header: map[string]string{"Accept": "text/html"}}).expect(405, "method_not_allowed")
		if allow := res.Header.Get("Allow"); allow != "GET, HEAD" {
			t.Errorf("%s /: Allow %q", m, allow)
		}
	}
	for _, p := range []string{"/index.html", "/v", "/nope/", "/favicon.ico"} {
		a.do(t, req{Method: "GET", Path: p, Header: map[string]string{"Accept": "text/html"}}).expect(404, "not_found")
	}
}

// docs/USING.md shows the JSON answer of / as it is.
func TestUSINGShowsTheRootsAnswer(t *testing.T) {
	a := newTestAPI(t)
	res := a.do(t, req{Method: "GET", Path: "/"}).expect(200, "")
	using, err := os.ReadFile(filepath.Join("..", "..", "docs", "USING.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(using), "curl -s http://localhost:8080/\n# ")
	if !ok {
		t.Fatal("docs/USING.md has no `curl -s http://localhost:8080/` example")
	}
	shown, _, _ := strings.Cut(after, "\n")
	if got := strings.TrimSpace(string(res.Body)); shown != got {
		t.Errorf("docs/USING.md shows\n%s\nGET / answers\n%s", shown, got)
	}
}
