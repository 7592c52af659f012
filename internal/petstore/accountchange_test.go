package petstore

import (
	"testing"
)

func TestTheLastEnabledAdminIsKept(t *testing.T) {
	role := func(r Role) *Role { return &r }
	flag := func(b bool) *bool { return &b }
	admin := Account{ID: 1, Role: Admin, Password: InvitedPassword}
	customer := Account{ID: 2, Role: Customer, Password: NoPassword}
	signUp := Account{ID: 2, Role: Customer, Password: SignUpPassword}
	invited := Account{ID: 4, Role: Customer, Password: InvitedPassword}
	disabledAdmin := Account{ID: 3, Role: Admin, Disabled: true}
	tests := []struct {
		name    string
		a       Account
		change  AccountChange
		admins  int // enabled admins, a among them when it is one
		want    Account
		refusal string
	}{
		{name: "nothing changed", a: admin, admins: 1, want: admin},
		{name: "the last admin demoted", a: admin, change: AccountChange{Role: role(Customer)}, admins: 1, refusal: ELastAdmin},
		{name: "the last admin disabled", a: admin, change: AccountChange{Disabled: flag(true)}, admins: 1, refusal: ELastAdmin},
		{name: "the last admin, left as it is", a: admin, change: AccountChange{Role: role(Admin), Disabled: flag(false)}, admins: 1, want: admin},
		{name: "one of two admins demoted", a: admin, change: AccountChange{Role: role(Customer)}, admins: 2,
			want: Account{ID: 1, Role: Customer, Password: InvitedPassword}},
		{name: "one of two admins disabled", a: admin, change: AccountChange{Disabled: flag(true)}, admins: 2,
			want: Account{ID: 1, Role: Admin, Disabled: true, Password: InvitedPassword}},
		{name: "a customer disabled, no admin left anyway", a: customer, change: AccountChange{Disabled: flag(true)}, admins: 0,
			want: Account{ID: 2, Role: Customer, Disabled: true, Password: NoPassword}},
		{name: "a key-only customer made admin", a: customer, change: AccountChange{Role: role(Admin)}, admins: 1,
			want: Account{ID: 2, Role: Admin, Password: NoPassword}},
		{name: "an invited customer (say, staff demoted) made admin again", a: invited, change: AccountChange{Role: role(Admin)}, admins: 1,
			want: Account{ID: 4, Role: Admin, Password: InvitedPassword}},
		{name: "a sign-up is not made admin", a: signUp, change: AccountChange{Role: role(Admin)}, admins: 1, refusal: EConflict},
		{name: "a sign-up left a customer", a: signUp, change: AccountChange{Role: role(Customer)}, admins: 1, want: signUp},
		{name: "a sign-up disabled", a: signUp, change: AccountChange{Disabled: flag(true)}, admins: 1,
			want: Account{ID: 2, Role: Customer, Disabled: true, Password: SignUpPassword}},
		{name: "a disabled admin demoted: not an enabled one", a: disabledAdmin, change: AccountChange{Role: role(Customer)}, admins: 1,
			want: Account{ID: 3, Role: Customer, Disabled: true}},
		{name: "a disabled admin enabled", a: disabledAdmin, change: AccountChange{Disabled: flag(false)}, admins: 1, want: Account{ID: 3, Role: Admin}},
		{name: "an unknown role", a: customer, change: AccountChange{Role: role("owner")}, admins: 1, refusal: EValidationFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.change.Apply(tt.a, tt.admins)
			if tt.refusal != "" {
				if ErrorCode(err) != tt.refusal {
					t.Fatalf("err = %v, want %s", err, tt.refusal)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Apply = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestOnlyASignUpIsNeverMadeAdmin(t *testing.T) {
	tests := []struct {
		source PasswordSource
		role   Role
		ok     bool
	}{
		{NoPassword, Admin, true},
		{InvitedPassword, Admin, true},
		{SignUpPassword, Admin, false},
		{SignUpPassword, Customer, true},
		{InvitedPassword, Customer, true},
		{SignUpPassword, "", true},
	}
	for _, tt := range tests {
		err := CheckRoleGrant("a@example.com", tt.source, tt.role)
		if got := err == nil; got != tt.ok || (err != nil && ErrorCode(err) != EConflict) {
			t.Errorf("CheckRoleGrant(%s, %q) = %v; want allowed %v", tt.source, tt.role, err, tt.ok)
		}
	}
}
