package petstore

import "time"

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
}

// Principal is who makes a request: the account behind the key or password.
type Principal struct {
	AccountID int64
	Role      Role
	// KeyID is the API key the request came with; 0 for HTTP Basic.
	KeyID int64
}

// IsAdmin reports whether the principal has the admin role.
func (p Principal) IsAdmin() bool { return p.Role == Admin }

// APIKey is an API key without its secret.
type APIKey struct {
	ID        int64
	AccountID int64
	Name      string
	Prefix    string
	CreatedAt time.Time
}

// NewAPIKey is a key to store: only the hash of the secret is kept.
type NewAPIKey struct {
	AccountID int64
	Name      string
	Prefix    string
	Hash      []byte
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

// CheckKeyCount applies the cap on live keys to an account that holds live of them
// and wants one more.
func CheckKeyCount(live int) error {
	if live >= MaxKeysPerAccount {
		return Errorf(EConflict, "An account may hold at most %d API keys; revoke one first.", MaxKeysPerAccount)
	}
	return nil
}
