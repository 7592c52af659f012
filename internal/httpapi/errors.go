package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/go-faster/jx"
	ht "github.com/ogen-go/ogen/http"
	"github.com/ogen-go/ogen/ogenerrors"
	"github.com/ogen-go/ogen/validate"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// statusByCode is the one table that turns error codes into HTTP statuses.
var statusByCode = map[string]int{
	petstore.EUnauthorized:         http.StatusUnauthorized,
	petstore.EForbidden:            http.StatusForbidden,
	petstore.EInsufficientScope:    http.StatusForbidden,
	petstore.ENotFound:             http.StatusNotFound,
	petstore.EMethodNotAllowed:     http.StatusMethodNotAllowed,
	petstore.EInvalidJSON:          http.StatusBadRequest,
	petstore.EInvalidContentType:   http.StatusBadRequest,
	petstore.EValidationFailed:     http.StatusBadRequest,
	petstore.EInvalidToken:         http.StatusBadRequest,
	petstore.EConflict:             http.StatusConflict,
	petstore.EInsufficientStock:    http.StatusConflict,
	petstore.EInvalidTransition:    http.StatusConflict,
	petstore.ENotForSale:           http.StatusConflict,
	petstore.ELastAdmin:            http.StatusConflict,
	petstore.EGone:                 http.StatusGone,
	petstore.EPayloadTooLarge:      http.StatusRequestEntityTooLarge,
	petstore.EUnsupportedMedia:     http.StatusUnsupportedMediaType,
	petstore.ERangeNotSatisfiable:  http.StatusRequestedRangeNotSatisfiable,
	petstore.EInvalidImage:         http.StatusBadRequest,
	petstore.ERequestTimeout:       http.StatusRequestTimeout,
	petstore.EIdempotencyKeyReused: http.StatusUnprocessableEntity,
	petstore.ERateLimited:          http.StatusTooManyRequests,
	petstore.ETooManyStreams:       http.StatusTooManyRequests,
	petstore.EInternal:             http.StatusInternalServerError,
	petstore.ENotImplemented:       http.StatusNotImplemented,
	petstore.EUnavailable:          http.StatusServiceUnavailable,
}

// Errors every layer may answer with.
var (
	errUnauthorized = petstore.Errorf(petstore.EUnauthorized, "A valid API key is required: send Authorization: Bearer <API_KEY>.")
	errInternal     = petstore.Errorf(petstore.EInternal, "Internal error.")
	errUnavailable  = petstore.Errorf(petstore.EUnavailable, "The service is unavailable; retry later.")
)

// errorResponse is the one place where an error becomes what the client sees.
// Anything that is not a *petstore.Error is logged and answered as internal, or as
// unavailable when the request ran out of time or the store calls the failure a
// passing one (unavailable reports that; it may be nil), revealing nothing. A
// refusal of authentication (authError) adds what it knows to the headers.
func errorResponse(ctx context.Context, log *slog.Logger, unavailable func(error) bool, err error) *oas.DefaultStatusCodeWithHeaders {
	var (
		e       *petstore.Error
		failure authFailure
		sec     *ogenerrors.SecurityError
		auth    *authError
	)
	errors.As(err, &auth)
	switch {
	case errors.As(err, &e):
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || ctx.Err() != nil:
		// The request ran out of its budget (or its client left) and the store failed
		// for it: the service could not do it in time.
		e = errUnavailable
	case unavailable != nil && unavailable(err):
		// The database is out of reach, shutting down, full or busy: retry later.
		log.WarnContext(ctx, "database unavailable", "err", err, "request_id", RequestID(ctx))
		e = errUnavailable
	case errors.Is(err, ht.ErrNotImplemented):
		e = petstore.Errorf(petstore.ENotImplemented, "This operation is not implemented yet.")
	case !errors.As(err, &failure) && errors.As(err, &sec):
		// The generated server's own finding: no usable Authorization header.
		e = errUnauthorized
	default:
		log.ErrorContext(ctx, "internal error", "err", err, "request_id", RequestID(ctx))
		e = errInternal
	}
	r := toResponse(e)
	if auth != nil && auth.retryAfter > 0 {
		r.RetryAfter = oas.NewOptInt32(int32(auth.retryAfter))
	}
	switch {
	case e.Code == petstore.EInsufficientScope && e.Scope != "":
		// RFC 6750, 3.1: the scope the request needed.
		r.WWWAuthenticate = oas.NewOptString(`Bearer error="insufficient_scope", scope="` + e.Scope + `"`)
	case e.Code == petstore.EInsufficientScope:
		// No one scope would do ("*" for a limited key): the message says what would.
		r.WWWAuthenticate = oas.NewOptString(`Bearer error="insufficient_scope"`)
	case e.Code == petstore.EUnauthorized && auth != nil && auth.invalidToken:
		// RFC 6750, 3.1: a key was sent, and it will not do.
		r.WWWAuthenticate = oas.NewOptString(`Bearer error="invalid_token"`)
	}
	return r
}

// authFailure marks an error of the store met while authenticating, so that it is
// answered as internal rather than as the 401 of a security error.
type authFailure struct{ err error }

func (f authFailure) Error() string { return "authenticate: " + f.err.Error() }
func (f authFailure) Unwrap() error { return f.err }

func toResponse(e *petstore.Error) *oas.DefaultStatusCodeWithHeaders {
	status, ok := statusByCode[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	r := &oas.DefaultStatusCodeWithHeaders{
		StatusCode: status,
		Response:   oas.Error{Code: e.Code, Message: e.Message, Status: int32(status)},
	}
	for _, d := range e.Details {
		r.Response.Details = append(r.Response.Details, oas.ErrorDetail{Field: d.Field, Problem: d.Problem})
	}
	switch status {
	case http.StatusUnauthorized:
		r.WWWAuthenticate = oas.NewOptString("Bearer")
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		r.RetryAfter = oas.NewOptInt32(1)
	}
	return r
}

// writeError writes an error response outside the generated server (routing,
// middleware, panics) in exactly the shape the generated server uses.
func writeError(w http.ResponseWriter, e *petstore.Error) {
	r := toResponse(e)
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	if v, ok := r.WWWAuthenticate.Get(); ok {
		h.Set("WWW-Authenticate", v)
	}
	if v, ok := r.RetryAfter.Get(); ok && h.Get("Retry-After") == "" { // a caller's own wait stands
		h.Set("Retry-After", strconv.Itoa(int(v)))
	}
	w.WriteHeader(r.StatusCode)
	var enc jx.Encoder
	r.Response.Encode(&enc)
	_, _ = w.Write(enc.Bytes())
}

// decodeError classifies the errors the generated server meets while reading
// parameters and bodies (passed to oas.WithErrorHandler). readTimeout is the
// server's time for a whole request, told to a client whose body came slower;
// schemas gives the document's request schemas, which name the fields at fault.
func decodeError(log *slog.Logger, readTimeout time.Duration, schemas func() *requestSchemas) func(ctx context.Context, w http.ResponseWriter, r *http.Request, err error) {
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request, err error) {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The connection's read deadline (http.Server.ReadTimeout) passed while the
			// body was arriving: a timeout, not a bad body (RFC 9110, 15.5.9). The rest
			// of the body cannot be read, so the connection ends with this answer.
			w.Header().Set("Connection", "close")
			writeError(w, requestTimeout(readTimeout))
			return
		}
		writeError(w, classifyDecodeError(ctx, log, schemas(), r, err))
	}
}

// requestTimeout is the refusal of a request whose body did not arrive within
// readTimeout (0 when not known).
func requestTimeout(readTimeout time.Duration) *petstore.Error {
	if readTimeout <= 0 {
		return petstore.Errorf(petstore.ERequestTimeout, "The request body did not arrive in time; send it again without pauses.")
	}
	return petstore.Errorf(petstore.ERequestTimeout, "The request body did not arrive within %s, the time the server allows for a whole request; send it again without pauses.", readTimeout)
}

func classifyDecodeError(ctx context.Context, log *slog.Logger, rs *requestSchemas, r *http.Request, err error) *petstore.Error {
	var (
		tooLarge *http.MaxBytesError
		ctype    *validate.InvalidContentTypeError
		body     *ogenerrors.DecodeBodyError
		params   *ogenerrors.DecodeParamError
		fields   *validate.Error
		repeated *repeatedKeyError
		lone     *loneSurrogateError
	)
	switch {
	case errors.As(err, &repeated):
		return petstore.Invalid(repeated.field, "appears more than once; send each member once")
	case errors.As(err, &lone):
		return petstore.Invalid(lone.field, "must be valid UTF-8: "+lone.escape+
			" is half of a UTF-16 surrogate pair, not a character (escape a character beyond U+FFFF as a pair, such as \\ud83d\\udc36)")
	case errors.As(err, &tooLarge):
		return petstore.Errorf(petstore.EPayloadTooLarge, "The request body is larger than %d bytes.", tooLarge.Limit)
	case errors.As(err, &ctype) && info(ctx).operation() == uploadPetPhoto:
		return errPhotoType
	case errors.As(err, &ctype):
		return errContentType
	case errors.Is(err, validate.ErrBodyRequired):
		if r.Header.Get("Content-Type") == "" {
			return errContentType
		}
		return petstore.Errorf(petstore.EInvalidJSON, "The request body is empty; send a JSON object.")
	case errors.As(err, &body) && !json.Valid(body.Body):
		return petstore.Errorf(petstore.EInvalidJSON, "The request body is not valid JSON.")
	case errors.As(err, &body):
		return bodyProblems(ctx, log, rs, r, body.Body, err)
	case errors.As(err, &params):
		return paramProblem(rs, r, params)
	case errors.As(err, &fields):
		// The validators' findings in a decoded body. The generated server leaves the
		// body it read in r.Body (or, before reading, strictBody keeps what it saw);
		// it is at most the body limit, already in memory.
		var data []byte
		if b, ok := r.Body.(*strictBody); ok {
			data = b.seen
		} else if r.Body != nil {
			data, _ = io.ReadAll(r.Body)
		}
		return bodyProblems(ctx, log, rs, r, data, err)
	case r.Header.Get("Content-Type") == "" && r.ContentLength != 0:
		return errContentType
	}
	// A client's malformed request is not the service's error: it must not be able to
	// flood the error log.
	log.InfoContext(ctx, "unclassified request error", "err", err, "request_id", RequestID(ctx))
	return petstore.Errorf(petstore.EValidationFailed, "The request is not valid.")
}

// bodyProblems refuses a body (valid JSON) that the generated server refused, err,
// naming each field at fault by the operation's schema, in the document's terms.
func bodyProblems(ctx context.Context, log *slog.Logger, rs *requestSchemas, r *http.Request, data []byte, err error) *petstore.Error {
	var details []petstore.Detail
	if rs != nil {
		details = rs.body(info(ctx).operation(), r, data)
	}
	var fields *validate.Error
	if len(details) == 0 && errors.As(err, &fields) {
		// The validators name the fields (not their paths) and some of their problems.
		for _, f := range fields.Fields {
			details = append(details, petstore.Detail{Field: f.Name, Problem: problem(f.Error)})
		}
	}
	switch len(details) {
	case 0:
		// The schema finds nothing the generator did: its own words name its internals
		// (type aliases, callbacks, Go's layouts), so they go to the debug log only.
		log.DebugContext(ctx, "request body does not match the schema", "err", err, "request_id", RequestID(ctx))
		return petstore.Errorf(petstore.EValidationFailed, "The request body does not match the schema of this operation; see the OpenAPI document.")
	case 1:
		if details[0].Field == "" {
			return petstore.Errorf(petstore.EValidationFailed, "The request body %s; see the OpenAPI document.", details[0].Problem)
		}
		return petstore.Invalid(details[0].Field, details[0].Problem)
	}
	return &petstore.Error{Code: petstore.EValidationFailed, Message: "The request is not valid.", Details: details}
}

// paramProblem refuses a parameter the generated server refused, naming it and saying
// what is wrong with its value by the operation's schema.
func paramProblem(rs *requestSchemas, r *http.Request, e *ogenerrors.DecodeParamError) *petstore.Error {
	p := ""
	if rs != nil {
		route := info(r.Context()).route
		p = rs.param(r, route.OperationID(), pathParams(route.PathPattern(), route.Args()), string(e.In), e.Name)
	}
	if p == "" {
		p = problem(e.Err)
	}
	return petstore.Invalid(e.Name, p)
}

var errPhotoType = petstore.Errorf(petstore.EUnsupportedMedia, "Send the photo as its bytes with Content-Type image/jpeg, image/png or image/webp.")

var errContentType = petstore.Errorf(petstore.EInvalidContentType, "Send the body as Content-Type: application/json.")

// problem words a parameter's error when the document's schema finds nothing wrong
// with the value (which should not happen): by the generator's typed errors only,
// never by its wording.
func problem(err error) string {
	var (
		num     *strconv.NumError
		minLen  *validate.MinLengthError
		maxLen  *validate.MaxLengthError
		pattern *validate.NoRegexMatchError
		dup     *validate.DuplicateItemsError
	)
	switch {
	case errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange):
		return "is out of range"
	case errors.As(err, &num) && num.Func == "ParseBool":
		return "must be true or false"
	case errors.As(err, &num):
		return "must be a number"
	case errors.As(err, &minLen):
		return fmt.Sprintf("must be at least %d long", minLen.MinLength)
	case errors.As(err, &maxLen):
		return fmt.Sprintf("must be at most %d long", maxLen.MaxLength)
	case errors.As(err, &pattern):
		return "has characters that are not allowed here; see the OpenAPI document"
	case errors.As(err, &dup):
		return "must not repeat an item"
	case errors.Is(err, validate.ErrFieldRequired):
		return "is required"
	}
	return "is not valid here; see the OpenAPI document"
}

// listUnits are what the bounded lists of requests hold, by field: the validators
// report a list's length as they report a string's.
var listUnits = map[string]string{"ids": "id", "scopes": "scope", "events": "event type", "tags": "tag", "tag": "tag"}

// lengthProblem words a length bound ("least" or "most" n) of field: a list's in its
// items (list: the bound is minItems or maxItems; a list listUnits does not name holds
// items), any other's (a string's) in characters.
func lengthProblem(field, bound string, n int, list bool) string {
	plural := "s"
	if n == 1 {
		plural = ""
	}
	unit, ok := listUnits[field]
	if !ok && list {
		unit, ok = "item", true
	}
	if ok {
		return fmt.Sprintf("must hold at %s %d %s%s", bound, n, unit, plural)
	}
	return fmt.Sprintf("must be at %s %d character%s long", bound, n, plural)
}
