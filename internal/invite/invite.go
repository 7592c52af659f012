// Package invite makes invitations: a one-time token kept only as its hash (in the
// store's petstore.TokenStore), the link that carries the token to the console's
// accept page, and the mail that sends the link. POST /invitations (package httpapi),
// `petstore accounts invite` and the first start invite through it, so the command
// never reaches into the HTTP layer for this.
package invite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/console"
	"github.com/acme-pets/petstore/internal/mail"
	"github.com/acme-pets/petstore/internal/petstore"
)

// AcceptPath is the console's page that an invitation's link opens.
const AcceptPath = console.Prefix + "/accept"

// Create stores an invitation of email (a clean address) to role, made at now, and
// returns it with its one-time link on publicURL (where people reach the service,
// never a request's Host).
func Create(ctx context.Context, st petstore.TokenStore, publicURL, email string, role petstore.Role, now time.Time) (petstore.Invitation, string, error) {
	token, hash := auth.NewToken(auth.InvitationPrefix)
	expires := now.Add(petstore.InvitationLifetime).UTC().Truncate(time.Second)
	inv, err := st.CreateInvitation(ctx, petstore.NewToken{Kind: petstore.TokenInvitation, Email: email, Role: role,
		Hash: hash, ExpiresAt: expires})
	if err != nil {
		return petstore.Invitation{}, "", err
	}
	return inv, Link(publicURL, AcceptPath, token), nil
}

// Link is the URL of the page at path on publicURL with a one-time token: an
// invitation's, or a password reset's.
func Link(publicURL, path, token string) string {
	return strings.TrimSuffix(publicURL, "/") + path + "?token=" + token
}

// Mail is the mail of an invitation to role with its link, which works until expires.
func Mail(to string, role petstore.Role, link string, expires time.Time) mail.Message {
	return mail.Message{To: to, Subject: "You are invited to the pet store", Text: fmt.Sprintf(
		"You are invited to the pet store as %s.\n\nOpen this link to choose your password and sign in:\n\n%s\n\n"+
			"The link works once, until %s. If you did not expect this mail, ignore it.\n",
		role, link, expires.UTC().Format(time.RFC1123))}
}
