package docs

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acme-pets/petstore/api"
	"gopkg.in/yaml.v3"
)

// operationRef names one operation of the document.
type operationRef struct {
	Method      string `json:"method"` // upper case, as on the wire
	Path        string `json:"path"`   // relative to the server URL, as in the document
	OperationID string `json:"operationId"`
}

// page is what the page needs besides the renderer: the transformed document and the
// facts of the original that the page script enforces.
type page struct {
	document []byte
	// serverPath is the path of servers[0].url ("/v1"); the page points try-it at
	// the origin it was loaded from plus this path, so requests stay same-origin.
	serverPath string
	title      string
	// tryItOff lists the operations with x-hideTryItPanel: true.
	tryItOff []operationRef
}

// Badge colours: Scalar takes any CSS colour.
const (
	colorSunset = "#b91c1c"
	colorBeta   = "#1d4ed8"
	colorOther  = "#6b7280"
)

// transform makes the copy of the served document that the renderer is given. It
// turns the document's own extensions, which no renderer reads, into what Scalar
// shows (docs/DEVELOPMENT.md, The docs page, has the survey):
//
//   - x-stability: experimental → x-scalar-stability: experimental, which Scalar
//     shows as its own badge; beta (which Scalar does not know) and any other value
//     but stable → an x-badges entry with the capitalised name ("Beta").
//   - x-deprecated-sunset: DATE → an x-badges entry "Sunset DATE" and a sentence at
//     the end of the description (Scalar already marks deprecated: true).
//   - x-hideTryItPanel: true → a sentence in the description, and the operation is
//     returned in page.tryItOff so that the page removes its try-it (see docs.js).
//
// Everything else is passed through unchanged, in the same order.
func transform(doc []byte) (page, error) {
	tree, err := api.ParseTree(doc)
	if err != nil {
		return page{}, fmt.Errorf("docs: read the document: %w", err)
	}
	root := tree.Content[0]
	var p page
	info := api.Value(root, "info")
	p.title = api.Scalar(info, "title")
	if p.title == "" {
		p.title = "API reference"
	}
	if servers := api.Value(root, "servers"); servers != nil && len(servers.Content) > 0 {
		u, err := url.Parse(api.Scalar(servers.Content[0], "url"))
		if err != nil {
			return page{}, fmt.Errorf("docs: servers[0].url: %w", err)
		}
		p.serverPath = strings.TrimSuffix(u.Path, "/")
	}
	if info != nil {
		api.Set(info, "description", api.String(paragraphs(readerNote, api.Scalar(info, "description"))))
	}
	if api.Value(root, "paths") == nil {
		return page{}, fmt.Errorf("docs: the document has no paths")
	}
	api.WalkOperations(tree, func(path, method string, op *yaml.Node) {
		if err != nil {
			return
		}
		ref := operationRef{Method: strings.ToUpper(method), Path: path, OperationID: api.Scalar(op, "operationId")}
		if err = transformOperation(op); err != nil {
			err = fmt.Errorf("docs: %s %s: %w", ref.Method, ref.Path, err)
			return
		}
		if api.IsTrue(op, "x-hideTryItPanel") {
			p.tryItOff = append(p.tryItOff, ref)
		}
	})
	if err != nil {
		return page{}, err
	}
	var b bytes.Buffer
	if err := api.WriteJSON(&b, root); err != nil {
		return page{}, fmt.Errorf("docs: write the document: %w", err)
	}
	p.document = b.Bytes()
	return p, nil
}

// readerNote opens info.description on the page: how to use it.
const readerNote = "> **Trying it here:** paste your API key once under **Authentication**, then press " +
	"**Test Request** on any operation: the request goes to this server with your key. " +
	"The code samples are tested against a running server. The document itself is at " +
	"[/openapi.yaml](/openapi.yaml) and [/openapi.json](/openapi.json)."

func transformOperation(op *yaml.Node) error {
	badges := api.Value(op, "x-badges")
	existing := badges != nil && badges.Kind == yaml.SequenceNode
	if !existing {
		badges = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"} // anything else is replaced
	}
	if v := api.Value(op, "x-stability"); v != nil && v.Tag != "!!null" {
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
			return fmt.Errorf("x-stability is not a string")
		}
		switch stability := v.Value; stability {
		case "stable", "":
		case "beta":
			badges.Content = append(badges.Content, badge("Beta", colorBeta))
		case "experimental":
			api.Set(op, "x-scalar-stability", api.String("experimental")) // Scalar shows its own badge
		default:
			r, n := utf8.DecodeRuneInString(stability)
			badges.Content = append(badges.Content, badge(string(unicode.ToUpper(r))+stability[n:], colorOther))
		}
	}
	if v := api.Value(op, "x-deprecated-sunset"); v != nil && v.Tag != "!!null" {
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
			return fmt.Errorf("x-deprecated-sunset is not a string")
		}
		date := v.Value
		badges.Content = append(badges.Content, badge("Sunset "+date, colorSunset))
		api.Set(op, "description", api.String(paragraphs(api.Scalar(op, "description"),
			fmt.Sprintf("**Sunset: %s.** This operation is deprecated and will be removed on %s; from that day it answers `410 gone`.", date, date))))
	}
	if api.IsTrue(op, "x-hideTryItPanel") {
		api.Set(op, "description", api.String(paragraphs(api.Scalar(op, "description"),
			"*Try-it is turned off for this operation on this page; use one of the code samples.*")))
	}
	if len(badges.Content) > 0 {
		api.Set(op, "x-badges", badges)
	}
	return nil
}

func badge(name, color string) *yaml.Node {
	return api.Mapping("name", name, "position", "before", "color", color)
}

// paragraphs joins Markdown paragraphs, leaving out empty ones.
func paragraphs(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}
