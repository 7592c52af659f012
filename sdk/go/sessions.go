package petstore

import (
	"context"
	"time"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// Session is a signed-in person: the account, and a short-lived key made for the
// session (12 hours; Key.ExpiresAt), whose secret Key.Key is shown this once. Give it
// to WithAPIKey; sign out with RevokeAPIKey(ctx, Key.ID) on a client of that key.
type Session struct {
	Account Account
	Key     CreatedAPIKey
}

// NewSession is what signing in takes.
type NewSession struct {
	Email    string
	Password string
	// Scopes limit the session's key; nil gives it every scope of the account's role.
	Scopes []Scope
}

// Invitation is an invitation to an account. URL is its one-time link (7 days), shown
// this once; Mailed says whether the server mailed it.
type Invitation struct {
	ID        int64
	Email     string
	Role      Role
	CreatedAt time.Time
	ExpiresAt time.Time
	URL       string
	Mailed    bool
}

// NewInvitation is whom to invite, and to which role (RoleAdmin when empty).
type NewInvitation struct {
	Email string
	Role  Role
}

// CreateSession signs in with email and password; it needs no key. A wrong email or
// password, an account without a password and a disabled account are one *Error with
// CodeUnauthorized.
func (c *Client) CreateSession(ctx context.Context, s NewSession, opts ...CallOption) (*Session, error) {
	ctx = withCall(ctx, "createSession", opts)
	body := api.NewSession{Email: s.Email, Password: s.Password}
	if s.Scopes != nil {
		scopes := make([]api.Scope, len(s.Scopes))
		for i, sc := range s.Scopes {
			scopes[i] = api.Scope(sc)
		}
		body.Scopes = &scopes
	}
	v, err := decode[api.Session](c.api.CreateSession(ctx, body))
	return convert(v, err, sessionFrom)
}

// CreateInvitation invites a person by email to an account with a role (admins, a key
// with ScopeAccountsManage). An email whose account has a password is an *Error with
// CodeConflict.
func (c *Client) CreateInvitation(ctx context.Context, inv NewInvitation, opts ...CallOption) (*Invitation, error) {
	ctx = withCall(ctx, "createInvitation", opts)
	body := api.NewInvitation{Email: inv.Email}
	if inv.Role != "" {
		role := api.NewInvitationRole(inv.Role)
		body.Role = &role
	}
	v, err := decode[api.Invitation](c.api.CreateInvitation(ctx, body))
	return convert(v, err, func(i api.Invitation) *Invitation {
		return &Invitation{ID: i.ID, Email: i.Email, Role: Role(i.Role), CreatedAt: i.CreatedAt, ExpiresAt: i.ExpiresAt, URL: i.URL, Mailed: i.Mailed}
	})
}

// AcceptInvitation sets the password of an invitation's account with the token of its
// link (psi_…) and signs in; it needs no key. A token that will not do (unknown, used,
// expired, replaced) is an *Error with CodeInvalidToken.
func (c *Client) AcceptInvitation(ctx context.Context, token, password string, opts ...CallOption) (*Session, error) {
	ctx = withCall(ctx, "acceptInvitation", opts)
	v, err := decode[api.Session](c.api.AcceptInvitation(ctx, api.InvitationAcceptance{Token: token, Password: password}))
	return convert(v, err, sessionFrom)
}

// RequestPasswordReset asks the server to mail a reset link to the account of email,
// if it has one with a password; the answer (its message) is the same for every
// email. A server without mail answers an *Error with CodeUnavailable.
func (c *Client) RequestPasswordReset(ctx context.Context, email string, opts ...CallOption) (string, error) {
	ctx = withCall(ctx, "requestPasswordReset", opts)
	v, err := decode[api.PasswordResetRequested](c.api.RequestPasswordReset(ctx, api.PasswordResetRequest{Email: email}))
	return v.Message, err
}

// ResetPassword sets a new password with the token of a reset link (psr_…) and signs
// in; the account's other sessions end. A token that will not do is an *Error with
// CodeInvalidToken.
func (c *Client) ResetPassword(ctx context.Context, token, password string, opts ...CallOption) (*Session, error) {
	ctx = withCall(ctx, "resetPassword", opts)
	v, err := decode[api.Session](c.api.ResetPassword(ctx, api.PasswordResetConfirmation{Token: token, Password: password}))
	return convert(v, err, sessionFrom)
}

func sessionFrom(s api.Session) *Session {
	return &Session{Account: *accountFrom(s.Account), Key: *createdAPIKeyFrom(s.Key)}
}
