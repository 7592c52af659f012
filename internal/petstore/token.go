package petstore

import "time"

// TokenKind says what a one-time link's token does: it accepts an invitation or
// resets a password. A token of one kind never works as the other.
type TokenKind string

// The kinds of one-time tokens.
const (
	TokenInvitation TokenKind = "invitation"
	TokenReset      TokenKind = "reset"
)

// The lifetimes of what a person's sign-in makes.
const (
	// InvitationLifetime is how long an invitation's link works.
	InvitationLifetime = 7 * 24 * time.Hour
	// ResetLifetime is how long a password reset's link works.
	ResetLifetime = time.Hour
	// SessionLifetime is how long a session's key works.
	SessionLifetime = 12 * time.Hour
)

// SessionKeyName is the name of every session's key, as API key listings show it.
const SessionKeyName = "console session"

// Invitation is an invitation to an account, without its token.
type Invitation struct {
	ID        int64
	Email     string
	Role      Role
	CreatedAt time.Time
	ExpiresAt time.Time
}

// NewToken is a one-time token to store: only the hash of its secret is kept. Email
// is whom it is for (an invitation's address, or a reset's account); Role is the
// role an invitation gives.
type NewToken struct {
	Kind      TokenKind
	Email     string
	Role      Role
	Hash      []byte
	ExpiresAt time.Time
}

// Redemption is the use of a one-time token: its hash, and the password hash to set.
type Redemption struct {
	Kind         TokenKind
	Hash         []byte
	PasswordHash string
}

// ErrInvalidToken is the one refusal of a token that will not do: unknown, used,
// expired, replaced, of the other kind, or of a disabled account. One wording for
// every case, so that the answer tells nothing of which.
func ErrInvalidToken() *Error {
	return Errorf(EInvalidToken, "This link is not valid: it may have expired or already been used. Ask for a new one.")
}

// TokenOpen reports whether a token that has not been used or replaced may still be
// used at now: it expires at expiresAt.
func TokenOpen(expiresAt, now time.Time) bool { return now.Before(expiresAt) }

// CheckInvitation applies the rule of an invitation to email: an account that has a
// password (hasPassword; its owner chose it) is not invited, since an invitation sets
// a password and a role, and neither is taken from whoever chose that one.
func CheckInvitation(email string, exists, hasPassword bool) error {
	if exists && hasPassword {
		return Errorf(EConflict, "The account %s already has a password: it signs in with it (a forgotten one is reset by mail), "+
			"and an admin changes its role with PATCH /accounts/{accountId}.", email)
	}
	return nil
}

// AcceptInto applies an accepted invitation (of role) to the account it names: a new
// account (exists false) gets role; an account without a password (key-only) gets the
// password and role; an account that has a password since, or is disabled, refuses
// the token (ErrInvalidToken), as if it were not valid.
func AcceptInto(a Account, exists, hasPassword bool, role Role) (Account, error) {
	if !exists {
		return Account{Role: role}, nil
	}
	if hasPassword || a.Disabled {
		return Account{}, ErrInvalidToken()
	}
	a.Role = role
	return a, nil
}

// ResetInto applies a password reset to its account: a disabled account, or one
// whose password was removed since (taken over by the operator), refuses the token.
func ResetInto(a Account, hasPassword bool) (Account, error) {
	if !hasPassword || a.Disabled {
		return Account{}, ErrInvalidToken()
	}
	return a, nil
}
