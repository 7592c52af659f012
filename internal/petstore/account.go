package petstore

import (
	"slices"
	"strings"
	"time"
)

// Role is what an account may do.
type Role string

// The roles.
const (
	Customer Role = "customer"
	Admin    Role = "admin"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool { return r == Customer || r == Admin }

// Account is a user of the API.
type Account struct {
	ID        int64
	Email     string
	Role      Role
	CreatedAt time.Time
	// Disabled is set by an admin (PATCH /accounts/{id}) or the operator (petstore
	// accounts disable): the account's keys and password then open nothing.
	Disabled bool
}

// AccountFilter selects the accounts of a list; every filter set must hold.
type AccountFilter struct {
	// IDs, when not empty, keeps only these accounts.
	IDs []int64
	// Role, when set, keeps only the accounts of this role (disabled ones too). Stores
	// read it from an index of (role, id), so a page of the few admins reads no
	// customer, however many there are. A role that is not known matches none.
	Role Role
}

// AccountChange is an admin's change to an account: nil fields keep their value.
type AccountChange struct {
	Role     *Role
	Disabled *bool
}

// Apply returns a as changed, or the refusal of the last-admin rule: an enabled admin
// is not demoted or disabled when it is the last one (enabledAdmins counts the
// enabled admin accounts, a among them when it is one), or nobody could manage
// accounts any more but the operator on the server. Stores call it under the lock or
// transaction that counted enabledAdmins, so that two such changes at once cannot
// both pass. A role that is not one of the known roles is a validation failure. An
// admin, like the operator, never makes a sign-up admin (CheckRoleGrant: hasPassword
// says whether a's owner chose a password): staff are made with keys create, and the
// invitations of issue 33.
func (c AccountChange) Apply(a Account, hasPassword bool, enabledAdmins int) (Account, error) {
	out := a
	if c.Role != nil {
		if !c.Role.Valid() {
			return Account{}, Invalid("role", "must be customer or admin")
		}
		if *c.Role != a.Role {
			if err := CheckRoleGrant(a.Email, hasPassword, *c.Role); err != nil {
				return Account{}, err
			}
		}
		out.Role = *c.Role
	}
	if c.Disabled != nil {
		out.Disabled = *c.Disabled
	}
	wasAdmin := a.Role == Admin && !a.Disabled
	isAdmin := out.Role == Admin && !out.Disabled
	if wasAdmin && !isAdmin && enabledAdmins <= 1 {
		return Account{}, Errorf(ELastAdmin, "Account %d is the last enabled admin: make another account admin first, "+
			"or no one could manage accounts.", a.ID)
	}
	return out, nil
}

// SignUp is a new account as asked for: by a sign-up (POST /accounts), with a
// password, or by the operator (`petstore keys create` for an address no account has
// yet), key-only.
type SignUp struct {
	// Email is the address as sent.
	Email    string
	Password string
	// KeyOnly is set for an account that signs in with API keys alone: it has no
	// password.
	KeyOnly bool
}

// Check applies the policy of a new account and returns the address to keep: the
// address first, held to the policy of addresses as sent and as kept (CleanNewEmail),
// then the password (CheckPassword), which a key-only account has none of. Only a new
// account is held to it: one made before the policy still signs in, and is given keys,
// with the address it has (CleanEmail alone finds it).
func (s SignUp) Check() (string, error) {
	email, err := CleanNewEmail(s.Email)
	if err != nil {
		return "", err
	}
	switch {
	case s.KeyOnly && s.Password != "":
		return "", Invalid("password", "must be left out for an account that signs in with keys alone")
	case !s.KeyOnly:
		if err := CheckPassword(s.Password); err != nil {
			return "", err
		}
	}
	return email, nil
}

// Principal is who makes a request: the account behind the key or password.
type Principal struct {
	AccountID int64
	Role      Role
	// KeyID is the API key the request came with; 0 for HTTP Basic.
	KeyID int64
	// Scopes are the key's scopes; nil for every scope of the role (a key made
	// without scopes, or a password).
	Scopes []string
	// ExpiresAt is when the key stops working; zero for never.
	ExpiresAt time.Time
	// Disabled is set when the key's account is disabled: the key opens nothing.
	Disabled bool
}

// Actor is who the principal's requests act as, for the events of their changes.
func (p Principal) Actor() Actor { return Actor{AccountID: p.AccountID, KeyID: p.KeyID} }

// Actor is who made a change that an event tells of: an account, by a request made
// with one of its keys (KeyID) or with its password (KeyID 0); or the operator, on
// the command line (the zero Actor: no account acts there).
type Actor struct {
	AccountID int64
	KeyID     int64
}

// IsAdmin reports whether the principal has the admin role.
func (p Principal) IsAdmin() bool { return p.Role == Admin }

// HasScope reports whether the principal's key may be used for an operation that
// needs scope. The role is checked apart from it.
func (p Principal) HasScope(scope string) bool {
	return p.Scopes == nil || slices.Contains(p.Scopes, scope)
}

// Expired reports whether the principal's key has expired at now.
func (p Principal) Expired(now time.Time) bool {
	return !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt)
}

// APIKey is an API key without its secret.
type APIKey struct {
	ID        int64
	AccountID int64
	Name      string
	Prefix    string
	CreatedAt time.Time
	// Scopes are the key's scopes; nil for every scope of its account's role.
	Scopes []string
	// ExpiresAt is when the key stops working; nil for never.
	ExpiresAt *time.Time
	// LastUsedAt is the minute the key was last used (kept to the minute, written
	// after the fact); nil for never.
	LastUsedAt *time.Time
}

// NewAPIKey is a key to store: only the hash of the secret is kept. Scopes and
// ExpiresAt are as KeyGrant decided them.
type NewAPIKey struct {
	AccountID int64
	Name      string
	Prefix    string
	Hash      []byte
	Scopes    []string
	ExpiresAt *time.Time
	// By is who makes the key, for its api_key.created event; the zero Actor is the
	// operator (petstore keys create, the first start's key).
	By Actor
	// Session marks a session's key (POST /sessions and the one-time links): a
	// password reset revokes those, and no other key.
	Session bool
}

// KeyGrant is what a new key may do and for how long, as asked for.
type KeyGrant struct {
	// Scopes asked for; nil for every scope of the role.
	Scopes []string
	// ExpiresAt asked for; nil for no expiry, or the longest lifetime allowed.
	ExpiresAt *time.Time
}

// Decide applies the rules of a new key's grant, made by maker (the key or password
// of the request) at now. Every scope must be one maker's role allows (allowed, the
// role's scopes) and, when maker's key is limited, one of its scopes: a key passes on no more than
// it has, and a key asked for without scopes gets maker's. An expiry must be in the
// future, within maxLifetime of now when the operator sets one (0 for none), and not
// after maker's key expires; the earliest of those limits is the expiry of a key asked
// for without one. Scopes come back sorted, without repeats.
func (g KeyGrant) Decide(maker Principal, allowed []string, now time.Time, maxLifetime time.Duration) (KeyGrant, error) {
	out := KeyGrant{Scopes: maker.Scopes, ExpiresAt: g.ExpiresAt}
	if g.Scopes != nil {
		// An empty list would read as nil, every scope of the role: refused, never widened.
		if len(g.Scopes) == 0 {
			return KeyGrant{}, Invalid("scopes", "must name at least one scope")
		}
		out.Scopes = slices.Compact(slices.Sorted(slices.Values(g.Scopes)))
		for _, s := range out.Scopes {
			if !slices.Contains(allowed, s) {
				return KeyGrant{}, Invalid("scopes", "must be scopes the "+string(maker.Role)+" role allows; "+s+" is not one")
			}
			if !maker.HasScope(s) {
				return KeyGrant{}, Invalid("scopes", "must be scopes the key making this one has; "+s+" is not one")
			}
		}
	}
	limit := time.Time{}
	if maxLifetime > 0 {
		limit = now.Add(maxLifetime).UTC().Truncate(time.Second)
	}
	if !maker.ExpiresAt.IsZero() && (limit.IsZero() || maker.ExpiresAt.Before(limit)) {
		limit = maker.ExpiresAt.UTC()
	}
	if g.ExpiresAt != nil {
		if err := CheckInstant("expiresAt", *g.ExpiresAt); err != nil {
			return KeyGrant{}, err
		}
	}
	switch {
	case g.ExpiresAt != nil && !g.ExpiresAt.After(now):
		return KeyGrant{}, Invalid("expiresAt", "must be in the future, to the second (a fraction is dropped)")
	case g.ExpiresAt == nil && !limit.IsZero():
		out.ExpiresAt = &limit
	case g.ExpiresAt != nil && !limit.IsZero() && g.ExpiresAt.After(limit):
		return KeyGrant{}, Invalid("expiresAt", "must be no later than "+limit.Format(time.RFC3339)+
			" (the longest lifetime of a key here, or the expiry of the key making this one)")
	}
	if out.ExpiresAt != nil {
		at := out.ExpiresAt.UTC()
		out.ExpiresAt = &at
	}
	return out, nil
}

// JoinScopes is how stores keep a key's scopes: "" (NULL) for nil, else the scopes
// separated by spaces. SplitScopes reads it back.
func JoinScopes(scopes []string) *string {
	if scopes == nil {
		return nil
	}
	s := strings.Join(scopes, " ")
	return &s
}

// SplitScopes reads scopes that JoinScopes wrote.
func SplitScopes(s *string) []string {
	if s == nil {
		return nil
	}
	return strings.Fields(*s)
}

// Message is a message sent with the getting-started call.
type Message struct {
	ID        string
	AccountID int64
	Text      string
	Status    string
	CreatedAt time.Time
}

// Validate applies the rules of the message's text (CheckMessage).
func (m Message) Validate() error { return CheckMessage(m.Text) }

// MessageQueued is the status of an accepted message.
const MessageQueued = "queued"

// CheckRoleGrant applies the operator's rule on making an admin: an account whose
// password its owner chose (a sign-up) is never made admin, or whoever chose that
// password, perhaps to pre-empt the operator's address, would be admin. The account
// must be taken over first (its password removed, its keys revoked).
func CheckRoleGrant(email string, hasPassword bool, role Role) error {
	if role == Admin && hasPassword {
		return Errorf(EConflict, "The account %s has a password chosen by whoever signed it up, so it is not made admin: "+
			"take it over first (petstore keys create --take-over), which removes its password and revokes its keys.", email)
	}
	return nil
}

// MaxKeysPerAccount is how many live (not revoked) API keys an account may hold.
const MaxKeysPerAccount = 25

// KeysNeedRoom reports whether an account that holds live keys must make room
// before it is given one more: its keys that expired are then revoked (each with its
// event), and CheckKeyCount applies the cap to what is left.
func KeysNeedRoom(live int) bool { return live >= MaxKeysPerAccount }

// SessionMakesRoom reports whether a new session's key (session) for an account that
// holds live keys, after its expired ones made room, ends the account's oldest live
// session instead of failing the cap: signing in never fails for sessions of one's
// own, while other keys still meet the cap.
func SessionMakesRoom(live int, session bool) bool { return session && live >= MaxKeysPerAccount }

// CheckKeyCount applies the cap on live keys to an account that holds live of them
// and wants one more.
func CheckKeyCount(live int) error {
	if live >= MaxKeysPerAccount {
		return Errorf(EConflict, "An account may hold at most %d API keys; revoke one first.", MaxKeysPerAccount)
	}
	return nil
}
