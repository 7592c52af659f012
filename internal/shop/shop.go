// Package shop serves the storefront at /shop: the page from which customers browse the
// pets for sale (photos, descriptions, tags), sign up or sign in, order, and see and
// cancel their own orders.
//
// Like the staff console (package console), the page is a client of the public API and
// nothing more: its script (built from shop/src by esbuild, over the TypeScript SDK, and
// embedded here) makes documented /v1 calls with a session's key (POST /sessions: email
// and password, kept in the tab's sessionStorage, revoked on sign-out). The photos it
// shows are the API's public GET /v1/photos/…, on this origin. Everything it loads comes
// from this package under the console's Content-Security-Policy.
package shop

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"sync"

	"github.com/acme-pets/petstore/internal/webasset"
)

//go:embed assets/shop.js assets/shop.css assets/favicon.svg
var assetFiles embed.FS

//go:embed page.html
var pageHTML string

// Prefix is where the page lives; its assets are under Prefix + "/assets/".
const Prefix = "/shop"

// New returns the shop's page and its assets, the same for every server of the process.
var New = sync.OnceValues(func() (*webasset.Page, error) {
	var assets []*webasset.Asset
	urls := map[string]string{}
	for _, name := range []string{"shop.js", "shop.css", "favicon.svg"} {
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
		CSS:     urls["shop.css"],
		Script:  urls["shop.js"],
	})
	if err != nil {
		return nil, fmt.Errorf("shop: page: %w", err)
	}
	h := webasset.NewPage(Prefix, webasset.ScriptPagePolicy, assets...)
	h.SetHTML(b.Bytes())
	return h, nil
})
