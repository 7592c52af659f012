package httpapi

import (
	"context"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// requestInfo is what the layers of one request learn about it, kept in one value in
// the context so that logs and metrics can read what routing and authentication found.
type requestInfo struct {
	id string
	// route is the operation FindPath found for the request (the zero Route when
	// none): the middleware routes once, and the generated server serves the route
	// it was given (Server.serveAPI) rather than routing again.
	route     oas.Route
	principal petstore.Principal
	// deprecation holds the headers of a getPetById response.
	deprecation deprecationHeaders
	// keyChecked is set when the rate limiter already checked the Bearer key:
	// principal holds its owner, or keyErr why it was refused (unknown, expired), so
	// the security handler need not look again.
	keyChecked bool
	keyErr     error
	// client is the caller's address, for requests with a password (see credentials).
	client string
	// repeatedHeader names a single-valued header sent more than once; authorize
	// refuses the request once its caller is known.
	repeatedHeader string
	// retryAfter, in seconds, overrides the Retry-After of an error answer.
	retryAfter int
	// missingScope is the scope the key lacked, for WWW-Authenticate.
	missingScope string
	// invalidToken is set when a Bearer key was sent and refused (malformed, unknown,
	// revoked, expired), for WWW-Authenticate's error="invalid_token".
	invalidToken bool
	// badAuthScheme is set when the Authorization header is not exactly "Bearer …" or
	// "Basic …" (the generated server accepts any letter case; the contract does not).
	badAuthScheme bool
}

// operation is the id of the request's operation, or "" when no route matched.
func (ri *requestInfo) operation() string { return ri.route.OperationID() }

type infoKey struct{}

func withInfo(ctx context.Context, ri *requestInfo) context.Context {
	return context.WithValue(ctx, infoKey{}, ri)
}

func info(ctx context.Context) *requestInfo {
	if ri, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return ri
	}
	return &requestInfo{}
}

// RequestID returns the request id of the request ctx belongs to, or "".
func RequestID(ctx context.Context) string { return info(ctx).id }

// principal returns who makes the request; the generated server calls the security
// handler, which records it, before any handler that needs it.
func principal(ctx context.Context) petstore.Principal { return info(ctx).principal }
