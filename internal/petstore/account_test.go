package petstore

import (
	"slices"
	"testing"
	"time"
)

func TestAKeyGrantIsBoundedByRoleMakerAndOperator(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	customer := []string{"account:read", "orders:write", "pets:read"}
	whole := Principal{Role: Customer}
	limited := Principal{Role: Customer, Scopes: []string{"pets:read"}, ExpiresAt: now.Add(48 * time.Hour)}
	tests := []struct {
		name        string
		ask         KeyGrant
		maker       Principal
		maxLifetime time.Duration
		want        KeyGrant
		invalid     string // the field refused, if any
	}{
		{name: "nothing asked: the maker's all, forever", maker: whole, want: KeyGrant{}},
		{name: "scopes sorted, repeats dropped", maker: whole, ask: KeyGrant{Scopes: []string{"pets:read", "account:read", "pets:read"}},
			want: KeyGrant{Scopes: []string{"account:read", "pets:read"}}},
		{name: "an empty list is refused, not read as every scope", maker: limited, ask: KeyGrant{Scopes: []string{}}, invalid: "scopes"},
		{name: "a scope the role lacks", maker: whole, ask: KeyGrant{Scopes: []string{"webhooks:manage"}}, invalid: "scopes"},
		{name: "a scope the maker's key lacks", maker: limited, ask: KeyGrant{Scopes: []string{"orders:write"}}, invalid: "scopes"},
		{name: "a limited maker passes on its scopes and expiry", maker: limited, want: KeyGrant{Scopes: []string{"pets:read"}, ExpiresAt: at(48 * time.Hour)}},
		{name: "no later than the maker", maker: limited, ask: KeyGrant{ExpiresAt: at(49 * time.Hour)}, invalid: "expiresAt"},
		{name: "in the past", maker: whole, ask: KeyGrant{ExpiresAt: at(0)}, invalid: "expiresAt"},
		{name: "any future instant", maker: whole, ask: KeyGrant{ExpiresAt: at(3 * time.Second)}, want: KeyGrant{ExpiresAt: at(3 * time.Second)}},
		{name: "the last second of 9999 is fine", maker: whole, ask: KeyGrant{ExpiresAt: &LatestInstant}, want: KeyGrant{ExpiresAt: &LatestInstant}},
		{name: "an instant that is year 10000 in UTC is refused", maker: whole, ask: KeyGrant{ExpiresAt: date("9999-12-31T23:59:59-23:59")}, invalid: "expiresAt"},
		{name: "and so it is under an operator's lifetime", maker: whole, maxLifetime: time.Hour, ask: KeyGrant{ExpiresAt: date("9999-12-31T23:59:59-23:59")}, invalid: "expiresAt"},
		{name: "the operator's longest lifetime is the default", maker: whole, maxLifetime: time.Hour, want: KeyGrant{ExpiresAt: at(time.Hour)}},
		{name: "and the bound", maker: whole, maxLifetime: time.Hour, ask: KeyGrant{ExpiresAt: at(time.Hour + time.Second)}, invalid: "expiresAt"},
		{name: "the earlier of maker and operator", maker: limited, maxLifetime: 72 * time.Hour, want: KeyGrant{Scopes: []string{"pets:read"}, ExpiresAt: at(48 * time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ask.Decide(tt.maker, customer, now, tt.maxLifetime)
			if tt.invalid != "" {
				if e, ok := err.(*Error); !ok || e.Code != EValidationFailed || len(e.Details) != 1 || e.Details[0].Field != tt.invalid {
					t.Fatalf("err = %v, want %s refused", err, tt.invalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Scopes, tt.want.Scopes) || (got.Scopes == nil) != (tt.want.Scopes == nil) {
				t.Errorf("scopes = %#v, want %#v", got.Scopes, tt.want.Scopes)
			}
			if (got.ExpiresAt == nil) != (tt.want.ExpiresAt == nil) || got.ExpiresAt != nil && !got.ExpiresAt.Equal(*tt.want.ExpiresAt) {
				t.Errorf("expiresAt = %v, want %v", got.ExpiresAt, tt.want.ExpiresAt)
			}
		})
	}
}

func TestANewAccountIsHeldToThePolicyOfAddressesAndPasswords(t *testing.T) {
	const password = "correct horse battery"
	tests := []struct {
		name         string
		in           SignUp
		want         string // the address kept
		field, issue string // the refusal, if any
	}{
		{"a sign-up's address is kept trimmed, in NFKC", SignUp{Email: " ａda@example.com ", Password: password}, "ada@example.com", "", ""},
		{"an address that is none is refused", SignUp{Email: "ada", Password: password}, "", "email", "must be an email address such as ada@example.com"},
		{"an address with an invisible character is refused", SignUp{Email: "ada\u200b@example.com", Password: password},
			"", "email", "must not contain invisible characters (zero-width, format and other default-ignorable characters, fillers); it holds U+200B"},
		{"a short password is refused", SignUp{Email: "ada@example.com", Password: "short"}, "", "password", "must be 12 to 128 characters"},
		{"a sign-up without a password is refused", SignUp{Email: "ada@example.com"}, "", "password", "must be 12 to 128 characters"},
		{"the address is checked before the password", SignUp{Email: "ada", Password: "short"}, "", "email", "must be an email address such as ada@example.com"},
		{"the operator's key-only account has no password", SignUp{Email: " ada@example.com", KeyOnly: true}, "ada@example.com", "", ""},
		{"its address is held to the same policy", SignUp{Email: "ada\u200b@example.com", KeyOnly: true},
			"", "email", "must not contain invisible characters (zero-width, format and other default-ignorable characters, fillers); it holds U+200B"},
		{"a key-only account given a password is refused", SignUp{Email: "ada@example.com", Password: password, KeyOnly: true},
			"", "password", "must be left out for an account that signs in with keys alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Check()
			wantProblem(t, err, tt.field, tt.issue)
			if got != tt.want {
				t.Errorf("kept %q, want %q", got, tt.want)
			}
		})
	}
}

func TestASessionAtTheCapMakesRoomAndAnotherKeyDoesNot(t *testing.T) {
	for _, tt := range []struct {
		live    int
		session bool
		want    bool
	}{
		{MaxKeysPerAccount - 1, true, false},
		{MaxKeysPerAccount, true, true},
		{MaxKeysPerAccount, false, false},
		{MaxKeysPerAccount + 1, true, true},
	} {
		if got := SessionMakesRoom(tt.live, tt.session); got != tt.want {
			t.Errorf("SessionMakesRoom(%d, %v) = %v, want %v", tt.live, tt.session, got, tt.want)
		}
	}
}
