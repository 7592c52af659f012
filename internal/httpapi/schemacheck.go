package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acme-pets/petstore/internal/petstore"
)

// The generated decoders and validators refuse a request in their own words, and
// often without naming the field: a JSON type error ("quantity":"2", 1.5 or 1e3 for an
// integer, a date for a date-time) arrives as a decoder's sentence, a bound or an
// enum as a validator's. On that error path only, the request's values are checked
// again here against the schemas of the served document, so that every 400 names its
// fields and words their problems in the document's terms, whatever the generator
// says. A request that passes never comes here.

// schema is the part of an OpenAPI 3.0 schema object that requests are checked by.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Nullable             bool               `json:"nullable"`
	Enum                 []json.RawMessage  `json:"enum"`
	Minimum              json.Number        `json:"minimum"`
	Maximum              json.Number        `json:"maximum"`
	MultipleOf           json.Number        `json:"multipleOf"`
	MinLength            *int               `json:"minLength"`
	MaxLength            *int               `json:"maxLength"`
	Pattern              string             `json:"pattern"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`
	UniqueItems          bool               `json:"uniqueItems"`
	Items                *schema            `json:"items"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	AllOf                []*schema          `json:"allOf"`
}

type parameter struct {
	Ref    string  `json:"$ref"`
	Name   string  `json:"name"`
	In     string  `json:"in"`
	Schema *schema `json:"schema"`
}

type operation struct {
	ID          string       `json:"operationId"`
	Parameters  []*parameter `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Schema *schema `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
}

// requestSchemas are the schemas of every operation's parameters and bodies.
type requestSchemas struct {
	schemas    map[string]*schema            // components, by name
	params     map[string]map[string]*schema // by operation id, then in + " " + name
	bodies     map[string]map[string]*schema // by operation id, then media type
	patterns   map[string]*regexp.Regexp     // compiled, by source; nil if Go cannot
	pathParams map[string][]string           // by operation id, in path order
}

// newRequestSchemas reads the schemas of requests out of a document (as JSON).
func newRequestSchemas(doc []byte) (*requestSchemas, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas    map[string]*schema    `json:"schemas"`
			Parameters map[string]*parameter `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("request schemas: %w", err)
	}
	rs := &requestSchemas{schemas: d.Components.Schemas, params: map[string]map[string]*schema{},
		bodies: map[string]map[string]*schema{}, patterns: map[string]*regexp.Regexp{}, pathParams: map[string][]string{}}
	param := func(p *parameter) *parameter {
		if name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/"); ok {
			return d.Components.Parameters[name]
		}
		return p
	}
	for path, item := range d.Paths {
		var shared []*parameter
		_ = json.Unmarshal(item["parameters"], &shared)
		for method, raw := range item {
			var op operation
			if method == "parameters" || json.Unmarshal(raw, &op) != nil || op.ID == "" {
				continue
			}
			rs.params[op.ID] = map[string]*schema{}
			for _, p := range append(slices.Clip(shared), op.Parameters...) {
				if p = param(p); p != nil {
					rs.params[op.ID][p.In+" "+strings.ToLower(p.Name)] = p.Schema
				}
			}
			for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(path, -1) {
				rs.pathParams[op.ID] = append(rs.pathParams[op.ID], m[1])
			}
			if op.RequestBody != nil {
				rs.bodies[op.ID] = map[string]*schema{}
				for mt, c := range op.RequestBody.Content {
					rs.bodies[op.ID][mt] = c.Schema
				}
			}
		}
	}
	for _, s := range rs.schemas {
		rs.compile(s)
	}
	for _, ps := range rs.params {
		for _, s := range ps {
			rs.compile(s)
		}
	}
	return rs, nil
}

// compile compiles the patterns of s and of the schemas it holds.
func (rs *requestSchemas) compile(s *schema) {
	if s == nil {
		return
	}
	if _, done := rs.patterns[s.Pattern]; s.Pattern != "" && !done {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			re = nil // a pattern Go cannot read is not checked here
		}
		rs.patterns[s.Pattern] = re
	}
	rs.compile(s.Items)
	for _, p := range s.Properties {
		rs.compile(p)
	}
	for _, a := range s.AllOf {
		rs.compile(a)
	}
}

func (rs *requestSchemas) resolve(s *schema) *schema {
	for s != nil && s.Ref != "" {
		s = rs.schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
	}
	return s
}

// body lists what is wrong with a request body of operation op (valid JSON) by the
// schema of its media type.
func (rs *requestSchemas) body(op string, r *http.Request, data []byte) []petstore.Detail {
	bodies := rs.bodies[op]
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	s, ok := bodies[mt]
	if !ok {
		s = bodies["application/json"]
	}
	if s == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var out []petstore.Detail
	rs.walk("", s, v, &out)
	return out
}

// walk adds to out what is wrong with v at path by s.
func (rs *requestSchemas) walk(path string, s *schema, v any, out *[]petstore.Detail) {
	s = rs.resolve(s)
	if s == nil {
		return
	}
	bad := func(problem string) { *out = append(*out, petstore.Detail{Field: path, Problem: problem}) }
	for _, a := range s.AllOf {
		rs.walk(path, a, v, out)
	}
	if v == nil {
		if !s.Nullable && s.Type != "" {
			bad("must not be null")
		}
		return
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad("must be an object")
			return
		}
		rs.walkObject(path, s, m, out)
	case "array":
		items, ok := v.([]any)
		if !ok {
			bad("must be an array")
			return
		}
		if p := rs.arrayProblem(path, s, len(items), func(i, j int) bool { return fmt.Sprint(items[i]) == fmt.Sprint(items[j]) }); p != "" {
			bad(p)
		}
		for i, item := range items {
			rs.walk(fmt.Sprintf("%s[%d]", path, i), s.Items, item, out)
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		switch {
		case !ok && s.Type == "integer":
			bad("must be an integer")
		case !ok:
			bad("must be a number")
		case s.Type == "integer" && strings.ContainsAny(string(n), ".eE"):
			bad("must be an integer, written in digits only")
		default:
			if p := rs.numberProblem(s, string(n)); p != "" {
				bad(p)
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			bad("must be a string")
		} else if p := rs.stringProblem(path, s, str); p != "" {
			bad(p)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("must be true or false")
		}
	}
}

func (rs *requestSchemas) walkObject(path string, s *schema, m map[string]any, out *[]petstore.Detail) {
	field := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	for _, name := range s.Required {
		if _, ok := m[name]; !ok {
			*out = append(*out, petstore.Detail{Field: field(name), Problem: "is required"})
		}
	}
	closed := string(s.AdditionalProperties) == "false"
	var extra *schema
	if len(s.AdditionalProperties) > 0 && !closed && string(s.AdditionalProperties) != "true" {
		_ = json.Unmarshal(s.AdditionalProperties, &extra)
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		switch p, ok := s.Properties[name]; {
		case ok:
			rs.walk(field(name), p, m[name], out)
		case closed:
			*out = append(*out, petstore.Detail{Field: field(name), Problem: "is not a known field"})
		case extra != nil:
			rs.walk(field(name), extra, m[name], out)
		}
	}
}

// numberProblem words what is wrong with the number n (as written) by s.
func (rs *requestSchemas) numberProblem(s *schema, n string) string {
	v, ok := new(big.Rat).SetString(n)
	if !ok {
		return "must be a number"
	}
	bound := func(b json.Number) *big.Rat {
		r, ok := new(big.Rat).SetString(string(b))
		if !ok {
			return nil
		}
		return r
	}
	if b := bound(s.Minimum); b != nil && v.Cmp(b) < 0 {
		return "must be at least " + string(s.Minimum)
	}
	if b := bound(s.Maximum); b != nil && v.Cmp(b) > 0 {
		return "must be at most " + string(s.Maximum)
	}
	if s.Type == "integer" {
		bits := 64
		if s.Format == "int32" {
			bits = 32
		}
		if _, err := strconv.ParseInt(n, 10, bits); err != nil {
			return "is out of range"
		}
	}
	if b := bound(s.MultipleOf); b != nil && b.Sign() != 0 && !new(big.Rat).Quo(v, b).IsInt() {
		return "must be a multiple of " + string(s.MultipleOf)
	}
	if !rs.inEnum(s, n) {
		return "is not one of the values the document lists"
	}
	return ""
}

// stringProblem words what is wrong with the string v at path by s.
func (rs *requestSchemas) stringProblem(path string, s *schema, v string) string {
	switch s.Format {
	case "date-time":
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return "must be a date and time (RFC 3339) such as 2026-12-24T10:00:00Z"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return "must be a date (YYYY-MM-DD) such as 2026-12-24"
		}
	case "email":
		if !plausibleEmail(v) {
			return "must be an email address such as ada@example.com"
		}
	}
	n := utf8.RuneCountInString(v)
	if s.MinLength != nil && n < *s.MinLength {
		return lengthProblem(lastField(path), "least", *s.MinLength)
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		return lengthProblem(lastField(path), "most", *s.MaxLength)
	}
	if re := rs.patterns[s.Pattern]; re != nil && !re.MatchString(v) {
		return "has characters that are not allowed here; see the OpenAPI document"
	}
	if q, err := json.Marshal(v); err == nil && !rs.inEnum(s, string(q)) {
		return "is not one of the values the document lists"
	}
	return ""
}

// plausibleEmail is the generated validator's test of an email: an @ neither first nor
// last, and before the last @ either a quoted local part or one of printable
// characters without spaces or another @.
func plausibleEmail(v string) bool {
	at := strings.LastIndexByte(v, '@')
	if at <= 0 || at == len(v)-1 {
		return false
	}
	local := v[:at]
	if len(local) >= 2 && local[0] == '"' && local[len(local)-1] == '"' {
		return true
	}
	return !strings.ContainsFunc(local, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '@' })
}

// inEnum reports whether the JSON value v is one of s's enum, if it has one.
func (rs *requestSchemas) inEnum(s *schema, v string) bool {
	return len(s.Enum) == 0 || slices.ContainsFunc(s.Enum, func(e json.RawMessage) bool { return string(e) == v })
}

// arrayProblem words what is wrong with the length (n) or the repeated items (same
// compares two) of a list at path by s.
func (rs *requestSchemas) arrayProblem(path string, s *schema, n int, same func(i, j int) bool) string {
	if s.MinItems != nil && n < *s.MinItems {
		return lengthProblem(lastField(path), "least", *s.MinItems)
	}
	if s.MaxItems != nil && n > *s.MaxItems {
		return lengthProblem(lastField(path), "most", *s.MaxItems)
	}
	if s.UniqueItems {
		for i := range n {
			for j := range i {
				if same(i, j) {
					return "must not repeat an item"
				}
			}
		}
	}
	return ""
}

// lastField is the name of the field a path ends with: "scopes" of "a.scopes".
func lastField(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// param words what is wrong with the values of parameter name (in: "query",
// "path", "header") of operation op, or "" when the document's schema finds nothing.
func (rs *requestSchemas) param(op, in, name string, values []string) string {
	s := rs.resolve(rs.params[op][in+" "+strings.ToLower(name)])
	if s == nil {
		return ""
	}
	if s.Type != "array" {
		if len(values) > 1 {
			// Like a header sent twice: which one a layer would read is a guess.
			return "must be given once"
		}
		if len(values) == 0 {
			return "is required"
		}
		return rs.scalarProblem(name, s, values[0])
	}
	if p := rs.arrayProblem(name, s, len(values), func(i, j int) bool { return values[i] == values[j] }); p != "" {
		return p
	}
	for _, v := range values {
		if p := rs.scalarProblem(name, rs.resolve(s.Items), v); p != "" {
			return p
		}
	}
	return ""
}

// scalarProblem words what is wrong with a parameter's value v by s.
func (rs *requestSchemas) scalarProblem(name string, s *schema, v string) string {
	if s == nil {
		return ""
	}
	switch s.Type {
	case "integer":
		bits := 64
		if s.Format == "int32" {
			bits = 32
		}
		if _, err := strconv.ParseInt(v, 10, bits); errors.Is(err, strconv.ErrSyntax) {
			return "must be an integer"
		}
		return rs.numberProblem(s, strings.TrimPrefix(v, "+"))
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "must be a number"
		}
		return rs.numberProblem(s, v)
	case "boolean":
		if _, err := strconv.ParseBool(v); err != nil {
			return "must be true or false"
		}
	case "string":
		return rs.stringProblem(name, s, v)
	}
	return ""
}
