package httpapi

import (
	"fmt"
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
