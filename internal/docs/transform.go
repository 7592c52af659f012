package docs

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
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

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// transform makes the copy of the served document that the renderer is given. It
// turns the document's own extensions, which no renderer reads, into what Scalar
// shows (NOTES-docs.md has the survey):
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
	root, err := parseObject(doc)
	if err != nil {
		return page{}, fmt.Errorf("docs: read the document: %w", err)
	}
	var p page
	info := root.obj("info")
	p.title = info.str("title")
	if p.title == "" {
		p.title = "API reference"
	}
	servers, _ := root.get("servers").([]any)
	if len(servers) > 0 {
		if s, ok := servers[0].(*object); ok {
			u, err := url.Parse(s.str("url"))
			if err != nil {
				return page{}, fmt.Errorf("docs: servers[0].url: %w", err)
			}
			p.serverPath = strings.TrimSuffix(u.Path, "/")
		}
	}
	if info != nil {
		info.set("description", paragraphs(readerNote, info.str("description")))
	}

	paths := root.obj("paths")
	if paths == nil {
		return page{}, fmt.Errorf("docs: the document has no paths")
	}
	for _, pm := range paths.members {
		item, ok := pm.value.(*object)
		if !ok {
			continue
		}
		for _, method := range httpMethods {
			op := item.obj(method)
			if op == nil {
				continue
			}
			ref := operationRef{Method: strings.ToUpper(method), Path: pm.key, OperationID: op.str("operationId")}
			if err := transformOperation(op); err != nil {
				return page{}, fmt.Errorf("docs: %s %s: %w", ref.Method, ref.Path, err)
			}
			if op.get("x-hideTryItPanel") == true {
				p.tryItOff = append(p.tryItOff, ref)
			}
		}
	}
	p.document, err = json.Marshal(root)
	if err != nil {
		return page{}, fmt.Errorf("docs: write the document: %w", err)
	}
	return p, nil
}

// readerNote opens info.description on the page: how to use it.
const readerNote = "> **Trying it here:** paste your API key once under **Authentication**, then press " +
	"**Test Request** on any operation: the request goes to this server with your key. " +
	"The code samples are tested against a running server. The document itself is at " +
	"[/openapi.yaml](/openapi.yaml) and [/openapi.json](/openapi.json)."

func transformOperation(op *object) error {
	var badges []any
	if existing, ok := op.get("x-badges").([]any); ok {
		badges = existing
	}
	if v := op.get("x-stability"); v != nil {
		stability, ok := v.(string)
		if !ok {
			return fmt.Errorf("x-stability is not a string")
		}
		switch stability {
		case "stable", "":
		case "beta":
			badges = append(badges, badge("Beta", colorBeta))
		case "experimental":
			op.set("x-scalar-stability", "experimental") // Scalar shows its own badge
		default:
			r, n := utf8.DecodeRuneInString(stability)
			badges = append(badges, badge(string(unicode.ToUpper(r))+stability[n:], colorOther))
		}
	}
	if v := op.get("x-deprecated-sunset"); v != nil {
		date, ok := v.(string)
		if !ok {
			return fmt.Errorf("x-deprecated-sunset is not a string")
		}
		badges = append(badges, badge("Sunset "+date, colorSunset))
		op.set("description", paragraphs(op.str("description"),
			fmt.Sprintf("**Sunset: %s.** This operation is deprecated and will be removed on %s; from that day it answers `410 gone`.", date, date)))
	}
	if op.get("x-hideTryItPanel") == true {
		op.set("description", paragraphs(op.str("description"),
			"*Try-it is turned off for this operation on this page; use one of the code samples.*"))
	}
	if len(badges) > 0 {
		op.set("x-badges", badges)
	}
	return nil
}

func badge(name, color string) *object {
	return &object{members: []member{{"name", name}, {"position", "before"}, {"color", color}}}
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
