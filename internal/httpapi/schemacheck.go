package httpapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/ogen-go/ogen/validate"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The generated decoders and validators refuse a request in their own words, and
// often without naming the field: a JSON type error ("quantity":"2", 1.5 or 1e3 for an
// integer, a date for a date-time) arrives as a decoder's sentence, a bound or an
// enum as a validator's. On that error path only, kin-openapi checks the request's
// values again against the schemas of the served document, and its findings (the
// schema, the schema's field that failed, the value, where) are worded here in the
// document's terms, never from kin's own sentences. A request that passes never
// comes here.

// requestSchemas is the served document as kin-openapi reads it.
type requestSchemas struct {
	ops  map[string]operation // by operation id
	opts []openapi3.SchemaValidationOption
}

// operation is one operation of the document, with the parameters of its path.
type operation struct {
	*openapi3.Operation
	params openapi3.Parameters
}

// newRequestSchemas reads the schemas of requests out of a document.
func newRequestSchemas(doc []byte) (*requestSchemas, error) {
	t, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("request schemas: %w", err)
	}
	// The formats as the generated server reads them (kin's date-time is a regular
	// expression that takes a 30 February; it has no email): given per check, as kin's
	// own table is global.
	layout := func(l string) openapi3.StringFormatValidator {
		return openapi3.NewCallbackValidator(func(v string) error { _, err := time.Parse(l, v); return err })
	}
	formats := map[string]openapi3.StringFormatValidator{
		"date-time": layout(time.RFC3339),
		"date":      layout(time.DateOnly),
		// The generator's own test, so that the two cannot disagree on an address.
		"email": openapi3.NewCallbackValidator(validate.String{Email: true}.Validate),
	}
	rs := &requestSchemas{ops: map[string]operation{},
		opts: []openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.WithStringFormatValidators(formats)}}
	for _, item := range t.Paths.Map() {
		for _, op := range item.Operations() {
			params := slices.Clip(item.Parameters)
			for _, p := range op.Parameters {
				// An operation's parameter replaces the path's of the same name.
				params = slices.DeleteFunc(params, func(q *openapi3.ParameterRef) bool {
					return q.Value.In == p.Value.In && q.Value.Name == p.Value.Name
				})
				params = append(params, p)
			}
			rs.ops[op.OperationID] = operation{op, params}
		}
	}
	return rs, nil
}

// body lists what is wrong with a request body of operation op (valid JSON) by the
// schema of its media type.
func (rs *requestSchemas) body(op string, r *http.Request, data []byte) []petstore.Detail {
	o, ok := rs.ops[op]
	if !ok || o.RequestBody == nil || o.RequestBody.Value == nil {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	m := o.RequestBody.Value.Content.Get(mt)
	if m == nil {
		m = o.RequestBody.Value.Content.Get("application/json")
	}
	if m == nil || m.Schema == nil || m.Schema.Value == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	v = literals(v)
	type finding struct {
		petstore.Detail
		rank int
	}
	var found []finding
	for _, e := range schemaErrors(m.Schema.Value.VisitJSON(v, rs.opts...)) {
		field := fieldOf(e.JSONPointer(), v)
		if e.SchemaField == "properties" {
			// kin names the unknown member only in its sentence: the object's members
			// that the schema does not list are the ones.
			members, _ := e.Value.(map[string]any)
			for name := range members {
				if _, known := e.Schema.Properties[name]; !known {
					found = append(found, finding{petstore.Detail{Field: joinField(field, name), Problem: "is not a known field"}, 0})
				}
			}
			continue
		}
		if p := rs.problem(e, field); p != "" {
			found = append(found, finding{petstore.Detail{Field: field, Problem: p}, rank(e)})
		}
	}
	// One problem a field, the first by rank; the fields in order of their names.
	slices.SortStableFunc(found, func(a, b finding) int {
		return cmp.Or(strings.Compare(a.Field, b.Field), a.rank-b.rank)
	})
	found = slices.CompactFunc(found, func(a, b finding) bool { return a.Field == b.Field })
	out := make([]petstore.Detail, len(found))
	for i, f := range found {
		out[i] = f.Detail
	}
	return out
}

// literal is a JSON number not written as an int64 (1.5, 1e3, 2^63). kin-openapi reads
// numbers as float64, where 1e3 is the integer 1000 and 2^63 falls back into int64's
// range, so such a number reaches it as this type, which every schema refuses, and
// what is wrong with it is worded from what was written (literalProblem).
type literal string

// literals replaces the numbers in v that are not int64s as written by literals.
func literals(v any) any {
	switch v := v.(type) {
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
			return literal(v)
		}
	case map[string]any:
		for k, x := range v {
			v[k] = literals(x)
		}
	case []any:
		for i, x := range v {
			v[i] = literals(x)
		}
	}
	return v
}

// schemaErrors lists kin's findings in err, those within an allOf included.
func schemaErrors(err error) []*openapi3.SchemaError {
	switch e := err.(type) {
	case openapi3.MultiError:
		var out []*openapi3.SchemaError
		for _, err := range e {
			out = append(out, schemaErrors(err)...)
		}
		return out
	case *openapi3filter.RequestError:
		return schemaErrors(e.Err)
	case *openapi3.SchemaError:
		if e.SchemaField == "allOf" {
			for o := e.Origin; o != nil; o = errors.Unwrap(o) {
				if me, ok := o.(openapi3.MultiError); ok {
					return schemaErrors(me)
				}
			}
		}
		return []*openapi3.SchemaError{e}
	}
	return nil
}

// fieldOf names the member at ptr of v: "items[0].petId".
func fieldOf(ptr []string, v any) string {
	var b strings.Builder
	for _, k := range ptr {
		if items, ok := v.([]any); ok {
			b.WriteString("[" + k + "]")
			if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(items) {
				v = items[i]
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return b.String()
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// lastField is the name of the field a path ends with: "scopes" of "a.scopes".
func lastField(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// ranks orders the schema's fields by which of their findings about one value is told.
var ranks = []string{"type", "nullable", "required", "minimum", "maximum", "exclusiveMinimum",
	"exclusiveMaximum", "format", "multipleOf", "minLength", "maxLength", "pattern",
	"minItems", "maxItems", "uniqueItems", "enum"}

func rank(e *openapi3.SchemaError) int {
	if i := slices.Index(ranks, e.SchemaField); i >= 0 {
		return i
	}
	return len(ranks)
}

// formatProblems word the string formats of the document.
var formatProblems = map[string]string{
	"date-time": "must be a date and time (RFC 3339) such as 2026-12-24T10:00:00Z",
	"date":      "must be a date (YYYY-MM-DD) such as 2026-12-24",
	"email":     "must be an email address such as ada@example.com",
}

// problem words e, a finding about the value at field, from the schema's field that
// failed and the schema's values; "" when there is nothing to tell after all.
func (rs *requestSchemas) problem(e *openapi3.SchemaError, field string) string {
	s := e.Schema
	if lit, ok := e.Value.(literal); ok {
		return rs.literalProblem(s, string(lit))
	}
	switch e.SchemaField {
	case "type":
		return typeProblem(s)
	case "nullable":
		return "must not be null"
	case "required":
		return "is required"
	case "enum":
		// kin checks an enum before the type (and null): their problem comes first.
		bare := *s
		bare.Enum = nil
		if p := rs.best(bare.VisitJSON(e.Value, rs.opts...), field); p != "" {
			return p
		}
		return "is not one of the values the document lists"
	case "format":
		if _, ok := e.Value.(string); !ok {
			return "is out of range" // int32, int64
		}
		if p, ok := formatProblems[s.Format]; ok {
			return p
		}
	case "minimum":
		return "must be at least " + number(s.Min)
	case "maximum":
		return "must be at most " + number(s.Max)
	case "exclusiveMinimum":
		return "must be more than " + number(s.Min)
	case "exclusiveMaximum":
		return "must be less than " + number(s.Max)
	case "multipleOf":
		return "must be a multiple of " + number(s.MultipleOf)
	case "minLength":
		return lengthProblem(lastField(field), "least", int(s.MinLength), false)
	case "maxLength":
		return lengthProblem(lastField(field), "most", int(*s.MaxLength), false)
	case "pattern":
		return "has characters that are not allowed here; see the OpenAPI document"
	case "minItems":
		return lengthProblem(lastField(field), "least", int(s.MinItems), true)
	case "maxItems":
		return lengthProblem(lastField(field), "most", int(*s.MaxItems), true)
	case "uniqueItems":
		return "must not repeat an item"
	}
	return "is not valid here; see the OpenAPI document"
}

// literalProblem words what is wrong with a number written as lit, not an int64, by s.
func (rs *requestSchemas) literalProblem(s *openapi3.Schema, lit string) string {
	if s.Type.Is(openapi3.TypeInteger) && strings.ContainsAny(lit, ".eE") {
		return "must be an integer, written in digits only"
	}
	if p := rs.best(s.VisitJSON(json.Number(lit), rs.opts...), ""); p != "" {
		return p // a bound, or not a number at all
	}
	if s.Type.Is(openapi3.TypeInteger) {
		return "is out of range" // past int64, which float64 does not tell
	}
	return ""
}

// best words the first of the findings in err about one value (a list's own before
// its items', the first item first), by rank.
func (rs *requestSchemas) best(err error, field string) string {
	found := schemaErrors(err)
	at := func(e *openapi3.SchemaError) (depth, item int) {
		ptr := e.JSONPointer()
		if len(ptr) > 0 {
			item, _ = strconv.Atoi(ptr[len(ptr)-1])
		}
		return len(ptr), item
	}
	slices.SortStableFunc(found, func(a, b *openapi3.SchemaError) int {
		da, ia := at(a)
		db, ib := at(b)
		return cmp.Or(da-db, ia-ib, rank(a)-rank(b))
	})
	for _, e := range found {
		if p := rs.problem(e, field); p != "" {
			return p
		}
	}
	return ""
}

// typeProblems word the types of the document.
var typeProblems = map[string]string{
	openapi3.TypeInteger: "must be an integer", openapi3.TypeNumber: "must be a number",
	openapi3.TypeString: "must be a string", openapi3.TypeBoolean: "must be true or false",
	openapi3.TypeObject: "must be an object", openapi3.TypeArray: "must be an array",
}

func typeProblem(s *openapi3.Schema) string {
	if t := s.Type.Slice(); len(t) == 1 && typeProblems[t[0]] != "" {
		return typeProblems[t[0]]
	}
	return "is not valid here; see the OpenAPI document"
}

// number writes a bound of the document as it is written there.
func number(f *float64) string {
	if f == nil {
		return "?"
	}
	return strconv.FormatFloat(*f, 'f', -1, 64)
}

// param words what is wrong with parameter name (in "query", "path" or "header") of
// request r to operation op, whose path parameters are path, or "" when the
// document's schema finds nothing.
func (rs *requestSchemas) param(r *http.Request, op string, path map[string]string, in, name string) string {
	o, ok := rs.ops[op]
	if !ok {
		return ""
	}
	i := slices.IndexFunc(o.params, func(p *openapi3.ParameterRef) bool {
		return p.Value.In == in && strings.EqualFold(p.Value.Name, name)
	})
	if i < 0 || o.params[i].Value.Schema == nil {
		return ""
	}
	p := o.params[i].Value
	s := p.Schema.Value
	item := s
	if s.Type.Is(openapi3.TypeArray) && s.Items != nil {
		item = s.Items.Value
	}
	if once := item == s; once && (in == "query" && len(r.URL.Query()[p.Name]) > 1 || in == "header" && len(r.Header.Values(p.Name)) > 1) {
		// Like a header sent twice: which one a layer would read is a guess.
		return "must be given once"
	}
	input := &openapi3filter.RequestValidationInput{Request: r, PathParams: path,
		Options: &openapi3filter.Options{MultiError: true, SkipSettingDefaults: true, SchemaValidationOptions: rs.opts}}
	err := openapi3filter.ValidateParameter(r.Context(), input, p)
	segment, given := path[p.Name]
	var parse *openapi3filter.ParseError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, openapi3filter.ErrInvalidRequired) && in == "path" && given && segment == "":
		// kin takes an empty segment (/orders/) for a missing one; it is a value, "".
		if item.Type.Is(openapi3.TypeString) {
			return rs.best(item.VisitJSON("", rs.opts...), name)
		}
		return typeProblem(item)
	case errors.Is(err, openapi3filter.ErrInvalidRequired):
		return "is required"
	case errors.Is(err, strconv.ErrRange) && errors.As(err, &parse):
		// Past the integer's bits: a bound of the document, if one is passed, says more.
		for inner, ok := parse.Cause.(*openapi3filter.ParseError); ok; inner, ok = parse.Cause.(*openapi3filter.ParseError) {
			parse = inner
		}
		raw, _ := parse.Value.(string)
		if p := rs.best(item.VisitJSON(json.Number(raw), rs.opts...), name); p != "" {
			return p
		}
		return "is out of range"
	case errors.As(err, &parse), errors.Is(err, openapi3filter.ErrInvalidEmptyValue):
		return typeProblem(item)
	}
	return rs.best(err, name)
}

// pathParams names the arguments of a path by its pattern: "/pets/{petId}".
func pathParams(pattern string, args []string) map[string]string {
	params := map[string]string{}
	for i := range args {
		_, rest, ok := strings.Cut(pattern, "{")
		name, after, ok2 := strings.Cut(rest, "}")
		if !ok || !ok2 {
			break
		}
		params[name], pattern = args[i], after
	}
	return params
}
