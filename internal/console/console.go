// Package console serves the staff console at /console: a web page from which shop
// staff run the store (stock, pets, categories, orders, customers, staff, their API
// keys) as an admin.
//
// The page is a client of the public API like any other: its script (built from
// console/src by esbuild, over the TypeScript SDK, and embedded here) makes
// documented /v1 calls with a key: a session's (POST /sessions: email and password,
// 12 hours; kept in the tab's sessionStorage, revoked on sign-out) or one the person
// pasted (kept in memory only). The server keeps no session but that key and offers
// the page nothing the API does not offer everyone. The one-time links of invitations
// and password resets open the same page (/console/accept, /console/reset: routed by
// package httpapi).
//
// Everything the page loads comes from this package, from the same origin, under a
// Content-Security-Policy stricter than that of /docs: no inline script or style at
// all, and Trusted Types required, so no string can ever become markup or code.
package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"sync"

	"github.com/acme-pets/petstore/internal/webasset"
)

//go:embed assets/console.js assets/console.css assets/favicon.svg
var assetFiles embed.FS

//go:embed page.html
var pageHTML string

// Prefix is where the page lives; its assets are under Prefix + "/assets/".
const Prefix = "/console"

// contentSecurityPolicy allows this origin only, and no string may become markup or
// code (Trusted Types): the shop's page has the same.
const contentSecurityPolicy = webasset.ScriptPagePolicy

// New returns the console page and its assets, the same for every server of the process:
// the page depends on nothing but the embedded files.
var New = sync.OnceValues(func() (*webasset.Page, error) {
	var assets []*webasset.Asset
	urls := map[string]string{}
	for _, name := range []string{"console.js", "console.css", "favicon.svg"} {
		b, err := fs.ReadFile(assetFiles, "assets/"+name)
		if err != nil {
			return nil, err
		}
		a := webasset.New(Prefix, name, b)
		assets = append(assets, a)
		urls[name] = a.URL()
	}
	var b bytes.Buffer
	err := template.Must(template.New("page.html").Parse(pageHTML)).Execute(&b, struct{ Favicon, CSS, Script string }{
		Favicon: urls["favicon.svg"],
		CSS:     urls["console.css"],
		Script:  urls["console.js"],
	})
	if err != nil {
		return nil, fmt.Errorf("console: page: %w", err)
	}
	h := webasset.NewPage(Prefix, contentSecurityPolicy, assets...)
	h.SetHTML(b.Bytes())
	return h, nil
})
