// Package docs serves the interactive API reference at /docs: the Scalar API
// reference (the standalone bundle of @scalar/api-reference, vendored in assets/ by
// scripts/update-docs-assets and embedded with go:embed) reading a transformed copy
// of the served OpenAPI document.
//
// Everything the page loads comes from this package, from the same origin: no CDN,
// no web fonts, no telemetry. A strict Content-Security-Policy holds it there.
//
// The renderer is given a transformed copy of the document (see transform) because
// no renderer reads this API's own extensions: x-stability and x-deprecated-sunset
// become Scalar badges and sentences. The API keeps serving the original document
// at /openapi.yaml and /openapi.json.
//
// # Try-it and x-hideTryItPanel
//
// Scalar's try-it is its API client window, opened by each operation's "Test
// Request" button. Scalar can only turn it off for every operation at once
// (hideTestRequestButton), and the client window lists every operation in its own
// sidebar and search, so hiding one button does not make the operation unreachable.
// The page therefore turns try-it off per operation in two layers:
//
//  1. Entry points (assets/docs.css plus rules generated here): the operation's
//     "Test Request" button and its entry in the client window's sidebar are not
//     shown, so a reader is never offered try-it for it.
//  2. Transport (assets/docs.js): Scalar sends every try-it request through the
//     fetch function the page gives it (customFetch; window.fetch is replaced by
//     the same function). That function refuses any request whose method and path
//     (read as the server routes it: unescaped, cleaned) match a turned-off
//     operation, so no request for it can leave the page, whichever way the client
//     window was reached and whatever is typed into its address bar. The reader
//     sees Scalar's error toast naming the operation and pointing to the samples.
//
// The browser test (package e2e) checks both layers: the button is absent, and
// driving the client window to the operation anyway sends nothing, while try-it on
// other operations does send and shows the answer.
package docs

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/acme-pets/petstore/internal/webasset"
)

//go:embed assets/scalar-standalone.js assets/docs.js assets/docs.css assets/favicon.svg assets/LICENSE.scalar
var assetFiles embed.FS

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("page.html").Parse(pageHTML))

// Prefix is where the page lives; its assets are under Prefix + "/assets/".
const Prefix = "/docs"

// contentSecurityPolicy allows only this origin, with one allowance the renderer
// needs: inline styles. Scalar (a Vue application) injects its theme, its toasts'
// styles and its stylesheet as <style> elements at run time and sets a few style
// attributes; a nonce would cover only the one element that Scalar stamps with it.
// Scripts are held to 'self': no inline script (the page's configuration is a JSON
// data block that docs.js reads, never runs) and no eval (the bundle's validator
// probes Function("") and falls back when it is refused). data: images are the SVGs
// that the bundle's stylesheets inline (select arrows, patterns). No frames, plugins,
// forms, or other origins.
const contentSecurityPolicy = "default-src 'none'; " +
	"script-src 'self'; " +
	"style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; " +
	"font-src 'self'; " +
	"connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// embedded are the assets that do not depend on the document, hashed once per process
// (every server a test starts would otherwise hash the 4 MB bundle again).
var embedded = sync.OnceValue(func() map[string]*webasset.Asset {
	m := map[string]*webasset.Asset{}
	for _, name := range []string{"scalar-standalone.js", "docs.js", "favicon.svg", "LICENSE.scalar"} {
		b, err := fs.ReadFile(assetFiles, "assets/"+name)
		if err != nil {
			panic(err) // embedded at build time
		}
		m[name] = webasset.New(Prefix, name, b)
	}
	return m
})

// pageConfig is what docs.js reads from the page's JSON data block.
type pageConfig struct {
	DocumentURL string         `json:"documentUrl"`
	ServerPath  string         `json:"serverPath"`
	TryItOff    []operationRef `json:"tryItOff"`
}

// New returns the page and its assets for the served OpenAPI document
// doc (JSON, whose servers[0].url is where the API listens). Route each of its Paths
// to it, for GET (and so HEAD).
func New(doc []byte) (*webasset.Page, error) {
	p, err := transform(doc)
	if err != nil {
		return nil, err
	}
	static := embedded()
	css, err := fs.ReadFile(assetFiles, "assets/docs.css")
	if err != nil {
		return nil, err
	}
	styles := webasset.New(Prefix, "docs.css", append(slices.Clip(css), tryItOffCSS(p.tryItOff)...))
	document := webasset.New(Prefix, "openapi.json", p.document)

	h := webasset.NewPage(Prefix, contentSecurityPolicy,
		static["scalar-standalone.js"], static["docs.js"], static["favicon.svg"], static["LICENSE.scalar"], styles, document)
	cfg, err := json.Marshal(pageConfig{DocumentURL: document.URL(), ServerPath: p.serverPath, TryItOff: p.tryItOff})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = pageTemplate.Execute(&b, struct {
		Title                         string
		Config                        template.JS
		Favicon, CSS, Renderer, Setup string
	}{
		Title:    p.title + " — reference",
		Config:   template.JS(cfg), // json.Marshal escapes <, > and &, so it cannot end the element
		Favicon:  static["favicon.svg"].URL(),
		CSS:      styles.URL(),
		Renderer: static["scalar-standalone.js"].URL(),
		Setup:    static["docs.js"].URL(),
	})
	if err != nil {
		return nil, fmt.Errorf("docs: page: %w", err)
	}
	h.SetHTML(b.Bytes())
	return h, nil
}

// tryItOffCSS is the first layer of x-hideTryItPanel (see the package comment): for
// each operation, no "Test Request" button in its section, which Scalar gives the id
// "<document>/tag/<tag>/<METHOD><path>", and no entry in the client window's sidebar.
func tryItOffCSS(ops []operationRef) []byte {
	if len(ops) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\n/* Generated by package docs: operations with x-hideTryItPanel: true. */\n")
	for i, op := range ops {
		suffix := cssString("/" + op.Method + op.Path)
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "section[id$=%s] .show-api-client-button,\n.scalar-client [data-sidebar-id$=%s]", suffix, suffix)
	}
	b.WriteString(" {\n  display: none !important;\n}\n")
	return []byte(b.String())
}

// cssString quotes s as a CSS string: quotes, backslashes and control characters
// escaped as hexadecimal escapes.
func cssString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r == '"' || r == '\\' || r < 0x20 || r == 0x7f {
			fmt.Fprintf(&b, "\\%x ", r)
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
