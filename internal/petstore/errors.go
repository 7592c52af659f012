// Package petstore is the domain of the Pet Store service: its types, the store rules
// as plain functions, the error codes, and the repository interfaces that storage
// implements. It imports no storage and no HTTP.
package petstore

import (
	"errors"
	"fmt"
)

// Error codes: the machine-readable part of every error the API returns. The HTTP
// layer maps each to a status in one table.
const (
	EUnauthorized         = "unauthorized"
	EForbidden            = "forbidden"
	EInsufficientScope    = "insufficient_scope"
	ENotFound             = "not_found"
	EMethodNotAllowed     = "method_not_allowed"
	EInvalidJSON          = "invalid_json"
	EInvalidContentType   = "invalid_content_type"
	EValidationFailed     = "validation_failed"
	EConflict             = "conflict"
	EInsufficientStock    = "insufficient_stock"
	EInvalidTransition    = "invalid_transition"
	ENotForSale           = "not_for_sale"
	ELastAdmin            = "last_admin"
	EInvalidToken         = "invalid_token"
	EGone                 = "gone"
	EPayloadTooLarge      = "payload_too_large"
	EUnsupportedMedia     = "unsupported_media_type"
	ERangeNotSatisfiable  = "range_not_satisfiable"
	EInvalidImage         = "invalid_image"
	ERequestTimeout       = "request_timeout"
	EIdempotencyKeyReused = "idempotency_key_reused"
	ERateLimited          = "rate_limited"
	ETooManyStreams       = "too_many_streams"
	EInternal             = "internal"
	ENotImplemented       = "not_implemented"
	EUnavailable          = "unavailable"
)

// Error is an error the caller may see: a code, a message safe to show, and for
// validation errors the fields at fault. Anything that is not an *Error is internal.
type Error struct {
	Code    string
	Message string
	Details []Detail
	// Scope is the scope an EInsufficientScope refusal found lacking, for the
	// answer's WWW-Authenticate (RFC 6750).
	Scope string
}

// Detail names one field or parameter that broke its rules. Stores keep the details
// of a refusal recorded on an Idempotency-Key as JSON, in these names.
type Detail struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

// Error is the code and the message. It names no package: whoever shows it says
// where it comes from (the command prefixes "petstore: " to every failure, which once
// read "petstore: --email: petstore: validation_failed: …").
func (e *Error) Error() string {
	return e.Code + ": " + e.Message
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a validation_failed error about one field.
func Invalid(field, problem string) *Error {
	return &Error{
		Code:    EValidationFailed,
		Message: "The request is not valid: " + field + " " + problem + ".",
		Details: []Detail{{Field: field, Problem: problem}},
	}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, and EInternal
// otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}
