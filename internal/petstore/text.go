package petstore

import (
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of the contract.
const (
	MaxName          = 100
	MaxDescription   = 500
	MaxEmail         = 254
	MinPassword      = 12
	MaxPassword      = 128
	MaxMessage       = 2000
	MaxOrderQuantity = 100
	MaxStock         = 1_000_000
)

// CleanName trims surrounding white space from a name and checks that what is left
// is 1–100 characters without control characters. field names the field in the error.
func CleanName(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxName {
		return "", Invalid(field, "must be 1 to 100 characters (after trimming white space)")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", Invalid(field, "must not contain control characters")
	}
	return s, nil
}

// CleanEmail checks that s is a plain email address (no display name) of at most 254
// characters, and returns it trimmed and in Unicode normalization form NFKC, so that
// look-alike spellings (a KELVIN SIGN for a K, full-width letters) are the address
// they look like, not another one.
func CleanEmail(s string) (string, error) {
	if !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", Invalid("email", "must be an email address such as ada@example.com")
	}
	s = norm.NFKC.String(strings.TrimSpace(s))
	if utf8.RuneCountInString(s) > MaxEmail {
		return "", Invalid("email", "must be at most 254 characters")
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || addr.Name != "" {
		return "", Invalid("email", "must be an email address such as ada@example.com")
	}
	return s, nil
}

// EmailKey is what makes an email unique: its NFKC form in lower case. Two addresses
// with one key are one account; stores look accounts up by it.
func EmailKey(email string) string {
	return strings.ToLower(norm.NFKC.String(email))
}

// CheckPassword checks the length rules of a password; it does not trim it.
func CheckPassword(s string) error {
	if n := utf8.RuneCountInString(s); n < MinPassword || n > MaxPassword {
		return Invalid("password", "must be 12 to 128 characters")
	}
	return nil
}

// CheckMessage checks the text of a getting-started message: 1–2,000 characters, and
// no NUL (which not every database can store).
func CheckMessage(s string) error {
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxMessage {
		return Invalid("message", "must be 1 to 2000 characters")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return Invalid("message", "must not contain NUL characters")
	}
	return nil
}
