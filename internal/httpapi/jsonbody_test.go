package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
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

func TestLoneSurrogateFindsAnEscapeThatIsNoCharacter(t *testing.T) {
	tests := []struct {
		body, field, escape string
	}{
		{`{"name":"Rex \ud83d\udc36"}`, "", ""}, // a pair is a character
		{`{"name":"Rex \uD83D\uDC36"}`, "", ""}, // in capitals too
		{`{"name":"\u00e9\u200b"}`, "", ""},
		{`{"name":"Rex \\ud800"}`, "", ""}, // an escaped backslash, then text
		{`{"name":"\ud800"}`, "name", `\ud800`},
		{`{"name":"Rex\udc36"}`, "name", `\udc36`},          // a low one alone
		{`{"name":"\ud83d\u0041"}`, "name", `\ud83d`},       // a high one before another escape
		{`{"name":"\ud83d\ud83d\udc36"}`, "name", `\ud83d`}, // two high ones
		{`{"name":"\ud83d\udc36\udc36"}`, "name", `\udc36`}, // a pair, then a low one
		{`{"name":"x\ud83d"}`, "name", `\ud83d`},            // at the end
		{`{"name":"\ud83d\n\udc36"}`, "name", `\ud83d`},     // something between
		{`{"a":1,"tags":[{"name":"ok"},{"name":"\udfff"}]}`, "tags[1].name", `\udfff`},
		{`{"scopes":["pets:read","\ud800"]}`, "scopes[1]", `\ud800`},
		{`{"category":{"name":"\ud800"}}`, "category.name", `\ud800`},
		{`"\ud800"`, "body", `\ud800`},
		{`{"name":"\ud800"`, "", ""}, // not JSON: the decoder reports it
	}
	for _, tt := range tests {
		err := scanBody([]byte(tt.body), true)
		var l *loneSurrogateError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("scanBody(%s) = %v; want nothing", tt.body, err)
		case tt.field != "" && (!errors.As(err, &l) || l.field != tt.field || l.escape != tt.escape):
			t.Errorf("scanBody(%s) = %v; want %s in %s", tt.body, err, tt.escape, tt.field)
		}
	}
	// Whichever comes first is reported.
	if err := scanBody([]byte(`{"a":"\ud800","a":1}`), true); !strings.Contains(fmt.Sprint(err), "lone surrogate") {
		t.Errorf("a lone surrogate before a repeat: %v", err)
	}
	if _, ok := repeatedKey([]byte(`{"a":"\ud800","a":1}`)); !ok {
		t.Error("repeatedKey stopped at a lone surrogate")
	}
}

// FuzzLoneSurrogate checks scanBody against a second reader, encoding/json, which
// also decodes a lone surrogate as U+FFFD: on valid UTF-8 JSON without U+FFFD of its
// own and without a repeated key, a string value holds a lone surrogate escape
// exactly when its decoded value holds U+FFFD.
func FuzzLoneSurrogate(f *testing.F) {
	for _, s := range []string{`{"a":"\ud800"}`, `{"a":"\ud83d\udc36"}`, `["\udc36",{"b":"\\ud800"}]`, `{"a":{"b":["x\ud83dy"]}}`, `"\uDBFF\uDFFF"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) || bytes.ContainsRune(data, utf8.RuneError) ||
			bytes.Contains(bytes.ToLower(data), []byte(`\ufffd`)) {
			return
		}
		if _, repeated := repeatedKey(data); repeated {
			return // the second reader keeps one of the values
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("valid JSON does not decode: %v", err)
		}
		var l *loneSurrogateError
		got := errors.As(scanBody(data, true), &l)
		if want := holdsReplacement(v); got != want {
			t.Fatalf("scanBody(%q) found a lone surrogate: %v; encoding/json decodes U+FFFD: %v", data, got, want)
		}
	})
}

// holdsReplacement reports whether a string value of v (not an object's key) holds
// U+FFFD.
func holdsReplacement(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, utf8.RuneError)
	case []any:
		for _, e := range v {
			if holdsReplacement(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if holdsReplacement(e) {
				return true
			}
		}
	}
	return false
}

// The check runs on every body, the order's included.
func BenchmarkRepeatedKey(b *testing.B) {
	body := []byte(`{"petId":12345,"quantity":2,"shipDate":"2026-12-01T10:00:00Z"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := scanBody(body, true); err != nil {
			b.Fatal(err)
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
