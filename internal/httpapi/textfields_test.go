package httpapi_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// The text policy by kind of field (petstore/text.go). Every string property of every
// request body is found in the served document, not listed here: a field the
// classifier cannot place fails TestEveryRequestStringHasAKind, so a field added later
// forces a decision (an enum, a format, or an x-text kind) before it ships.

// Kinds of request strings. The free-text kinds (those the policy speaks of) are
// named by x-text; the others by the schema.
const (
	kindName     = "name"      // x-text: name
	kindAddress  = "address"   // x-text: address (URLs)
	kindFreeText = "free-text" // x-text: free-text (descriptions, messages)
	kindEmail    = "email"     // format: email; an address too
	kindPassword = "password"  // format: password
	kindEnum     = "enum"      // a closed list: the generated server refuses the rest
	kindDateTime = "date-time" // format: date-time: parsed, never kept as text
	kindPattern  = "pattern"   // an id of a fixed form (a photo's): its pattern admits only [0-9a-z_]
)

// textField is one string property of an operation's request body.
type textField struct {
	Op docOp
	// Path leads from the body to the field: member names, and "[]" for an array's
	// first item.
	Path []string
	Kind string
}

// Field is the field as a refusal names it (tags[0].name).
func (f textField) Field() string {
	var b strings.Builder
	for _, p := range f.Path {
		switch {
		case p == "[]":
			b.WriteString("[0]")
		case b.Len() > 0:
			b.WriteString("." + p)
		default:
			b.WriteString(p)
		}
	}
	return b.String()
}

func (f textField) String() string { return f.Op.ID + "/" + f.Field() }

// Policed reports whether the field is text the policy speaks of beyond UTF-8 and NUL.
func (f textField) Policed() bool {
	switch f.Kind {
	case kindName, kindAddress, kindFreeText, kindEmail:
		return true
	}
	return false
}

// requestStrings lists every string property of every operation's JSON request body,
// following $ref, allOf, nested objects and arrays, each with its kind; a property
// the classifier cannot place is reported as an error of t.
func (a *testAPI) requestStrings(t testing.TB) []textField {
	t.Helper()
	doc := a.servedDocument(t)
	byID := map[string]docOp{}
	for _, op := range a.documentOps(t) {
		byID[op.ID] = op
	}
	var fields []textField
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody == nil {
				continue
			}
			mt := op.RequestBody.Value.Content.Get("application/json")
			if mt == nil && binaryBody(op.RequestBody.Value) {
				continue // an image (a photo upload): bytes, not text; see photos_test.go
			}
			if mt == nil || mt.Schema == nil {
				t.Errorf("%s takes a body that is not application/json", op.OperationID)
				continue
			}
			walkStrings(mt.Schema.Value, nil, func(path []string, s *openapi3.Schema) {
				f := textField{Op: byID[op.OperationID], Path: path}
				f.Kind = classify(s)
				if f.Kind == "" {
					t.Errorf("%s: a string whose kind the text policy does not know: give it an enum, a format or an x-text kind (%s, %s or %s), and a rule in petstore/text.go",
						f, kindName, kindAddress, kindFreeText)
					return
				}
				fields = append(fields, f)
			})
		}
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].String() < fields[j].String() })
	return fields
}

func walkStrings(s *openapi3.Schema, path []string, fn func([]string, *openapi3.Schema)) {
	if s == nil {
		return
	}
	for _, sub := range s.AllOf {
		walkStrings(sub.Value, path, fn)
	}
	for _, sub := range append(s.OneOf, s.AnyOf...) {
		walkStrings(sub.Value, path, fn)
	}
	switch {
	case s.Type.Is("string"):
		fn(append([]string(nil), path...), s)
	case s.Type.Is("object"):
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			walkStrings(s.Properties[name].Value, append(path, name), fn)
		}
	case s.Type.Is("array") && s.Items != nil:
		walkStrings(s.Items.Value, append(path, "[]"), fn)
	}
}

// classify says which rules a string follows, or "" when the document does not say.
func classify(s *openapi3.Schema) string {
	if len(s.Enum) > 0 {
		return kindEnum
	}
	if k, ok := s.Extensions["x-text"].(string); ok {
		switch k {
		case kindName, kindAddress, kindFreeText:
			return k
		}
		return ""
	}
	if s.Pattern != "" && strings.HasPrefix(s.Pattern, "^ph_[2-7a-z]") {
		return kindPattern
	}
	switch s.Format {
	case "email":
		return kindEmail
	case "password":
		return kindPassword
	case "date-time":
		return kindDateTime
	}
	return ""
}

// withField is body (a JSON object) with the field at path set to v.
func withField(t testing.TB, body string, path []string, v any) string {
	t.Helper()
	var root any
	if err := json.Unmarshal([]byte(body), &root); err != nil {
		t.Fatal(err)
	}
	root = setPath(root, path, v)
	out, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func setPath(node any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	if path[0] == "[]" {
		list, _ := node.([]any)
		if len(list) == 0 {
			list = []any{nil}
		}
		list[0] = setPath(list[0], path[1:], v)
		return list
	}
	m, _ := node.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	m[path[0]] = setPath(m[path[0]], path[1:], v)
	return m
}

// fieldOf reads the value at path in a JSON body.
func fieldOf(body []byte, path []string) any {
	var node any
	if json.Unmarshal(body, &node) != nil {
		return nil
	}
	for _, p := range path {
		switch n := node.(type) {
		case map[string]any:
			node = n[p]
		case []any:
			if len(n) == 0 {
				return nil
			}
			node = n[0]
		default:
			return nil
		}
	}
	return node
}

// sample is a value of the field's kind that passes every rule, with bad spliced into
// its middle.
func sample(kind, bad string) string {
	switch kind {
	case kindAddress:
		return "https://hooks.example.com/a" + bad + "b"
	case kindEmail:
		return "a" + bad + "b@example.com"
	case kindPassword:
		return "correct horse" + bad + "battery"
	}
	return "Rex" + bad + "Max"
}

// binaryBody reports whether every content type of a request body is bytes (format:
// binary), as a photo upload's image is.
func binaryBody(b *openapi3.RequestBody) bool {
	for _, mt := range b.Content {
		if mt.Schema == nil || mt.Schema.Value.Format != "binary" {
			return false
		}
	}
	return len(b.Content) > 0
}
