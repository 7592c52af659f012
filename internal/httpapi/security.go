package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/acme-pets/petstore/internal/petstore"
	"github.com/acme-pets/petstore/oas"
)

// adminOnly lists the operations that need the admin role (the contract's role
// table); every other secured operation is open to any account.
var adminOnly = map[oas.OperationName]bool{
	oas.CreatePetOperation:       true,
	oas.ReplacePetOperation:      true,
	oas.UpdatePetOperation:       true,
	oas.DeletePetOperation:       true,
	oas.CreateCategoryOperation:  true,
	oas.ReplaceCategoryOperation: true,
	oas.DeleteCategoryOperation:  true,
	oas.SetInventoryOperation:    true,
	oas.UpdateOrderOperation:     true,
}

var errForbidden = petstore.Errorf(petstore.EForbidden, "This operation needs the admin role.")

// security implements oas.SecurityHandler. The generated server calls it before it
// reads parameters or the body, so 401 and then 403 come before any validation.
type security struct{ h *Handler }

var _ oas.SecurityHandler = security{}

func (s security) HandleBearerAuth(ctx context.Context, op oas.OperationName, t oas.BearerAuth) (context.Context, error) {
	ri := info(ctx)
	if ri.badAuthScheme {
		return ctx, errUnauthorized
	}
	if ri.keyChecked {
		return ctx, authorize(ri, op, ri.principal)
	}
	p, err := s.h.auth.Authenticate(ctx, t.Token)
	if err != nil {
		return ctx, asAuthFailure(err)
	}
	return ctx, authorize(ri, op, p)
}

func (s security) HandleBasicAuth(ctx context.Context, op oas.OperationName, t oas.BasicAuth) (context.Context, error) {
	ri := info(ctx)
	if ri.badAuthScheme {
		return ctx, errUnauthorized
	}
	email, err := petstore.CleanEmail(t.Username)
	// Failed logins are counted per email, known or not (so that the count tells
	// nothing about which emails have accounts); past the limit, the password is not
	// even checked until the wait is over.
	// The email is hashed: a shared limit keeps its keys in Redis, which need not hold
	// addresses.
	sum := sha256.Sum256([]byte(petstore.EmailKey(email)))
	key := "login:" + hex.EncodeToString(sum[:16])
	if s.h.failedLogins != nil {
		if d, _ := s.h.failedLogins.Peek(ctx, key); !d.Allowed {
			ri.retryAfter = max(ceilSeconds(d.RetryAfter), 1)
			return ctx, errTooManyFailures
		}
	}
	// Every refusal below costs one password check, whether the email is malformed,
	// unknown, key-only or known: the answer's time tells nothing about accounts.
	var (
		acct petstore.Account
		hash string
	)
	if err == nil {
		acct, hash, err = s.h.store.AccountByEmail(ctx, email)
		if err != nil && petstore.ErrorCode(err) != petstore.ENotFound {
			return ctx, asAuthFailure(err)
		}
	}
	ok, cerr := s.h.passwords.Check(ctx, t.Password, hash)
	switch {
	case cerr != nil:
		return ctx, asAuthFailure(cerr)
	case err != nil || !ok:
		if s.h.failedLogins != nil {
			_, _ = s.h.failedLogins.Allow(ctx, key)
		}
		s.h.log.WarnContext(ctx, "failed login", "client", ri.client, "account_id", acct.ID, "request_id", ri.id)
		return ctx, errBadPassword
	}
	return ctx, authorize(ri, op, petstore.Principal{AccountID: acct.ID, Role: acct.Role})
}

var errTooManyFailures = petstore.Errorf(petstore.ERateLimited, "Too many failed logins for this email; wait before the next try.")

var errBadPassword = petstore.Errorf(petstore.EUnauthorized, "The email or password is wrong.")

// authorize records the principal for the rest of the request and checks its role.
func authorize(ri *requestInfo, op oas.OperationName, p petstore.Principal) error {
	ri.principal = p
	if adminOnly[op] && !p.IsAdmin() {
		return errForbidden
	}
	if ri.repeatedHeader != "" {
		return errRepeated(ri.repeatedHeader)
	}
	return nil
}

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
