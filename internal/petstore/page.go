package petstore

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Pagination defaults of the contract.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Page selects one page of a list ordered by id: at most Limit items with an id
// greater than After.
type Page struct {
	Limit int
	After int64
}

// Size is the number of items the page holds: Limit, or DefaultLimit when unset.
func (p Page) Size() int {
	if p.Limit <= 0 {
		return DefaultLimit
	}
	return p.Limit
}

// cursorPrefix versions the cursor format so that it can change without old cursors
// being misread.
const cursorPrefix = "c1:"

// EncodeCursor makes the opaque cursor of the page that follows the item with id last.
func EncodeCursor(last int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatInt(last, 10)))
}

// DecodeCursor reads a cursor made by EncodeCursor. An empty cursor is the first page.
// A cursor is accepted only as EncodeCursor spells it: base64 has other spellings of
// the same bytes (padding bits, line breaks it skips), and a client must not be able
// to make one cursor into many.
func DecodeCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, errBadCursor
	}
	rest, ok := strings.CutPrefix(string(raw), cursorPrefix)
	if !ok {
		return 0, errBadCursor
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || id < 1 || EncodeCursor(id) != s {
		return 0, errBadCursor
	}
	return id, nil
}

var errBadCursor = Invalid("cursor", "is not a cursor this service made; copy it from a Link header")
