package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/acme-pets/petstore/internal/console"
	"github.com/acme-pets/petstore/internal/docs"
	"github.com/acme-pets/petstore/internal/shop"
	"github.com/acme-pets/petstore/internal/webasset"
)

// home is what GET / answers: where everything else is, for the person or program that
// opens the bare address first. A browser (Accept: text/html) gets a small page, any
// other client the same links as JSON. Like /docs and /openapi.json it lies outside
// the OpenAPI document, whose paths are relative to its server URL (/v1).
type home struct {
	html []byte
	json []byte
}

// homeLinks are the paths the home answer names, in both forms.
type homeLinks struct {
	Name        string `json:"name"`
	Title       string `json:"-"`
	Version     string `json:"version"`
	API         string `json:"api"`
	Docs        string `json:"docs"`
	Console     string `json:"console"`
	Shop        string `json:"shop"`
	OpenAPI     string `json:"openapi"`
	OpenAPIYAML string `json:"openapiYaml"`
}

// homeStyle is the page's only style, inline and allowed by its hash in homeCSP.
const homeStyle = "body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}" +
	"code{font-size:.95em}li{margin:.5rem 0}"

// homeCSP allows nothing but the page's own style: no script, no image, no frame.
var homeCSP = "default-src 'none'; style-src 'sha256-" + styleHash(homeStyle) + "'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func styleHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

var homeTemplate = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.Style}}</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p>Version {{.Version}} of the API, served under <code>{{.API}}</code>.</p>
<ul>
<li><a href="{{.Docs}}">API reference</a> (<code>{{.Docs}}</code>): every operation, with code samples and try-it.</li>
<li><a href="{{.Shop}}">Shop</a> (<code>{{.Shop}}</code>): browse the pets for sale, order, and see your orders, as a customer.</li>
<li><a href="{{.Console}}">Staff console</a> (<code>{{.Console}}</code>): run the store, as an admin.</li>
<li>The OpenAPI document: <a href="{{.OpenAPI}}">JSON</a> (<code>{{.OpenAPI}}</code>) or <a href="{{.OpenAPIYAML}}">YAML</a> (<code>{{.OpenAPIYAML}}</code>).</li>
</ul>
</main>
</body>
</html>
`))

// newHome makes the home answers from the served document (its title and version).
func newHome(document []byte) (*home, error) {
	var doc struct {
		Info struct{ Title, Version string }
	}
	if err := json.Unmarshal(document, &doc); err != nil {
		return nil, fmt.Errorf("home: read the document: %w", err)
	}
	links := homeLinks{
		Name: "petstore", Title: doc.Info.Title, Version: doc.Info.Version, API: apiPrefix,
		Docs: docs.Prefix, Console: console.Prefix, Shop: shop.Prefix, OpenAPI: "/openapi.json", OpenAPIYAML: "/openapi.yaml",
	}
	var page bytes.Buffer
	// template.CSS: the style is ours, a constant; the template would otherwise
	// replace it with a placeholder.
	err := homeTemplate.Execute(&page, struct {
		homeLinks
		Style template.CSS
	}{links, template.CSS(homeStyle)})
	if err != nil {
		return nil, fmt.Errorf("home: page: %w", err)
	}
	body, err := json.Marshal(links)
	if err != nil {
		return nil, err
	}
	return &home{html: page.Bytes(), json: append(body, '\n')}, nil
}

// ServeHTTP answers GET and HEAD of /, as HTML or JSON by the request's Accept; any
// other method is 405 with the error body.
func (h *home) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, r, "GET, HEAD")
		return
	}
	// One URL, two representations: a cache must keep them apart.
	w.Header().Set("Vary", "Accept")
	if prefersHTML(r.Header.Get("Accept")) {
		webasset.ServePage(w, r, h.html, homeCSP)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Length", strconv.Itoa(len(h.json)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(h.json)
	}
}

// prefersHTML reads an Accept header (RFC 9110, 12.5.1): HTML when text/html is
// asked for by name (or as text/*) at least as much as JSON is accepted, by name or
// through application/* or */*, the more specific entry deciding. A browser's
// "text/html,…,*/*;q=0.8" gets the page; curl's "*/*", no header at all and
// "application/json" get JSON.
func prefersHTML(header string) bool {
	// q values by media range; -1: not in the header.
	q := map[string]float64{"text/html": -1, "text/*": -1, "application/json": -1, "application/*": -1, "*/*": -1}
	for part := range strings.SplitSeq(header, ",") {
		mediaType, params, _ := strings.Cut(part, ";")
		mediaType = strings.ToLower(strings.TrimSpace(mediaType))
		if _, ok := q[mediaType]; !ok {
			continue
		}
		v := 1.0
		for param := range strings.SplitSeq(params, ";") {
			k, val, _ := strings.Cut(param, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					v = f
				}
			}
		}
		q[mediaType] = max(q[mediaType], v)
	}
	first := func(ranges ...string) float64 {
		for _, r := range ranges {
			if q[r] >= 0 {
				return q[r]
			}
		}
		return 0
	}
	html := first("text/html", "text/*")
	return html > 0 && html >= first("application/json", "application/*", "*/*")
}
