package petstore

import (
	"fmt"
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

// The text policy: every string the service keeps is valid UTF-8 without NUL (which
// PostgreSQL cannot store, and which no client expects). Beyond that each kind of
// field has the rules its readers need:
//
//   - Names (CleanName), shown in lists and consoles: no control characters, no
//     bidirectional embeddings, overrides or isolates (which make a name display as
//     something else), something visible, and no invisible character (isInvisible:
//     "Rex" and "Rex" with a zero-width space are two categories that look like one)
//     but those that are part of what a name shows (showsInName: a joiner after a
//     virama, and the joiners and selectors of emoji).
//   - Addresses (CheckAddress: URLs, a sign-up's email), copied and compared rather
//     than read: no control characters at all (a newline or an ESC in a URL is an
//     attack on whatever logs or shows it), no bidirectional controls and no
//     bidirectional marks either (U+200E, U+200F, U+061C: invisible, and in an
//     address they only change how it looks), and no invisible character at all: an
//     address with one is a mistake or a look-alike of another (the admin's email
//     and a zero-width space would be a new account that shows as the admin).
//   - Free text (CheckFreeText: descriptions, messages), read as prose: line breaks
//     (LF, or CR LF as a browser's text area sends it) and tabs are kept as sent; no
//     other control character (ESC, a lone CR, C1, DEL), which would forge log lines
//     or drive a terminal, and no bidirectional embeddings, overrides or isolates.
//     Marks are allowed: text that mixes Arabic or Hebrew with Latin needs them, and
//     they cannot reorder a whole stretch of text as an override does. So are the
//     other invisible characters: prose needs joiners (emoji, Persian, Indic
//     scripts) and nothing is looked up or told apart by its descriptions.
//   - Passwords (CheckPassword): only the rule every string follows. They are never
//     shown or kept (only their hash is), and refusing characters a password manager
//     may make would only weaken them.

// CheckText applies the policy every kept string follows: valid UTF-8, no NUL. field
// names the field in the error.
func CheckText(field, s string) error {
	if !utf8.ValidString(s) {
		return Invalid(field, "must be valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return Invalid(field, "must not contain NUL characters")
	}
	return nil
}

// CheckAddress applies the text policy of addresses (URLs, emails): no control
// characters, tabs and line breaks included, and no bidirectional controls or marks.
// The address's own syntax is its checker's business.
func CheckAddress(field, s string) error {
	if err := CheckText(field, s); err != nil {
		return err
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return Invalid(field, "must not contain control characters")
	}
	if strings.IndexFunc(s, func(r rune) bool { return isBidiControl(r) || isBidiMark(r) }) >= 0 {
		return Invalid(field, "must not contain bidirectional embedding, override, isolate or mark characters")
	}
	if strings.IndexFunc(s, isLineSeparator) >= 0 {
		return Invalid(field, "must not contain line or paragraph separators")
	}
	if i := strings.IndexFunc(s, isInvisible); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return Invalid(field, invisibleProblem(r))
	}
	return nil
}

// CheckFreeText applies the text policy of free text (descriptions, messages): line
// breaks (LF, CR LF) and tabs are kept, no other control character is, and no
// bidirectional embeddings, overrides or isolates.
func CheckFreeText(field, s string) error {
	if err := CheckText(field, s); err != nil {
		return err
	}
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
		case unicode.IsControl(r):
			return Invalid(field, "must not contain control characters other than tabs and line breaks (LF or CR LF)")
		case isBidiControl(r):
			return Invalid(field, "must not contain bidirectional embedding, override or isolate characters")
		case isLineSeparator(r):
			return Invalid(field, "must not contain line or paragraph separators (U+2028, U+2029); use LF")
		}
	}
	return nil
}

// CheckDescription checks a description: free text of at most 500 characters.
func CheckDescription(field, s string) error {
	if err := CheckFreeText(field, s); err != nil {
		return err
	}
	if utf8.RuneCountInString(s) > MaxDescription {
		return Invalid(field, "must be at most 500 characters")
	}
	return nil
}

// CleanName trims surrounding white space from a name and checks that what is left
// is 1–100 characters under the text policy for names. field names the field in the
// error.
func CleanName(field, s string) (string, error) {
	s, err := cleanSought(field, s)
	if err != nil {
		return "", err
	}
	for i, r := range s {
		if isInvisible(r) && !showsInName(s, i, r) {
			return "", Invalid(field, invisibleProblem(r))
		}
	}
	return s, nil
}

// cleanSought is CleanName for a text looked for among names (the name filter of
// pets), which may hold the invisible characters that names stored before the rule
// against them hold: a pet must stay findable by the name it has.
func cleanSought(field, s string) (string, error) {
	if err := CheckText(field, s); err != nil {
		return "", err
	}
	s = strings.TrimSpace(s)
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxName {
		return "", Invalid(field, "must be 1 to 100 characters (after trimming white space)")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", Invalid(field, "must not contain control characters")
	}
	if strings.IndexFunc(s, isBidiControl) >= 0 {
		return "", Invalid(field, "must not contain bidirectional embedding, override or isolate characters")
	}
	if strings.IndexFunc(s, isLineSeparator) >= 0 {
		return "", Invalid(field, "must not contain line or paragraph separators")
	}
	if !strings.ContainsFunc(s, isVisible) {
		return "", Invalid(field, "must contain a visible character")
	}
	return s, nil
}

// isBidiControl reports the characters that change the direction of the text around
// them: embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069).
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// isLineSeparator reports U+2028 and U+2029, which are no control characters but
// break a line in JavaScript, in some log viewers and in terminals: a forged log line
// or a name shown on two lines.
func isLineSeparator(r rune) bool { return r == 0x2028 || r == 0x2029 }

// isBidiMark reports the invisible marks that set the direction of the characters
// beside them: LEFT-TO-RIGHT MARK, RIGHT-TO-LEFT MARK, ARABIC LETTER MARK.
func isBidiMark(r rune) bool {
	return r == 0x200E || r == 0x200F || r == 0x061C
}

// isVisible reports whether r shows as something: not white space, not invisible
// (isInvisible), not a combining mark on its own.
func isVisible(r rune) bool {
	return !unicode.IsSpace(r) && !isInvisible(r) && !unicode.In(r, unicode.Mn, unicode.Me)
}

// isInvisible reports the code points that show as nothing, or only change how their
// neighbours show: Unicode's Default_Ignorable_Code_Point (zero-width space and
// joiners, the word joiner and invisible operators, the byte order mark, the soft
// hyphen, the combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
// Mongolian and other variation selectors, tag characters, musical formatting
// characters, and code points reserved as such), every other format character (Cf),
// and the Braille pattern blank, which shows as a space without being one.
//
// DerivedCoreProperties.txt derives Default_Ignorable_Code_Point from three tables
// the standard library has (Other_Default_Ignorable_Code_Point, Cf,
// Variation_Selector), less white space and a few format characters; neither it nor
// golang.org/x/text exports the derived property. The union of the three, taken
// here, is that property and those few format characters more: number signs that
// stand before digits (U+0600 ARABIC NUMBER SIGN…), interlinear annotation marks and
// Egyptian hieroglyph format controls, of no use in a name or an address. (White
// space is in none of the three.) The tables follow unicode.Version.
func isInvisible(r rune) bool {
	if r < 0xAD { // U+00AD SOFT HYPHEN is the first
		return false
	}
	return r == brailleBlank || unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// Invisible characters that a name may hold where they are part of what it shows.
const (
	zwnj            = 0x200C // ZERO WIDTH NON-JOINER
	zwj             = 0x200D // ZERO WIDTH JOINER
	textStyle       = 0xFE0E // VARIATION SELECTOR-15: the symbol before it as text
	emojiStyle      = 0xFE0F // VARIATION SELECTOR-16: the symbol before it as an emoji
	combiningKeycap = 0x20E3 // COMBINING ENCLOSING KEYCAP, after a digit, # or *
	brailleBlank    = 0x2800
	virama          = 9 // the canonical combining class of viramas
)

// showsInName reports whether the invisible r at s[i] changes how the name shows,
// so that a name cannot do without it:
//   - a joiner or non-joiner right after a virama chooses how Indic letters join
//     (ශ්‍රී, Sri): the first rule of each of RFC 5892's CONTEXTJ rules, as IDNA
//     and PRECIS allow them;
//   - a zero-width joiner between emoji makes one of them (👩‍👩‍👧), and a
//     variation selector 15 or 16 after a symbol shows it as text or as an emoji
//     (❤️, what phones send), or makes a keycap (1️⃣).
//
// Emoji are taken to be symbols (So) here: the standard library has no
// Extended_Pictographic. Tag characters, which make subdivision flags, are not kept:
// they spell any text invisibly.
func showsInName(s string, i int, r rune) bool {
	prev, size := utf8.DecodeLastRuneInString(s[:i])
	next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
	switch r {
	case zwnj, zwj:
		if size > 0 && norm.NFC.PropertiesString(s[i-size:i]).CCC() == virama {
			return true
		}
		return r == zwj && (isEmoji(prev) || prev == emojiStyle || isEmojiModifier(prev)) && isEmoji(next)
	case textStyle, emojiStyle:
		return isEmoji(prev) || strings.ContainsRune(styledNotSymbols, prev) ||
			next == combiningKeycap && strings.ContainsRune("0123456789#*", prev)
	}
	return false
}

// styledNotSymbols are the characters outside ASCII that take a variation selector 15
// or 16 (emoji-variation-sequences.txt, Unicode 15.0) and are not other symbols (So):
// ‼ ⁉ ℹ ↔ ◻ ◼ ◽ ◾ ⤴ ⤵ 〰 〽.
const styledNotSymbols = "\u203C\u2049\u2139\u2194\u25FB\u25FC\u25FD\u25FE\u2934\u2935\u3030\u303D"

// isEmoji reports a symbol an emoji sequence may hold: an other symbol (So), as
// nearly every emoji is.
func isEmoji(r rune) bool { return r != utf8.RuneError && unicode.Is(unicode.So, r) }

// isEmojiModifier reports the skin tones that follow an emoji (U+1F3FB–U+1F3FF).
func isEmojiModifier(r rune) bool { return r >= 0x1F3FB && r <= 0x1F3FF }

// invisibleProblem says that a field holds the invisible r.
func invisibleProblem(r rune) string {
	return fmt.Sprintf("must not contain invisible characters (zero-width, format and other default-ignorable characters, fillers); it holds U+%04X", r)
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

// CleanNewEmail is CleanEmail for the address of a new account, which must also
// follow the text policy of addresses (CheckAddress) as it was sent, so that a
// refusal names the character sent, and as it is kept. An address already kept is
// not held to it: its account still signs in with it (CleanEmail alone).
func CleanNewEmail(s string) (string, error) {
	email, err := CleanEmail(s)
	if err != nil {
		return "", err
	}
	if err := CheckAddress("email", strings.TrimSpace(s)); err != nil {
		return "", err
	}
	if err := CheckAddress("email", email); err != nil {
		return "", err
	}
	return email, nil
}

// EmailKey is what makes an email unique: its NFKC form in lower case. Two addresses
// with one key are one account; stores look accounts up by it.
//
// Lower-casing can undo NFKC (combining marks may then compose otherwise), so both are
// applied until neither changes anything: a key is its own key, and two spellings that
// differ only so are one account. Where one round is enough (every address short of
// what the fuzzer dug out) the key is what it always was, so stored keys still match.
func EmailKey(email string) string {
	k := strings.ToLower(norm.NFKC.String(email))
	for range 8 {
		next := strings.ToLower(norm.NFKC.String(k))
		if next == k {
			break
		}
		k = next
	}
	return k
}

// CheckPassword checks a password: the text policy every string follows and the
// length rules. It does not trim it.
func CheckPassword(s string) error {
	if err := CheckText("password", s); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(s); n < MinPassword || n > MaxPassword {
		return Invalid("password", "must be 12 to 128 characters")
	}
	return nil
}

// CheckMessage checks the text of a getting-started message: free text of 1–2,000
// characters.
func CheckMessage(s string) error {
	if err := CheckFreeText("message", s); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxMessage {
		return Invalid("message", "must be 1 to 2000 characters")
	}
	return nil
}

// StoredEmail is an account's email as a store keeps it, with the key it was stored
// under.
type StoredEmail struct {
	ID         int64
	Email, Key string
}

// Rekey returns the stored emails whose key is not EmailKey of their email (keys made
// before EmailKey repeated its steps), each with the key it should have. One whose
// right key another account already holds keeps its own: the other is the account of
// that address.
func Rekey(stored []StoredEmail) []StoredEmail {
	taken := make(map[string]bool, len(stored))
	for _, s := range stored {
		taken[s.Key] = true
	}
	var changes []StoredEmail
	for _, s := range stored {
		if k := EmailKey(s.Email); k != s.Key && !taken[k] {
			taken[k] = true
			changes = append(changes, StoredEmail{ID: s.ID, Email: s.Email, Key: k})
		}
	}
	return changes
}
