package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/acme-pets/petstore/internal/auth"
	"github.com/acme-pets/petstore/internal/console"
	"github.com/acme-pets/petstore/internal/invite"
	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// People sign in with a password (POST /sessions) or a one-time link (an invitation
// or a password reset) and get a session: a short-lived API key marked as a
// session's, which a password reset revokes. The links' tokens are made here (auth)
// and kept only as hashes (petstore.TokenStore).

// errNoResetByMail answers a reset request on a server without mail, for every email.
var errNoResetByMail = petstore.Errorf(petstore.EUnavailable, "Password reset by mail is not configured on this server; ask an admin for an invitation instead.")

// resetPath is the console's page that a password reset's link opens.
const resetPath = console.Prefix + "/reset"

// resetRequested is the one answer to a reset request, whatever the email.
const resetRequested = "If this email has an account with a password, a link to reset it is on its way; it works once, for 1 hour."

// CreateSession signs a person in with email and password. Every refusal is the one
// of a wrong password, in the same time (checkPassword), a disabled account's too.
func (h *Handler) CreateSession(ctx context.Context, req *oas.NewSession) (oas.CreateSessionRes, error) {
	// What the text policy refuses is refused first, from the input alone: it tells
	// nothing of accounts.
	if _, err := petstore.CleanNewEmail(req.Email); err != nil {
		return nil, err
	}
	if err := petstore.CheckText("password", req.Password); err != nil {
		return nil, err
	}
	acct, err := h.checkPassword(ctx, info(ctx), req.Email, req.Password)
	if err != nil {
		return nil, err
	}
	if acct.Disabled {
		return nil, errBadPassword
	}
	return h.startSession(ctx, acct, req.Scopes)
}

// startSession makes the session key of a: named petstore.SessionKeyName, expiring
// after petstore.SessionLifetime (or the operator's longest key lifetime, if
// shorter), with the role's scopes or the ones asked for.
func (h *Handler) startSession(ctx context.Context, a petstore.Account, scopes []oas.Scope) (*oas.Session, error) {
	now := h.now()
	life := petstore.SessionLifetime
	if h.keys.maxLifetime > 0 {
		life = min(life, h.keys.maxLifetime)
	}
	expires := now.Add(life).UTC().Truncate(time.Second)
	ask := petstore.KeyGrant{ExpiresAt: &expires}
	if scopes != nil {
		ask.Scopes = mapSlice(scopes, func(s oas.Scope) string { return string(s) })
	}
	maker := petstore.Principal{AccountID: a.ID, Role: a.Role}
	grant, err := ask.Decide(maker, h.keys.allowed[string(a.Role)], now, h.keys.maxLifetime)
	if err != nil {
		return nil, err
	}
	key, prefix, hash := auth.NewKey()
	k, err := h.store.CreateAPIKey(ctx, petstore.NewAPIKey{AccountID: a.ID, Name: petstore.SessionKeyName, Prefix: prefix, Hash: hash,
		Scopes: grant.Scopes, ExpiresAt: grant.ExpiresAt, By: maker.Actor(), Session: true})
	if err != nil {
		return nil, err
	}
	return &oas.Session{Account: toAccount(a), Key: createdKey(k, key)}, nil
}

// createdKey is the answer of a new key k, with its secret.
func createdKey(k petstore.APIKey, secret string) oas.CreatedApiKey {
	return oas.CreatedApiKey{ID: k.ID, Name: k.Name, Key: secret, Prefix: k.Prefix, CreatedAt: k.CreatedAt.UTC(),
		Scopes: k.Scopes, ExpiresAt: timeOpt(k.ExpiresAt)}
}

// CreateInvitation invites a person by email; the link is built from the public URL
// (never the request's Host) and mailed when mail is configured.
func (h *Handler) CreateInvitation(ctx context.Context, req *oas.NewInvitation) (oas.CreateInvitationRes, error) {
	email, err := petstore.CleanNewEmail(req.Email)
	if err != nil {
		return nil, err
	}
	role := petstore.Role(req.Role.Or(oas.NewInvitationRoleAdmin))
	inv, link, err := invite.Create(ctx, h.store, h.publicURL, email, role, h.now())
	if err != nil {
		return nil, err
	}
	expires := inv.ExpiresAt
	mailed := false
	if h.mailer != nil {
		err := h.mailer.Send(ctx, invite.Mail(email, role, link, expires))
		if err != nil {
			h.log.WarnContext(ctx, "mail an invitation", "err", err, "request_id", RequestID(ctx))
		}
		mailed = err == nil
	}
	return &oas.Invitation{ID: inv.ID, Email: inv.Email, Role: oas.Role(inv.Role), CreatedAt: inv.CreatedAt.UTC(),
		ExpiresAt: inv.ExpiresAt.UTC(), URL: link, Mailed: mailed}, nil
}

// link is the public URL of a console page with a token.
func (h *Handler) link(page, token string) string { return invite.Link(h.publicURL, page, token) }

// AcceptInvitation sets an invited account's password and role, and signs it in.
func (h *Handler) AcceptInvitation(ctx context.Context, req *oas.InvitationAcceptance) (oas.AcceptInvitationRes, error) {
	a, err := h.redeem(ctx, petstore.TokenInvitation, auth.InvitationPrefix, req.Token, req.Password)
	if err != nil {
		return nil, err
	}
	return h.startSession(ctx, a, nil)
}

// ResetPassword sets a new password with a reset link's token, and signs in.
func (h *Handler) ResetPassword(ctx context.Context, req *oas.PasswordResetConfirmation) (oas.ResetPasswordRes, error) {
	a, err := h.redeem(ctx, petstore.TokenReset, auth.ResetPrefix, req.Token, req.Password)
	if err != nil {
		return nil, err
	}
	return h.startSession(ctx, a, nil)
}

// redeem uses a one-time token of kind to set password. The password is held to the
// policy first (a 400 that tells nothing of the token), then hashed, then the token
// used in one transaction; the account's cached keys are forgotten, since its role
// may have changed and a reset revokes its sessions.
func (h *Handler) redeem(ctx context.Context, kind petstore.TokenKind, prefix, token, password string) (petstore.Account, error) {
	if err := petstore.CheckText("token", token); err != nil {
		return petstore.Account{}, err
	}
	if err := petstore.CheckPassword(password); err != nil {
		return petstore.Account{}, err
	}
	if !auth.TokenWellFormed(prefix, token) {
		return petstore.Account{}, petstore.ErrInvalidToken()
	}
	hash, err := h.passwords.Hash(ctx, password)
	if err != nil {
		return petstore.Account{}, err
	}
	a, err := h.store.Redeem(ctx, petstore.Redemption{Kind: kind, Hash: auth.HashKey(token), PasswordHash: hash})
	if err != nil {
		return petstore.Account{}, err
	}
	h.auth.ForgetAccount(a.ID)
	return a, nil
}

// RequestPasswordReset answers at once, the same for every email, and looks the
// account up and mails it afterwards (resets.start), so that neither the words nor
// the time of the answer tell whether the email has an account.
func (h *Handler) RequestPasswordReset(ctx context.Context, req *oas.PasswordResetRequest) (oas.RequestPasswordResetRes, error) {
	email, err := petstore.CleanNewEmail(req.Email)
	if err != nil {
		return nil, err
	}
	if h.mailer == nil {
		return nil, errNoResetByMail
	}
	h.resets.start(ctx, h.log, func(ctx context.Context) { h.mailReset(ctx, email) })
	return &oas.PasswordResetRequested{Message: resetRequested}, nil
}

// mailReset mails a reset link to the account with email when it has a password and
// is enabled; anything else ends quietly.
func (h *Handler) mailReset(ctx context.Context, raw string) {
	email, err := petstore.CleanEmail(raw)
	if err != nil {
		return
	}
	a, hash, err := h.store.AccountByEmail(ctx, email)
	if err != nil || hash == "" || a.Disabled {
		if err != nil && petstore.ErrorCode(err) != petstore.ENotFound {
			h.log.WarnContext(ctx, "password reset: look up the account", "err", err)
		}
		return
	}
	// An address is sent as many reset mails as an email has failed logins, then one a
	// minute: requests from many addresses cannot flood one mailbox.
	sum := sha256.Sum256([]byte(petstore.EmailKey(a.Email)))
	if _, ok := h.bookFailure(ctx, "reset:"+hex.EncodeToString(sum[:16])); !ok {
		h.log.WarnContext(ctx, "password reset: too many for this account; no mail", "account_id", a.ID)
		return
	}
	token, tokenHash := auth.NewToken(auth.ResetPrefix)
	expires := h.now().Add(petstore.ResetLifetime).UTC().Truncate(time.Second)
	if err := h.store.CreatePasswordReset(ctx, petstore.NewToken{Kind: petstore.TokenReset, Email: a.Email,
		Hash: tokenHash, ExpiresAt: expires}); err != nil {
		h.log.WarnContext(ctx, "password reset: store the token", "err", err, "account_id", a.ID)
		return
	}
	if err := h.mailer.Send(ctx, resetMail(a.Email, h.link(resetPath, token), expires)); err != nil {
		h.log.WarnContext(ctx, "password reset: mail the link", "err", err, "account_id", a.ID)
	}
}
