// Package webasset serves the files of the service's own web pages (/docs and
// /console) from memory: each at a URL named by a hash of its content, so that a
// URL never changes meaning and browsers may keep it for a year, compressed with
// gzip when the client accepts it; and the pages themselves, with the headers that
// hold them to this origin.
package webasset

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Asset is one file served at <prefix>/assets/<hash>/<name>.
type Asset struct {
	url         string
	contentType string
	body        []byte

	gzipOnce sync.Once
	gzipped  []byte // nil when compressing does not pay
}

// New makes the asset name with content body, served under prefix (a page's path).
func New(prefix, name string, body []byte) *Asset {
	sum := sha256.Sum256(body)
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	return &Asset{
		url:         fmt.Sprintf("%s/assets/%s/%s", prefix, hex.EncodeToString(sum[:8]), name),
		contentType: ct,
		body:        body,
	}
}

// URL is the path the asset is served at.
func (a *Asset) URL() string { return a.url }

// Body is the asset's content, uncompressed.
func (a *Asset) Body() []byte { return a.body }

// ServeHTTP serves the asset, compressed when the request accepts gzip.
func (a *Asset) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	hd.Set("Vary", "Accept-Encoding")
	body := a.body
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		if gz := a.gzip(); gz != nil {
			hd.Set("Content-Encoding", "gzip")
			body = gz
		}
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// gzip compresses the asset on first use (the docs renderer goes from 4.3 MB to 1.3 MB).
func (a *Asset) gzip() []byte {
	a.gzipOnce.Do(func() {
		if len(a.body) < 1024 {
			return
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(a.body)
		_ = zw.Close()
		if b.Len() < len(a.body) {
			a.gzipped = b.Bytes()
		}
	})
	return a.gzipped
}

// ServePage serves an HTML page under the Content-Security-Policy csp: never cached
// without asking (it names the assets of this build), never framed, and sending no
// Referer (a page's URL is nobody else's business).
func ServePage(w http.ResponseWriter, r *http.Request, page []byte, csp string) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", csp)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Content-Length", strconv.Itoa(len(page)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(page)
	}
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip (RFC 9110,
// 12.5.3): listed, or covered by "*", with a q-value above 0.
func acceptsGzip(header string) bool {
	accepted := false
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := 1.0
		for param := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(param, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if coding == "gzip" {
			return q > 0 // an explicit gzip entry decides
		}
		accepted = q > 0
	}
	return accepted
}

// ScriptPagePolicy is the Content-Security-Policy of the pages whose script builds
// them with the DOM, never from markup (the staff console and the shop): this origin
// only, for the script, the stylesheet, images (photos are served under /v1) and calls
// to the API (connect-src), and Trusted Types required with no policy at all, so that
// any assignment of a string to innerHTML or a script's source throws.
const ScriptPagePolicy = "default-src 'none'; " +
	"script-src 'self'; " +
	"style-src 'self'; " +
	"img-src 'self'; " +
	"connect-src 'self'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Page is an HTML page at one path with its assets at theirs, served as ServePage
// and Asset do: the shell of /docs and of /console.
type Page struct {
	path   string
	csp    string
	html   []byte
	assets map[string]*Asset // by URL path
}

// NewPage returns the page at the URL path at, served under the Content-Security-Policy csp,
// with assets. Its HTML is set once the assets' URLs are known (SetHTML).
func NewPage(at, csp string, assets ...*Asset) *Page {
	p := &Page{path: at, csp: csp, assets: make(map[string]*Asset, len(assets))}
	for _, a := range assets {
		p.assets[a.URL()] = a
	}
	return p
}

// SetHTML sets the page's HTML.
func (p *Page) SetHTML(html []byte) { p.html = html }

// Paths lists the URL paths the page serves: its own and each asset's.
func (p *Page) Paths() []string {
	paths := make([]string, 0, len(p.assets)+1)
	for u := range p.assets {
		paths = append(paths, u)
	}
	slices.Sort(paths)
	return append([]string{p.path}, paths...)
}

// ServeHTTP serves the page at its path and the assets at the other Paths; anything
// else answers 404 (route only Paths here and let the caller answer the rest).
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == p.path {
		ServePage(w, r, p.html, p.csp)
		return
	}
	a, ok := p.assets[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	a.ServeHTTP(w, r)
}
