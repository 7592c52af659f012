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
