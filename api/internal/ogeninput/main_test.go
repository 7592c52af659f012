package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acme-pets/petstore/api"
)

const doc = `openapi: 3.0.3
paths:
  /pets:
    get:
      responses:
        '200':
          description: A page.
          headers:
            Link:
              $ref: '#/components/headers/Link'
            RateLimit:
              $ref: '#/components/headers/RateLimit'
        '204':
          description: Nothing.
          headers:
            RateLimit:
              $ref: '#/components/headers/RateLimit'
components:
  headers:
    Link:
      schema: {type: string}
    RateLimit:
      x-middleware: true
      schema: {type: string}
  responses:
    Error:
      description: An error.
      headers:
        Retry-After:
          $ref: '#/components/headers/Link'
        RateLimit:
          $ref: '#/components/headers/RateLimit'
`

func TestStripMiddlewareHeaders(t *testing.T) {
	root, err := api.ParseTree([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	n, err := stripMiddlewareHeaders(root)
	if err != nil || n != 3 {
		t.Fatalf("removed %d headers (err %v), want 3", n, err)
	}
	var b bytes.Buffer
	if err := api.WriteJSON(&b, root); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		`"200":{"description":"A page.","headers":{"Link":{"$ref":"#/components/headers/Link"}}}`,
		`"204":{"description":"Nothing."}`, // no empty headers map left behind
		`"Error":{"description":"An error.","headers":{"Retry-After":{"$ref":"#/components/headers/Link"}}}`,
		`"RateLimit":{"x-middleware":true`, // the component itself stays
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the filtered document lacks %s:\n%s", want, got)
		}
	}
}

func TestAnInlineMiddlewareHeaderIsAnError(t *testing.T) {
	inline := strings.Replace(doc, "            RateLimit:\n              $ref: '#/components/headers/RateLimit'\n        '204'",
		"            RateLimit:\n              x-middleware: true\n              schema: {type: string}\n        '204'", 1)
	root, err := api.ParseTree([]byte(inline))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stripMiddlewareHeaders(root); err == nil || !strings.Contains(err.Error(), "RateLimit") {
		t.Fatalf("err = %v, want one naming the inline RateLimit header", err)
	}
}
