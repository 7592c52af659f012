package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestRepeatedKeyFindsTheFirstKeyAnObjectHoldsTwice(t *testing.T) {
	many := func(n int, extra string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		b.WriteString(extra + "}")
		return b.String()
	}
	tests := []struct {
		body, want string
	}{
		{`{"petId":1,"quantity":1}`, ""},
		{`{"petId":1,"quantity":1,"petId":2}`, "petId"},
		{`{"petId":1,"pet\u0049d":2}`, "petId"}, // the same key, once escaped
		{`{"a":{"x":1},"b":{"x":1}}`, ""},       // the same key in two objects
		{`{"category":{"id":1,"id":2}}`, "category.id"},
		{`{"tags":[{"name":"a"},{"name":"b","name":"c"}]}`, "tags[1].name"},
		{`[[{"a":1,"a":1}]]`, "[0][0].a"},
		{`{"a":{"b":{}},"c":1,"a":2}`, "a"}, // a parent's key after a closed child
		{many(100, ""), ""},
		{many(100, `"k7":1`), "k7"}, // past the linear scan
		{`{"a":1,"a":`, ""},         // not JSON: the decoder reports it
		{`{"a":1,"a":2`, ""},        // not JSON after the repeat either
		{`{"a":1,"a":2}garbage`, ""},
		{`"just a string"`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		got, ok := repeatedKey([]byte(tt.body))
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("repeatedKey(%.60s) = %q, %v; want %q", tt.body, got, ok, tt.want)
		}
	}
}

// The check runs on every body, the order's included.
func BenchmarkRepeatedKey(b *testing.B) {
	body := []byte(`{"petId":12345,"quantity":2,"shipDate":"2026-12-01T10:00:00Z"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := repeatedKey(body); ok {
			b.Fatal("found a repeated key")
		}
	}
}

// FuzzRepeatedKey checks repeatedKey against a second reader, encoding/json's token
// stream: on valid JSON they agree on whether some object holds a key twice.
func FuzzRepeatedKey(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `[{"a":1},{"a":1}]`, `{"\u0061":1,"a":2}`, `{"a":[1,{"c":{}}],"b":{"a":1}}`, `{}`, `[]`, `"a"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		_, got := repeatedKey(data)
		if want := repeatedKeyByTokens(t, data); got != want {
			t.Fatalf("repeatedKey(%q) = %v, the token reader says %v", data, got, want)
		}
	})
}

// repeatedKeyByTokens is the second reader: a stack of key sets over the token stream.
func repeatedKeyByTokens(t *testing.T, data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number too large for float64 is still JSON
	type frame struct {
		keys     map[string]bool
		isObject bool
		wantKey  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.isObject && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.wantKey = false
			continue
		}
		if top != nil && top.isObject {
			top.wantKey = true // this token is the member's value (or opens it)
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, isObject: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}
