package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/go-faster/jx"
)

// strictBody is a request body that refuses JSON with a repeated object key. The
// generated decoders keep the last of two values, and other readers (a proxy, an audit
// log, another language's parser) may keep the first: a body that means two things is
// refused instead (RFC 8259 §4 leaves the meaning undefined).
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
		if field, ok := repeatedKey(b.seen); ok {
			return n, &repeatedKeyError{field: field}
		}
	}
	return n, err
}

func (b *strictBody) Close() error { return b.r.Close() }

// repeatedKeyError reports the path of a key that appears twice in one object.
type repeatedKeyError struct{ field string }

func (e *repeatedKeyError) Error() string { return "repeated JSON key " + strconv.Quote(e.field) }

// repeatedKey reports the first object key of data that its object holds twice,
// as a path such as "category.name" or "tags[1].name". Invalid JSON reports none.
func repeatedKey(data []byte) (string, bool) {
	var (
		arena [128]byte
		ends  [8]int
	)
	k := keyScan{arena: arena[:0], ends: ends[:0]}
	d := jx.GetDecoder()
	defer jx.PutDecoder(d)
	d.ResetBytes(data)
	var r *repeatedKeyError
	if err := k.value(d, ""); errors.As(err, &r) && json.Valid(data) { // jx wraps it
		// The walk stops at the repeat; a body that is not JSON after it is the
		// decoder's to report (invalid_json), so the rest is checked on this rare path.
		return r.field, true
	}
	return "", false
}

// keyScan walks a JSON value and remembers, per open object, the keys met so far in
// one arena, so that a walk allocates only when the arena grows.
type keyScan struct {
	arena []byte
	ends  []int // ends[i] is where key i ends in arena; the keys of an object are contiguous
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
			return k.value(d, joinLazy(path, key, d))
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
			i++
			return k.value(d, elem)
		})
	default:
		return d.Skip()
	}
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
