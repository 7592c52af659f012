package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

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
}

// Roles are the account roles an operation's x-roles may name.
var Roles = []string{"customer", "admin"}

// Operations lists the operations of Source in document order. Every operation that
// is not open must name its roles: a forgotten x-roles is an error, never an
// operation open to every account.
func Operations() ([]Operation, error) {
	root, err := parse()
	if err != nil {
		return nil, err
	}
	return operations(root)
}

func operations(root *yaml.Node) ([]Operation, error) {
	var (
		ops  []Operation
		errs []error
	)
	walkOperations(root, func(op *yaml.Node) {
		o := Operation{ID: scalar(op, "operationId"), Sunset: scalar(op, "x-deprecated-sunset")}
		if sec := value(op, "security"); sec != nil && sec.Kind == yaml.SequenceNode && len(sec.Content) == 0 {
			o.Open = true
		}
		if roles := value(op, "x-roles"); roles != nil {
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
		ops = append(ops, o)
	})
	return ops, errors.Join(errs...)
}

// Render returns the document with servers[0].url set to serverURL and the sunset
// dates in effect (operation id → YYYY-MM-DD) written into x-deprecated-sunset.
func Render(serverURL string, sunsets map[string]string) (Document, error) {
	root, err := parse()
	if err != nil {
		return Document{}, err
	}
	doc := root.Content[0]
	if servers := value(doc, "servers"); servers != nil && len(servers.Content) > 0 {
		if u := value(servers.Content[0], "url"); u != nil {
			u.Value = serverURL
		}
	}
	walkOperations(root, func(op *yaml.Node) {
		if date, ok := sunsets[scalar(op, "operationId")]; ok {
			if n := value(op, "x-deprecated-sunset"); n != nil {
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
	if err := writeJSON(&j, doc); err != nil {
		return Document{}, fmt.Errorf("render json: %w", err)
	}
	return Document{YAML: y.Bytes(), JSON: j.Bytes()}, nil
}

func parse() (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(Source, &root); err != nil {
		return nil, fmt.Errorf("parse openapi.yaml: %w", err)
	}
	if len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("parse openapi.yaml: not a mapping")
	}
	return &root, nil
}

var methods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true}

func walkOperations(root *yaml.Node, fn func(op *yaml.Node)) {
	paths := value(root.Content[0], "paths")
	if paths == nil {
		return
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		item := paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			if m := item.Content[j].Value; methods[m] {
				fn(item.Content[j+1])
			}
		}
	}
}

// value returns the value node of key in mapping m, or nil.
func value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalar(m *yaml.Node, key string) string {
	if v := value(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// writeJSON writes a YAML node as JSON, keeping the order of mapping keys (a map
// would sort them, and the order of a document is part of how people read it).
func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		return writeJSON(b, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		switch n.Tag {
		case "!!int", "!!float":
			f, err := strconv.ParseFloat(n.Value, 64)
			if err != nil {
				return err
			}
			v = json.Number(strconv.FormatFloat(f, 'f', -1, 64))
		case "!!bool":
			v = n.Value == "true"
		case "!!null":
			v = nil
		default:
			v = n.Value
		}
		s, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(s)
	}
	return nil
}
