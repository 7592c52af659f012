// Command ogeninput runs ogen on the OpenAPI document minus the response headers that
// middleware sets on every response (header components marked `x-middleware: true`,
// the rate-limit headers), and minus the operations marked `x-handwritten: true`.
//
// A handwritten operation (getPhoto) is served by a handler of httpapi's own, held to
// the document by its tests: serving bytes with ETag, 304 and Range is what
// http.ServeContent does, and a generated handler would do it again, worse.
//
// The document declares those headers on every response, because clients see them
// there. Declared to ogen, each would become a field of a generated …Headers wrapper
// around every answer, which each handler would have to fill from a value only the
// middleware knows, and which would wrap (and allocate) every answer of every
// operation. So ogen gets the document without them, and the middleware writes them.
// Everything else ogen sees is the document as written.
//
// Usage: go run ./internal/ogeninput openapi.yaml -- ogen-command [args...]; the
// filtered document's path is appended to the command.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/acme-pets/petstore/api"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ogeninput:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return errors.New("usage: ogeninput DOCUMENT -- COMMAND [ARGS...]")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	root, err := api.ParseTree(data)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	dropHandwritten(root)
	n, err := stripMiddlewareHeaders(root)
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("no response header refers to an x-middleware header; is this still needed?")
	}
	var b bytes.Buffer
	if err := api.WriteJSON(&b, root); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ogeninput-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	input := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(input, b.Bytes(), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(args[2], append(args[3:], input)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// dropHandwritten removes the operations marked x-handwritten, and a path left with
// none.
func dropHandwritten(root *yaml.Node) {
	paths := api.Value(root.Content[0], "paths")
	kept := paths.Content[:0]
	for i := 0; i+1 < len(paths.Content); i += 2 {
		item := paths.Content[i+1]
		ops := 0
		for j := 0; j+1 < len(item.Content); j += 2 {
			if op := item.Content[j+1]; api.IsTrue(op, "x-handwritten") {
				item.Content = append(item.Content[:j], item.Content[j+2:]...)
				j -= 2
			} else if item.Content[j].Value != "parameters" {
				ops++
			}
		}
		if ops > 0 {
			kept = append(kept, paths.Content[i], item)
		}
	}
	paths.Content = kept
}

// stripMiddlewareHeaders removes, from every response, the headers that refer to a
// header component marked x-middleware, and reports how many it removed.
func stripMiddlewareHeaders(root *yaml.Node) (int, error) {
	doc := root.Content[0]
	components := api.Value(api.Value(doc, "components"), "headers")
	marked := map[string]bool{}
	for i := 0; i+1 < len(components.Content); i += 2 {
		if api.IsTrue(components.Content[i+1], "x-middleware") {
			marked["#/components/headers/"+components.Content[i].Value] = true
		}
	}
	removed := 0
	strip := func(response *yaml.Node) error {
		headers := api.Value(response, "headers")
		if headers == nil {
			return nil
		}
		kept := headers.Content[:0]
		for i := 0; i+1 < len(headers.Content); i += 2 {
			ref := api.Scalar(headers.Content[i+1], "$ref")
			if marked[ref] {
				removed++
				continue
			}
			if ref == "" && api.IsTrue(headers.Content[i+1], "x-middleware") {
				return fmt.Errorf("header %s: declare a middleware header as a component and refer to it", headers.Content[i].Value)
			}
			kept = append(kept, headers.Content[i], headers.Content[i+1])
		}
		headers.Content = kept
		if len(kept) == 0 {
			deleteKey(response, "headers")
		}
		return nil
	}
	var err error
	eachResponses := func(responses *yaml.Node) {
		for i := 0; responses != nil && i+1 < len(responses.Content); i += 2 {
			if e := strip(responses.Content[i+1]); e != nil && err == nil {
				err = e
			}
		}
	}
	api.WalkOperations(root, func(path, method string, op *yaml.Node) {
		eachResponses(api.Value(op, "responses"))
	})
	eachResponses(api.Value(api.Value(doc, "components"), "responses"))
	return removed, err
}

func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
