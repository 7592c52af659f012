package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"time"

	"github.com/acme-pets/petstore/api"
	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/internal/ratelimit"
)

var errForbidden = petstore.Errorf(petstore.EForbidden, "This operation needs the admin role.")

// security implements oas.SecurityHandler. The generated server calls it before it
// reads parameters or the body, so 401 and then 403 come before any validation.
type security struct {
	h *Handler
	// roles are the roles that may call each operation, by operation id: the x-roles
	// of the document (api.Operations), so that the document is the role table.
	roles map[string][]petstore.Role
	// scopes are the scope a key needs for each operation (its x-scopes).
	scopes map[string]string
	// ownKey holds, for the operations a key calls on itself without their scope
	// (x-scopes-own-key: revokeApiKey), the position of the path argument that
	// names the key.
	ownKey map[string]int
}

// rolesByOperation reads the role table out of the document's operations.
func rolesByOperation(ops []api.Operation) map[string][]petstore.Role {
	roles := make(map[string][]petstore.Role, len(ops))
	for _, op := range ops {
		for _, r := range op.Roles {
			roles[op.ID] = append(roles[op.ID], petstore.Role(r))
		}
	}
	return roles
}

// scopesByOperation reads the scope table out of the document's operations.
func scopesByOperation(ops []api.Operation) map[string]string {
	scopes := make(map[string]string, len(ops))
	for _, op := range ops {
		scopes[op.ID] = op.Scope
	}
	return scopes
}

// ownKeyByOperation reads, out of the document's operations, which of them a key
// calls on itself without their scope, and where the path names the key.
func ownKeyByOperation(ops []api.Operation) map[string]int {
	own := map[string]int{}
	for _, op := range ops {
		if op.OwnKeyParam != "" {
			own[op.ID] = op.OwnKeyArg
		}
	}
	return own
}

// keyPolicy is what a new API key may be granted: the scopes each role allows (the
// document's, api.RoleScopes) and the operator's longest lifetime (0: none).
type keyPolicy struct {
	allowed     map[string][]string // by role
	maxLifetime time.Duration
}

var _ oas.SecurityHandler = security{}

func (s security) HandleBearerAuth(ctx context.Context, op oas.OperationName, t oas.BearerAuth) (context.Context, error) {
	ri := info(ctx)
	k := ri.key
	if !k.done || k.token != t.Token {
		k.p, k.err = s.h.auth.Authenticate(ctx, t.Token)
		k.done, k.token = true, t.Token
		ri.key = k // an event stream checks its key again (eventStream.keyHolds)
	}
	if k.err != nil {
		if petstore.ErrorCode(k.err) == petstore.EUnauthorized {
			return ctx, &authError{err: k.err, invalidToken: true}
		}
		return ctx, asAuthFailure(k.err)
	}
	return ctx, s.authorize(ri, k.p)
}

func (s security) HandleBasicAuth(ctx context.Context, op oas.OperationName, t oas.BasicAuth) (context.Context, error) {
	ri := info(ctx)
	acct, err := s.h.checkPassword(ctx, ri, t.Username, t.Password)
	if err != nil {
		return ctx, err
	}
	if acct.Disabled {
		// Said only to whoever knows the password, as an expired key is to its holder.
		return ctx, errAccountDisabled
	}
	return ctx, s.authorize(ri, petstore.Principal{AccountID: acct.ID, Role: acct.Role})
}

// checkPassword is the one password login, of HTTP Basic and of POST /sessions: the
// account with rawEmail when password is its password (a disabled one too: the
// caller decides what to say), else errBadPassword, with the guessing limits applied.
func (h *Handler) checkPassword(ctx context.Context, ri *requestInfo, rawEmail, password string) (petstore.Account, error) {
	email, err := petstore.CleanEmail(rawEmail)
	// Failed logins are counted per email, known or not (so that the count tells
	// nothing about which emails have accounts); past the limit, the password is not
	// even checked until the wait is over.
	// The email is hashed: a shared limit keeps its keys in Redis, which need not hold
	// addresses.
	sum := sha256.Sum256([]byte(petstore.EmailKey(email)))
	booked, ok := h.bookFailure(ctx, "login:"+hex.EncodeToString(sum[:16]))
	if !ok {
		return petstore.Account{}, &authError{err: errTooManyFailures, retryAfter: max(ceilSeconds(booked.RetryAfter), 1)}
	}
	// A login that ends with no verdict on the password, or a right one, was no
	// failure: its booking is given back (to what it was, not reset: a right password
	// does not undo a guesser's failures). The client may have gone: the booking is
	// given back all the same.
	unbook := func() { _ = booked.Cancel(context.WithoutCancel(ctx)) }
	// Every refusal below costs one password check, whether the email is malformed,
	// unknown, key-only or known: the answer's time tells nothing about accounts.
	var (
		acct petstore.Account
		hash string
	)
	if err == nil {
		acct, hash, err = h.store.AccountByEmail(ctx, email)
		if err != nil && petstore.ErrorCode(err) != petstore.ENotFound {
			unbook()
			return petstore.Account{}, asAuthFailure(err)
		}
	}
	match, cerr := h.passwords.Check(ctx, password, hash)
	switch {
	case cerr != nil:
		unbook()
		return petstore.Account{}, asAuthFailure(cerr)
	case err != nil || !match:
		h.log.WarnContext(ctx, "failed login", "client", ri.client, "account_id", acct.ID, "request_id", ri.id)
		return petstore.Account{}, errBadPassword
	}
	unbook()
	return acct, nil
}

// bookFailure books a failed login of key before its password is checked, and
// reports whether the limit leaves room for it. Booking first, not counting after the
// check, is what holds the limit: every login being checked holds its booking, so
// no number of parallel guesses, from any addresses and processes, gets more checks
// than the limit has room for.
func (h *Handler) bookFailure(ctx context.Context, key string) (ratelimit.Reservation, bool) {
	if h.failedLogins == nil {
		return ratelimit.Reservation{}, true
	}
	// The limiter counts in memory while a shared store does not answer
	// (ratelimit.Failover); an error of another limiter refuses.
	r, err := h.failedLogins.Reserve(ctx, key)
	return r, err == nil && r.Allowed
}

// errTooManyFailures refuses a login past the limit of failed logins. A login counts
// as a failure until its password proves right (bookFailure), so more logins of one
// email at once than the limit allows are refused too, the owner's included: the words
// say so.
var errTooManyFailures = petstore.Errorf(petstore.ERateLimited, "Too many failed or unfinished logins for this email; wait before the next try.")

var errBadPassword = petstore.Errorf(petstore.EUnauthorized, "The email or password is wrong.")

var errAccountDisabled = petstore.Errorf(petstore.EUnauthorized, "The account is disabled; an admin may enable it again.")

// authorize records the principal for the rest of the request and checks its role
// against the operation's x-roles, then its key's scopes against the operation's
// x-scopes; then it answers the middleware's refusal of the request, if any. An
// operation without roles or a scope admits no one: a gap in the tables fails closed
// (api.Operations refuses such a document anyway).
func (s security) authorize(ri *requestInfo, p petstore.Principal) error {
	ri.principal = p
	op := ri.operation()
	if !slices.Contains(s.roles[op], p.Role) {
		return errForbidden
	}
	if scope := s.scopes[op]; scope == "" || !p.HasScope(scope) && !s.onOwnKey(ri, p) {
		e := petstore.Errorf(petstore.EInsufficientScope, "This API key lacks the scope %s, which this operation needs.", scope)
		e.Scope = scope
		return e
	}
	return ri.refusal
}

// onOwnKey reports whether the request's operation acts on the calling key itself,
// which needs no scope where the document says so (x-scopes-own-key): a key may
// always revoke itself, as signing out does, whatever its scopes; another key of the
// account still needs the operation's scope. The key's id is read from the path the
// request was routed by, as the handler will read it.
func (s security) onOwnKey(ri *requestInfo, p petstore.Principal) bool {
	i, ok := s.ownKey[ri.operation()]
	if !ok || p.KeyID == 0 {
		return false
	}
	args := ri.route.Args()
	if i < 0 || i >= len(args) {
		return false
	}
	id, err := strconv.ParseInt(args[i], 10, 64)
	return err == nil && id == p.KeyID
}

// authError is a refusal decided while authenticating, with what its answer's headers
// say beyond its code: that a Bearer key was sent and will not do (RFC 6750,
// error="invalid_token"), or how long to wait (Retry-After, in seconds).
type authError struct {
	err          error
	invalidToken bool
	retryAfter   int
}

func (e *authError) Error() string { return e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

// errRepeated refuses a request that sent a single-valued header more than once.
func errRepeated(header string) *petstore.Error { return petstore.Invalid(header, "must be sent once") }

// asAuthFailure keeps errors meant for the caller and marks the rest as failures of the
// store, which must not read as a bad key.
func asAuthFailure(err error) error {
	if petstore.ErrorCode(err) != petstore.EInternal {
		return err
	}
	return authFailure{err}
}
