package httpapi

import (
	"context"
	"sync/atomic"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// requestInfo is what the layers of one request learn about it, kept in one value in
// the context: what logs and metrics tell (id, route, principal, client), and what the
// middleware found that a later layer answers with. Refusals are not recorded here as
// flags: each is an error value, returned from where it is decided (authError,
// petstore.Error) and turned into an answer in one place (errorResponse).
type requestInfo struct {
	id string
	// route is the operation FindPath found for the request (the zero Route when
	// none): the middleware routes once, and the generated server serves the route
	// it was given (Server.serveAPI) rather than routing again.
	route     oas.Route
	principal petstore.Principal
	// client is the caller's address, for requests with a password (see credentials).
	client string
	// key is the rate limiter's check of the Bearer key, which the security handler
	// reuses rather than look the key up again.
	key keyCheck
	// refusal is the middleware's refusal of the request (a header sent twice),
	// answered once the caller is authenticated and authorized, as every other check
	// of the request is (security.authorize).
	refusal error
	// conn is the connection's context, without the request's budget: an event
	// stream's, which outlives the budget.
	conn context.Context
	// w is the response's writer, below the generated server's: the event stream
	// writes and flushes its messages there itself.
	w *responseWriter
	// inFlight is the server's count of API requests being served, which this one
	// is in until leftInFlight (an event stream leaves it, Handler.leaveInFlight).
	inFlight     *atomic.Int64
	leftInFlight bool
	// handwritten and pattern name the operation and path of a request served
	// outside the generated server (getPhoto), which has no route.
	handwritten, pattern string

	// idHeader and writer are the storage of the X-Request-Id header's value and of
	// w, allocated with the request's info rather than each on its own.
	idHeader [1]string
	writer   responseWriter
	// budget is the context of an API request (budgetCtx), which carries this info.
	budget budgetCtx
}

// keyCheck is the verdict on one Bearer key: its owner, or why it was refused
// (unknown, expired).
type keyCheck struct {
	done  bool
	token string
	p     petstore.Principal
	err   error
}

// operation is the id of the request's operation, or "" when no route matched.
func (ri *requestInfo) operation() string {
	if ri.handwritten != "" {
		return ri.handwritten
	}
	return ri.route.OperationID()
}

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
