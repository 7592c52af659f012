package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"gopkg.in/yaml.v3"
)

// The document as a tree that keeps the order of its keys: the order of paths and
// operations is the order readers and the reference page see. Every reader of the
// document (Operations, Render, the docs page) walks it with these helpers; yaml.v3
// reads JSON too, so one tree serves both forms.

// ParseTree reads a document, YAML or JSON, whose top level is a mapping.
func ParseTree(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	if len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the document is not a mapping")
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trailing data after the document")
	}
	return &root, nil
}

// Methods are the keys of a path item that hold operations.
var Methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// WalkOperations calls fn for every operation of the document root, in document
// order, with its path and method.
func WalkOperations(root *yaml.Node, fn func(path, method string, op *yaml.Node)) {
	paths := Value(root.Content[0], "paths")
	if paths == nil {
		return
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		item := paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			if m := item.Content[j].Value; isMethod(m) {
				fn(paths.Content[i].Value, m, item.Content[j+1])
			}
		}
	}
}

func isMethod(s string) bool {
	for _, m := range Methods {
		if m == s {
			return true
		}
	}
	return false
}

// Value returns the value node of key in mapping m, or nil.
func Value(m *yaml.Node, key string) *yaml.Node {
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

// Scalar returns the scalar value of key in mapping m, or "".
func Scalar(m *yaml.Node, key string) string {
	if v := Value(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// IsTrue reports whether key in mapping m holds the boolean true.
func IsTrue(m *yaml.Node, key string) bool {
	v := Value(m, key)
	return v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!bool" && v.Value == "true"
}

// Set replaces the value of key in mapping m, or appends the pair when key is new.
func Set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, String(key), v)
}

// String is a string scalar node.
func String(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// Mapping is a mapping node of string keys and values, in the order given (k1, v1, k2, v2…).
func Mapping(pairs ...string) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(pairs); i += 2 {
		m.Content = append(m.Content, String(pairs[i]), String(pairs[i+1]))
	}
	return m
}

// WriteJSON writes a node as JSON, keeping the order of mapping keys (a map would
// sort them, and the order of a document is part of how people read it).
func WriteJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		return WriteJSON(b, n.Content[0])
	case yaml.AliasNode:
		return WriteJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := WriteJSON(b, n.Content[i+1]); err != nil {
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
			if err := WriteJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		switch n.Tag {
		case "!!int", "!!float":
			if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
				v = json.Number(strconv.FormatInt(i, 10)) // exact, however large
				break
			}
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
