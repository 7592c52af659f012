package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/go-faster/jx"
)

// strictBody is a request body that refuses JSON the generated decoders would read
// silently as something else:
//
//   - a repeated object key. The decoders keep the last of two values, and other
//     readers (a proxy, an audit log, another language's parser) may keep the first:
//     a body that means two things is refused instead (RFC 8259 §4 leaves the meaning
//     undefined).
//   - a lone surrogate escape in a string ("\ud800", a high one not followed by a low
//     one or a low one alone). It is no character, and the decoders keep U+FFFD in
//     its place: text would be stored as other than sent, where invalid UTF-8 sent as
//     bytes is refused (petstore.CheckText). RFC 8259 §8.2 leaves it to the receiver.
//
// It checks when the reader meets the end of the body, so the check runs where the
// generated server reads the body: after authentication, and its error arrives with
// the other decoding errors (classifyDecodeError). Bodies that are not valid JSON pass
// through unchanged; the decoder reports them.
type strictBody struct {
	r    io.ReadCloser
	seen []byte
}

func (b *strictBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.seen = append(b.seen, p[:n]...)
	if err == io.EOF {
		if err := scanBody(b.seen, true); err != nil {
			return n, err
		}
	}
	return n, err
}

func (b *strictBody) Close() error { return b.r.Close() }

// repeatedKeyError reports the path of a key that appears twice in one object.
type repeatedKeyError struct{ field string }

func (e *repeatedKeyError) Error() string { return "repeated JSON key " + strconv.Quote(e.field) }

// loneSurrogateError reports the path of a string that holds a lone surrogate escape,
// and the escape (\ud800).
type loneSurrogateError struct{ field, escape string }

func (e *loneSurrogateError) Error() string {
	return "lone surrogate " + e.escape + " in " + strconv.Quote(e.field)
}

// repeatedKey reports the first object key of data that its object holds twice,
// as a path such as "category.name" or "tags[1].name". Invalid JSON reports none.
func repeatedKey(data []byte) (string, bool) {
	var r *repeatedKeyError
	if errors.As(scanBody(data, false), &r) {
		return r.field, true
	}
	return "", false
}

// scanBody reports the first repeated key (*repeatedKeyError) of data or, when
// surrogates is set, the first lone surrogate escape (*loneSurrogateError), whichever
// comes first. Invalid JSON reports neither.
func scanBody(data []byte, surrogates bool) error {
	var (
		arena [128]byte
		ends  [8]int
	)
	k := keyScan{arena: arena[:0], ends: ends[:0], surrogates: surrogates}
	d := jx.GetDecoder()
	defer jx.PutDecoder(d)
	d.ResetBytes(data)
	err := k.value(d, "")
	if err == nil {
		return nil
	}
	// jx wraps the error. The walk stops at the finding; a body that is not JSON after
	// it is the decoder's to report (invalid_json), so the rest is checked on this
	// rare path.
	var (
		r *repeatedKeyError
		l *loneSurrogateError
	)
	switch {
	case errors.As(err, &r) && json.Valid(data):
		return r
	case errors.As(err, &l) && json.Valid(data):
		if l.field == "" {
			l.field = "body" // the body is a string, which no operation takes
		}
		return l
	}
	return nil
}

// keyScan walks a JSON value and remembers, per open object, the keys met so far in
// one arena, so that a walk allocates only when the arena grows.
type keyScan struct {
	arena []byte
	ends  []int // ends[i] is where key i ends in arena; the keys of an object are contiguous
	// surrogates: also look for lone surrogate escapes in strings.
	surrogates bool
}

// linearKeys is how many keys an object may have before they are looked up in a map
// rather than compared one by one (a large object must not cost n² comparisons).
const linearKeys = 32

func (k *keyScan) value(d *jx.Decoder, path string) error {
	switch d.Next() {
	case jx.Object:
		first := len(k.ends)
		var index map[string]struct{}
		err := d.ObjBytes(func(d *jx.Decoder, key []byte) error {
			if k.has(first, index, key) {
				return &repeatedKeyError{field: join(path, string(key))}
			}
			if n := len(k.ends) - first; n >= linearKeys {
				if index == nil {
					index = make(map[string]struct{}, 2*n)
					for i := first; i < len(k.ends); i++ {
						index[string(k.key(i))] = struct{}{}
					}
				}
				index[string(key)] = struct{}{}
			}
			k.arena = append(k.arena, key...)
			k.ends = append(k.ends, len(k.arena))
			err := k.value(d, joinLazy(path, key, d))
			if err != nil {
				placeLone(err, func() string { return join(path, string(key)) })
			}
			return err
		})
		// The keys of a closed object are no longer needed.
		if first > 0 {
			k.arena = k.arena[:k.ends[first-1]]
		} else {
			k.arena = k.arena[:0]
		}
		k.ends = k.ends[:first]
		return err
	case jx.Array:
		i := 0
		return d.Arr(func(d *jx.Decoder) error {
			var elem string
			if t := d.Next(); t == jx.Object || t == jx.Array {
				elem = path + "[" + strconv.Itoa(i) + "]"
			}
			err := k.value(d, elem)
			if err != nil {
				placeLone(err, func() string { return path + "[" + strconv.Itoa(i) + "]" })
			}
			i++
			return err
		})
	case jx.String:
		if !k.surrogates {
			return d.Skip()
		}
		raw, err := d.Raw()
		if err != nil {
			return err
		}
		if esc, ok := loneSurrogate(raw); ok {
			return &loneSurrogateError{escape: esc}
		}
		return nil
	default:
		return d.Skip()
	}
}

// placeLone gives a lone surrogate found in a string its field, the path of the
// string: only objects' and arrays' paths are made on the way down.
func placeLone(err error, field func() string) {
	var l *loneSurrogateError
	if errors.As(err, &l) && l.field == "" {
		l.field = field()
	}
}

// loneSurrogate returns the first lone surrogate escape of raw, a JSON string as sent
// (quotes and escapes included): \uD800–\uDBFF not followed by an escape of
// \uDC00–\uDFFF, or one of those alone.
func loneSurrogate(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return "", false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped character: a second backslash is text, not an escape
		u, ok := hex4(raw, i)
		if !ok {
			continue
		}
		esc := string(raw[i-1 : i+5])
		i += 4 // the last hex digit
		switch {
		case u >= 0xDC00 && u <= 0xDFFF:
			return esc, true
		case u >= 0xD800 && u <= 0xDBFF:
			if low, ok := hex4(raw, i+2); ok && raw[i+1] == '\\' && low >= 0xDC00 && low <= 0xDFFF {
				i += 6
				continue
			}
			return esc, true
		}
	}
	return "", false
}

// hex4 reads the escape \uXXXX whose u is raw[i]: its code unit, and whether it is one.
func hex4(raw []byte, i int) (rune, bool) {
	if i+5 > len(raw) || raw[i] != 'u' {
		return 0, false
	}
	var u rune
	for _, c := range raw[i+1 : i+5] {
		switch {
		case c >= '0' && c <= '9':
			u = u<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			u = u<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			u = u<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return u, true
}

func (k *keyScan) key(i int) []byte {
	start := 0
	if i > 0 {
		start = k.ends[i-1]
	}
	return k.arena[start:k.ends[i]]
}

func (k *keyScan) has(first int, index map[string]struct{}, key []byte) bool {
	if index != nil {
		_, ok := index[string(key)]
		return ok
	}
	for i := first; i < len(k.ends); i++ {
		if bytes.Equal(k.key(i), key) {
			return true
		}
	}
	return false
}

// joinLazy is the path of a member's value. Only objects and arrays need it (a scalar
// cannot hold a repeated key), so other members cost no string.
func joinLazy(path string, key []byte, d *jx.Decoder) string {
	if t := d.Next(); t != jx.Object && t != jx.Array {
		return ""
	}
	return join(path, string(key))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
