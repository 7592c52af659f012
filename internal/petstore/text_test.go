package petstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

func TestCleanEmail(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a plain address is kept", "ada@example.com", "ada@example.com"},
		{"white space around it is trimmed", "  ada@example.com ", "ada@example.com"},
		{"a KELVIN SIGN is the K it looks like", "\u212aate@example.com", "Kate@example.com"},
		{"full-width letters are the letters they look like", "\uff41da@example.com", "ada@example.com"},
		{"letters beyond ASCII stay", "ærø@example.com", "ærø@example.com"},
		{"invalid UTF-8 is refused", "a\xffa@example.com", ""},
		{"NUL is refused", "ada\x00@example.com", ""},
		{"a display name is refused", "Ada <ada@example.com>", ""},
		{"no @ is refused", "ada.example.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CleanEmail(tt.in)
			if tt.want == "" {
				if codeOf(err) != EValidationFailed {
					t.Fatalf("CleanEmail(%q) = %q, %v; want validation_failed", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("CleanEmail(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestEmailKey(t *testing.T) {
	for _, same := range [][2]string{
		{"kate@example.com", "\u212aate@example.com"},
		{"Kate@Example.COM", "kate@example.com"},
		{"ÆRØ@example.com", "ærø@example.com"},
	} {
		if EmailKey(same[0]) != EmailKey(same[1]) {
			t.Errorf("EmailKey(%q) = %q, EmailKey(%q) = %q; want one key", same[0], EmailKey(same[0]), same[1], EmailKey(same[1]))
		}
	}
	if EmailKey("kate@example.com") == EmailKey("kâte@example.com") {
		t.Error("different letters share a key")
	}
	// A key is its own key, also where lower-casing undoes NFKC (found by
	// FuzzCleanEmail: combining marks that compose differently after lower-casing).
	for _, s := range []string{"ᴬda@example.com", "T̈̈́@0", "kate@example.com"} {
		if k := EmailKey(s); EmailKey(k) != k {
			t.Errorf("EmailKey(%q) = %q, whose key is %q", s, k, EmailKey(k))
		}
	}
	if EmailKey("ᴬda@example.com") != EmailKey("ada@example.com") {
		t.Error("a modifier capital A is not the address it looks like")
	}
}

func TestTheTextPolicyOfNames(t *testing.T) {
	tests := []struct {
		name, in, want, problem string
	}{
		{"a plain name is kept", "Rex", "Rex", ""},
		{"white space around it is trimmed", "  Rex  ", "Rex", ""},
		{"letters of any script are fine", "Ærø 犬 كلب", "Ærø 犬 كلب", ""},
		{"an emoji with joiners is fine", "👩‍👩‍👧", "👩‍👩‍👧", ""},
		{"an emoji with a skin tone and a joiner is fine", "Rex 👨🏽‍💻", "Rex 👨🏽‍💻", ""},
		{"an emoji as phones send it, with its selector, is fine", "Sunny ☀️ ❤️‍🔥", "Sunny ☀️ ❤️‍🔥", ""},
		{"a keycap is fine", "Rex 1️⃣", "Rex 1️⃣", ""},
		{"emoji that are no symbols take their selector too", "Rex \u203c\ufe0f \u2194\ufe0f \u3030\ufe0f", "Rex \u203c\ufe0f \u2194\ufe0f \u3030\ufe0f", ""},
		{"a joiner after a virama is fine", "ශ්\u200dරී", "ශ්\u200dරී", ""},
		{"a non-joiner after a virama is fine", "क्\u200cष", "क्\u200cष", ""},
		{"a joiner between letters is refused", "Re\u200dx", "", "must not contain invisible characters (zero-width, format and other default-ignorable characters, fillers); it holds U+200D"},
		{"a joiner after an emoji and before a letter is refused", "🐕‍Rex", "", "must not contain invisible characters (zero-width, format and other default-ignorable characters, fillers); it holds U+200D"},
		{"a selector after a letter is refused", "Rex️", "", "must not contain invisible characters (zero-width, format and other default-ignorable characters, fillers); it holds U+FE0F"},
		{"a flag's tag characters are refused", "🏴󠁧󠁢󠁷󠁬󠁳󠁿", "", "must not contain invisible characters (zero-width, format and other default-ignorable characters, fillers); it holds U+E0067"},
		{"invalid UTF-8 is refused", "R\xffx", "", "must be valid UTF-8"},
		{"NUL is refused", "R\x00x", "", "must not contain NUL characters"},
		{"other control characters are refused", "R\x07x", "", "must not contain control characters"},
		{"a right-to-left override is refused", "Rex\u202Egnp.exe", "", "must not contain bidirectional embedding, override or isolate characters"},
		{"an isolate is refused", "\u2066Rex\u2069", "", "must not contain bidirectional embedding, override or isolate characters"},
		{"zero-width characters alone are refused", "\u200B\u200C\u200D", "", "must contain a visible character"},
		{"a Hangul filler alone is refused", "\u3164", "", "must contain a visible character"},
		{"white space alone is refused", "   ", "", "must be 1 to 100 characters (after trimming white space)"},
		{"101 characters are refused", strings.Repeat("x", 101), "", "must be 1 to 100 characters (after trimming white space)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CleanName("name", tt.in)
			if tt.problem == "" {
				if err != nil || got != tt.want {
					t.Fatalf("CleanName(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != EValidationFailed || len(e.Details) != 1 || e.Details[0].Field != "name" || e.Details[0].Problem != tt.problem {
				t.Fatalf("CleanName(%q) = %q, %v; want %q on name", tt.in, got, err, tt.problem)
			}
		})
	}
}

// The invisible characters the security test of issue 30 found accepted, and the
// other code points of Default_Ignorable_Code_Point: each refused in a sign-up's email,
// a webhook's URL and a name (anywhere in it), with a problem that names it.
func TestInvisibleCharactersAreRefusedInAddressesAndNames(t *testing.T) {
	found := []rune{0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x180E,
		0x00AD, 0x034F, 0x115F, 0x3164, 0xE0001, 0x17B4, 0x1D173}
	for r := rune(0xE0020); r <= 0xE007F; r++ { // tag characters
		found = append(found, r)
	}
	// Fillers and blanks beside them.
	found = append(found, 0x1160, 0xFFA0, 0x17B5, 0x180B, 0x180F, 0xFE00, 0xFE0F, 0x2800, 0x1BCA0, 0xE0100, 0xE01EF)
	for _, r := range found {
		c := string(r)
		problem := fmt.Sprintf("must not contain invisible characters (zero-width, format and other default-ignorable characters, fillers); it holds U+%04X", r)
		t.Run(fmt.Sprintf("U+%04X", r), func(t *testing.T) {
			for _, email := range []string{"admin@petstore.local" + c, "ad" + c + "min@petstore.local", "admin@pet" + c + "store.local"} {
				_, err := CleanNewEmail(email)
				wantProblem(t, err, "email", problem)
			}
			for _, url := range []string{"https://hooks.example.com/a" + c + "b", "https://hoo" + c + "ks.example.com/"} {
				wantProblem(t, CheckAddress("url", url), "url", problem)
			}
			for _, name := range []string{"Rex" + c + "Max", "Rex" + c, c + "Rex"} {
				_, err := CleanName("name", name)
				wantProblem(t, err, "name", problem)
			}
		})
	}
	t.Run("the admin's address is still the admin's", func(t *testing.T) {
		if got, err := CleanNewEmail(" admin@petstore.local "); err != nil || got != "admin@petstore.local" {
			t.Errorf("CleanNewEmail = %q, %v", got, err)
		}
	})
	t.Run("an account kept with one still signs in", func(t *testing.T) {
		if got, err := CleanEmail("admin@petstore.local\u200b"); err != nil || got != "admin@petstore.local\u200b" {
			t.Errorf("CleanEmail = %q, %v", got, err)
		}
	})
}

// isInvisible holds every code point of Default_Ignorable_Code_Point as
// DerivedCoreProperties.txt (Unicode 15.0) lists it; no white space, and no letter,
// digit or punctuation but the Hangul fillers (letters that Unicode makes
// default-ignorable).
func TestIsInvisibleHoldsTheDefaultIgnorableCodePoints(t *testing.T) {
	ignorable := [][2]rune{ // DerivedCoreProperties.txt, Default_Ignorable_Code_Point
		{0x00AD, 0x00AD}, {0x034F, 0x034F}, {0x061C, 0x061C}, {0x115F, 0x1160}, {0x17B4, 0x17B5},
		{0x180B, 0x180F}, {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x206F}, {0x3164, 0x3164},
		{0xFE00, 0xFE0F}, {0xFEFF, 0xFEFF}, {0xFFA0, 0xFFA0}, {0xFFF0, 0xFFF8}, {0x1BCA0, 0x1BCA3},
		{0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
	}
	for _, rg := range ignorable {
		for r := rg[0]; r <= rg[1]; r++ {
			if !isInvisible(r) {
				t.Errorf("U+%04X is default-ignorable, and not invisible here", r)
			}
		}
	}
	fillers := []rune{0x115F, 0x1160, 0x3164, 0xFFA0}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if isInvisible(r) && !slices.Contains(fillers, r) && (unicode.IsSpace(r) || unicode.In(r, unicode.L, unicode.N, unicode.P)) {
			t.Errorf("U+%04X is invisible here, and a letter, digit, punctuation or space", r)
		}
	}
	for _, r := range "aA0 é犬ك🐕\u00a0\u3000" {
		if isInvisible(r) {
			t.Errorf("%q is invisible here", r)
		}
	}
}

func TestCheckText(t *testing.T) {
	if err := CheckText("message", "line one\nline two\ttabbed"); err != nil {
		t.Errorf("new lines and tabs: %v", err)
	}
	for _, bad := range []string{"a\x00b", "a\xc3", "\xed\xa0\x80"} { // NUL, a cut sequence, a surrogate
		if codeOf(CheckText("message", bad)) != EValidationFailed {
			t.Errorf("CheckText(%q) passed", bad)
		}
	}
}

// wantProblem fails t unless err is a validation error of field with problem, or, for
// an empty problem, nil.
func wantProblem(t *testing.T, err error, field, problem string) {
	t.Helper()
	if problem == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != EValidationFailed || len(e.Details) != 1 || e.Details[0].Field != field || e.Details[0].Problem != problem {
		t.Fatalf("got %v; want %q on %s", err, problem, field)
	}
}

func TestTheTextPolicyOfAddresses(t *testing.T) {
	const (
		control = "must not contain control characters"
		bidi    = "must not contain bidirectional embedding, override, isolate or mark characters"
	)
	tests := []struct{ name, in, problem string }{
		{"a plain URL is kept", "https://example.com/hooks?a=1&b=2", ""},
		{"an international domain is fine", "https://bücher.example/ändern", ""},
		{"NUL is refused", "https://example.com/\x00", "must not contain NUL characters"},
		{"invalid UTF-8 is refused", "https://example.com/\xff", "must be valid UTF-8"},
		{"a newline is refused", "https://example.com/\nlevel=ERROR", control},
		{"a tab is refused", "https://example.com/\tx", control},
		{"a CR is refused", "https://example.com/\rx", control},
		{"an ESC is refused", "https://example.com/\x1b[31m", control},
		{"DEL is refused", "https://example.com/\x7f", control},
		{"a C1 control is refused", "https://example.com/\u0085x", control},
		{"a right-to-left override is refused", "https://example.com/\u202e/x", bidi},
		{"an isolate is refused", "https://example.com/\u2067x\u2069", bidi},
		{"a right-to-left mark is refused", "https://example.com/\u200fx", bidi},
		{"a left-to-right mark is refused", "https://example.com/\u200ex", bidi},
		{"an Arabic letter mark is refused", "https://example.com/\u061cx", bidi},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, CheckAddress("url", tt.in), "url", tt.problem)
		})
	}
}

func TestTheTextPolicyOfFreeText(t *testing.T) {
	const (
		control = "must not contain control characters other than tabs and line breaks (LF or CR LF)"
		bidi    = "must not contain bidirectional embedding, override or isolate characters"
	)
	tests := []struct{ name, in, problem string }{
		{"plain text is kept", "Loyal companions.", ""},
		{"line breaks are kept", "one\ntwo\n\nthree\n", ""},
		{"CR LF line breaks are kept", "one\r\ntwo\r\n", ""},
		{"tabs are kept", "a\tb", ""},
		{"marks for mixed scripts are kept", "\u05e9\u05dc\u05d5\u05dd\u200f (shalom)", ""},
		{"NUL is refused", "a\x00b", "must not contain NUL characters"},
		{"invalid UTF-8 is refused", "a\xc3", "must be valid UTF-8"},
		{"an ESC is refused", "a\x1b[31mred", control},
		{"a CR alone is refused", "good\rfake", control},
		{"a CR at the end is refused", "good\r", control},
		{"a bell is refused", "a\x07", control},
		{"DEL is refused", "a\x7f", control},
		{"a C1 control is refused", "a\u009bb", control},
		{"a next-line control is refused", "a\u0085b", control},
		{"a right-to-left override is refused", "a\u202eb", bidi},
		{"an embedding is refused", "a\u202ab", bidi},
		{"an isolate is refused", "a\u2068b\u2069", bidi},
		{"the red team's log line is refused", "a\u202eb\nlevel=ERROR msg=fake\u001b[31m", bidi},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, CheckFreeText("description", tt.in), "description", tt.problem)
		})
	}
	t.Run("a description holds 500 characters", func(t *testing.T) {
		wantProblem(t, CheckDescription("description", strings.Repeat("\n", 500)), "description", "")
		wantProblem(t, CheckDescription("description", strings.Repeat("x", 501)), "description", "must be at most 500 characters")
	})
	t.Run("a message is free text", func(t *testing.T) {
		wantProblem(t, Message{Text: "hi\nthere"}.Validate(), "message", "")
		wantProblem(t, Message{Text: "hi\x1b"}.Validate(), "message", control)
		wantProblem(t, Message{Text: ""}.Validate(), "message", "must be 1 to 2000 characters")
	})
}

// A password is never shown: only NUL and invalid UTF-8 are refused in it.
func TestThePasswordPolicy(t *testing.T) {
	wantProblem(t, CheckPassword("correct\thorse \u202ebattery\x1b"), "password", "")
	wantProblem(t, CheckPassword("correct horse\x00battery"), "password", "must not contain NUL characters")
	wantProblem(t, CheckPassword("correct horse\xffbattery"), "password", "must be valid UTF-8")
}

// A change of an endpoint is held to the policy for what it sets; what it leaves as it
// was (held from before the policy) does not stop it.
func TestAWebhookChangeChecksWhatItSets(t *testing.T) {
	old := Webhook{URL: "https://example.com/\u202e/x", Description: "a\x1bb"}
	t.Run("a rotation leaves both alone", func(t *testing.T) {
		w := old
		w.Secret = "whsec_new"
		wantProblem(t, w.CheckText(old), "", "")
	})
	t.Run("a new URL is checked", func(t *testing.T) {
		w := old
		w.URL = "https://example.com/\nx"
		wantProblem(t, w.CheckText(old), "url", "must not contain control characters")
	})
	t.Run("a new description is checked", func(t *testing.T) {
		w := old
		w.Description = "b\u202ea"
		wantProblem(t, w.CheckText(old), "description", "must not contain bidirectional embedding, override or isolate characters")
	})
	t.Run("a new endpoint is checked whole", func(t *testing.T) {
		wantProblem(t, old.CheckText(Webhook{}), "url", "must not contain bidirectional embedding, override, isolate or mark characters")
		wantProblem(t, Webhook{URL: "https://example.com/", Description: "ok\nfine"}.CheckText(Webhook{}), "", "")
	})
}

func TestRekey(t *testing.T) {
	unstable := "T\u0308\u0344@example.com"
	oldKey := strings.ToLower(norm.NFKC.String(unstable)) // one round, as keys were made
	if oldKey == EmailKey(unstable) {
		t.Fatal("the example is stable; pick another")
	}
	got := Rekey([]StoredEmail{
		{1, "ada@example.com", "ada@example.com"},
		{2, unstable, oldKey},
	})
	if len(got) != 1 || got[0] != (StoredEmail{2, unstable, EmailKey(unstable)}) {
		t.Errorf("Rekey = %+v; want account 2 under its stable key", got)
	}
	// An account already holding the right key keeps it; the other keeps its own.
	if got := Rekey([]StoredEmail{{1, EmailKey(unstable), EmailKey(unstable)}, {2, unstable, oldKey}}); len(got) != 0 {
		t.Errorf("Rekey over a taken key = %+v; want no change", got)
	}
}

func TestNameKey(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"ASCII letters go to lower case", "Rex", "rex"},
		{"accented letters go to lower case", "ÉCLAIR", "éclair"},
		{"Greek letters go to lower case", "ΩMEGA", "ωmega"},
		{"ß stays ß, not ss", "Straße", "straße"},
		{"SS stays ss, not ß", "STRASSE", "strasse"},
		{"a decomposed accent stays decomposed", "E\u0301", "e\u0301"},
		{"wildcards of SQL are plain characters", `100%_\`, `100%_\`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NameKey(tt.in); got != tt.want {
				t.Errorf("NameKey(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPetFilterValidate(t *testing.T) {
	tests := []struct {
		name, in, want string // want "" for a refusal on name
	}{
		{"no name filter is left alone", "", ""},
		{"a name is trimmed as a pet's name is", " \tRex ", "Rex"},
		{"inner white space stays", "Mr Whiskers", "Mr Whiskers"},
		{"white space only is refused", "  ", ""},
		{"more than 100 characters are refused", strings.Repeat("é", MaxName+1), ""},
		{"invalid UTF-8 is refused", "R\xffx", ""},
		{"NUL is refused", "R\x00x", ""},
		{"a bidirectional control is refused", "R\u202ex", ""},
		{"an invisible character is kept: names kept before the rule may hold one", "Rex\u200b", "Rex\u200b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := PetFilter{Name: tt.in}
			err := f.Validate()
			if tt.want == "" && tt.in != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != EValidationFailed || len(e.Details) != 1 || e.Details[0].Field != "name" {
					t.Fatalf("Validate(%q) = %v; want validation_failed on name", tt.in, err)
				}
				return
			}
			if err != nil || f.Name != tt.want {
				t.Fatalf("Validate(%q) = %q, %v; want %q", tt.in, f.Name, err, tt.want)
			}
		})
	}
}
