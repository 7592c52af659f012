package api

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Source is the OpenAPI document as committed: servers[0] is the default local
// address and each deprecated operation carries its default sunset date.
//
//go:embed openapi.yaml
var Source []byte

// Document is the OpenAPI document as one server serves it.
type Document struct {
	YAML []byte
	JSON []byte
}

// Operation is what the document says of one operation that the server needs at run
// time.
type Operation struct {
	ID string
	// Sunset is the x-deprecated-sunset date (YYYY-MM-DD), if any.
	Sunset string
	// Open is set for an operation anyone may call (security: []).
	Open bool
	// Roles are the account roles that may call the operation (x-roles); empty when
	// it is open.
	Roles []string
	// Scope is the scope an API key needs for the operation (its one x-scopes entry,
	// one of the bearerAuth scheme's); empty when it is open.
	Scope string
	// IDs is set when the operation takes a list of ids in the query (ids), which
	// the service also reads comma-separated.
	IDs bool
	// OwnKeyParam, when set (x-scopes-own-key), names the path parameter that holds
	// an API key's id: when it is the calling key's own, the key needs no scope for
	// the operation (a key may always revoke itself, as a sign-out does). OwnKeyArg is
	// that parameter's position among the path's parameters.
	OwnKeyParam string
	OwnKeyArg   int
}

// Scope is a scope an API key may be limited to, as the bearerAuth scheme's x-scopes
// lists it.
type Scope struct {
	Name        string
	Description string
}

// Roles are the account roles an operation's x-roles may name.
var Roles = []string{"customer", "admin"}

// Operations lists the operations of Source in document order. Every operation that
// is not open must name its roles and its one scope: a forgotten x-roles or x-scopes is
// an error, never an operation open to every account or every key.
func Operations() ([]Operation, error) {
	root, err := parse()
	if err != nil {
		return nil, err
	}
	return operations(root)
}

// Scopes lists the scopes of Source's bearerAuth scheme (its x-scopes), in document
// order.
func Scopes() ([]Scope, error) {
	root, err := parse()
	if err != nil {
		return nil, err
	}
	return scopes(root), nil
}

func scopes(root *yaml.Node) []Scope {
	schemes := Value(Value(root.Content[0], "components"), "securitySchemes")
	m := Value(Value(schemes, "bearerAuth"), "x-scopes")
	if m == nil {
		return nil
	}
	list := make([]Scope, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		list = append(list, Scope{Name: m.Content[i].Value, Description: m.Content[i+1].Value})
	}
	return list
}

// RoleScopes is what each role's keys may hold: a role allows a scope when it may call
// one of that scope's operations.
func RoleScopes(ops []Operation) map[string][]string {
	allowed := make(map[string][]string, len(Roles))
	for _, op := range ops {
		for _, r := range op.Roles {
			if !slices.Contains(allowed[r], op.Scope) {
				allowed[r] = append(allowed[r], op.Scope)
			}
		}
	}
	return allowed
}

func operations(root *yaml.Node) ([]Operation, error) {
	var (
		ops   []Operation
		errs  []error
		known = scopes(root)
	)
	WalkOperations(root, func(path, _ string, op *yaml.Node) {
		o := Operation{ID: Scalar(op, "operationId"), Sunset: Scalar(op, "x-deprecated-sunset"), IDs: takesIDs(root, op)}
		if name := Scalar(op, "x-scopes-own-key"); name != "" {
			o.OwnKeyParam, o.OwnKeyArg = name, slices.Index(pathParams(path), name)
			if o.OwnKeyArg < 0 {
				errs = append(errs, fmt.Errorf("operation %s: x-scopes-own-key names %q, not a parameter of its path %s", o.ID, name, path))
			}
		}
		if list := Value(op, "x-scopes"); list != nil {
			for _, sc := range list.Content {
				if !slices.ContainsFunc(known, func(k Scope) bool { return k.Name == sc.Value }) {
					errs = append(errs, fmt.Errorf("operation %s: x-scopes names %q, which bearerAuth's x-scopes does not list", o.ID, sc.Value))
				}
			}
			if len(list.Content) != 1 {
				errs = append(errs, fmt.Errorf("operation %s: x-scopes must name exactly one scope", o.ID))
			} else {
				o.Scope = list.Content[0].Value
			}
		}
		if sec := Value(op, "security"); sec != nil && sec.Kind == yaml.SequenceNode && len(sec.Content) == 0 {
			o.Open = true
		}
		if roles := Value(op, "x-roles"); roles != nil {
			for _, r := range roles.Content {
				if !slices.Contains(Roles, r.Value) {
					errs = append(errs, fmt.Errorf("operation %s: x-roles names %q, not one of %v", o.ID, r.Value, Roles))
				}
				o.Roles = append(o.Roles, r.Value)
			}
		}
		switch {
		case o.Open && len(o.Roles) > 0:
			errs = append(errs, fmt.Errorf("operation %s is open to all (security: []) but names x-roles", o.ID))
		case !o.Open && len(o.Roles) == 0:
			errs = append(errs, fmt.Errorf("operation %s names no x-roles: say which roles may call it", o.ID))
		}
		switch {
		case o.Open && o.Scope != "":
			errs = append(errs, fmt.Errorf("operation %s is open to all (security: []) but names x-scopes", o.ID))
		case !o.Open && o.Scope == "" && Value(op, "x-scopes") == nil:
			errs = append(errs, fmt.Errorf("operation %s names no x-scopes: say which scope a key needs for it", o.ID))
		}
		ops = append(ops, o)
	})
	return ops, errors.Join(errs...)
}

// pathParams lists the names of a path template's parameters, in order.
func pathParams(path string) []string {
	var names []string
	for rest := path; ; {
		open := strings.Index(rest, "{")
		end := strings.Index(rest, "}")
		if open < 0 || end < open {
			return names
		}
		names = append(names, rest[open+1:end])
		rest = rest[end+1:]
	}
}

// Render returns the document with servers[0].url set to serverURL and the sunset
// dates in effect (operation id → YYYY-MM-DD) written into x-deprecated-sunset.
func Render(serverURL string, sunsets map[string]string) (Document, error) {
	root, err := parse()
	if err != nil {
		return Document{}, err
	}
	doc := root.Content[0]
	if servers := Value(doc, "servers"); servers != nil && len(servers.Content) > 0 {
		if u := Value(servers.Content[0], "url"); u != nil {
			u.Value = serverURL
		}
	}
	WalkOperations(root, func(_, _ string, op *yaml.Node) {
		if date, ok := sunsets[Scalar(op, "operationId")]; ok {
			if n := Value(op, "x-deprecated-sunset"); n != nil {
				n.Value = date
			}
		}
	})
	var y bytes.Buffer
	enc := yaml.NewEncoder(&y)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return Document{}, fmt.Errorf("render yaml: %w", err)
	}
	var j bytes.Buffer
	if err := WriteJSON(&j, doc); err != nil {
		return Document{}, fmt.Errorf("render json: %w", err)
	}
	return Document{YAML: y.Bytes(), JSON: j.Bytes()}, nil
}

func parse() (*yaml.Node, error) {
	root, err := ParseTree(Source)
	if err != nil {
		return nil, fmt.Errorf("parse openapi.yaml: %w", err)
	}
	return root, nil
}

// takesIDs reports whether op has the query parameter ids, given in place or by a
// $ref to the document's components.parameters.
func takesIDs(root, op *yaml.Node) bool {
	list := Value(op, "parameters")
	if list == nil {
		return false
	}
	params := Value(Value(root.Content[0], "components"), "parameters")
	for _, p := range list.Content {
		if ref, ok := strings.CutPrefix(Scalar(p, "$ref"), "#/components/parameters/"); ok {
			p = Value(params, ref)
		}
		if Scalar(p, "name") == "ids" && Scalar(p, "in") == "query" {
			return true
		}
	}
	return false
}
