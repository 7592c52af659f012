package petstore

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// Error is the error of every answer outside 2xx. Get it with errors.As and branch on
// Code:
//
//	var apiErr *petstore.Error
//	if errors.As(err, &apiErr) && apiErr.Code == petstore.CodeInsufficientStock { … }
//
// Errors of the network or of a canceled context are not *Error; they come back as the
// net/http client gave them.
type Error struct {
	// Status is the HTTP status code of the answer.
	Status int
	// Code is the machine-readable reason. It is empty when the answer did not come from
	// the service in its error shape (a proxy's error page, say).
	Code ErrorCode
	// Message is the service's explanation, for people; never branch on it.
	Message string
	// Details says what is wrong with which field, for CodeValidationFailed.
	Details []Detail
	// RequestID is the X-Request-Id of the answer: quote it to the service's operators.
	RequestID string
	// RetryAfter is how long the service asked to wait before trying again (429, 503),
	// or 0 when it did not say.
	RetryAfter time.Duration
	// Scope is the scope the call needed and the key lacks, with CodeInsufficientScope:
	// the scope of the answer's WWW-Authenticate: Bearer error="insufficient_scope",
	// scope="…". Make a key with it, or use one that has it. Empty when the answer
	// names no scope.
	Scope Scope
}

// Detail is what is wrong with one field of a refused request.
type Detail struct {
	Field   string // the field or parameter, such as "quantity"
	Problem string // what is wrong with it, such as "must be at most 100"
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "petstore: %d", e.Status)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	fmt.Fprintf(&b, ": %s", e.Message)
	for i, d := range e.Details {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		fmt.Fprintf(&b, "%s%s: %s", sep, d.Field, d.Problem)
	}
	if len(e.Details) > 0 {
		b.WriteString(")")
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

// ErrorCode is the machine-readable reason of an Error. The list is open: a newer
// service may answer a code this package has no constant for, so treat an unknown code
// by the Error's Status.
type ErrorCode string

// The codes the service documents, with the status each comes with.
const (
	CodeUnauthorized         ErrorCode = "unauthorized"           // 401: no key, or a wrong, revoked or expired one
	CodeForbidden            ErrorCode = "forbidden"              // 403: the account's role may not make this call
	CodeInsufficientScope    ErrorCode = "insufficient_scope"     // 403: the key lacks the call's scope; see Scope
	CodeNotFound             ErrorCode = "not_found"              // 404
	CodeMethodNotAllowed     ErrorCode = "method_not_allowed"     // 405
	CodeInvalidJSON          ErrorCode = "invalid_json"           // 400
	CodeInvalidContentType   ErrorCode = "invalid_content_type"   // 400
	CodeValidationFailed     ErrorCode = "validation_failed"      // 400: see Details
	CodeConflict             ErrorCode = "conflict"               // 409: the name or email is taken, or the resource is in use
	CodeInsufficientStock    ErrorCode = "insufficient_stock"     // 409: an order asks for more than the stock (sold out included)
	CodeInvalidTransition    ErrorCode = "invalid_transition"     // 409: a status change the rules forbid
	CodeNotForSale           ErrorCode = "not_for_sale"           // 409: the pet has no price, so it cannot be ordered
	CodeLastAdmin            ErrorCode = "last_admin"             // 409: the last enabled admin is neither demoted nor disabled
	CodeInvalidToken         ErrorCode = "invalid_token"          // 400: an invitation's or reset's link is unknown, used, expired or replaced
	CodeGone                 ErrorCode = "gone"                   // 410: a deprecated operation past its sunset
	CodePayloadTooLarge      ErrorCode = "payload_too_large"      // 413: a body (a photo: 10 MiB) or an image (40 megapixels) too large
	CodeUnsupportedMediaType ErrorCode = "unsupported_media_type" // 415: a photo neither JPEG, PNG nor WebP, or not what its Content-Type says
	CodeRangeNotSatisfiable  ErrorCode = "range_not_satisfiable"  // 416: a Range past the end of a photo
	CodeInvalidImage         ErrorCode = "invalid_image"          // 400: a photo's bytes are truncated or corrupt
	CodeRequestTimeout       ErrorCode = "request_timeout"        // 408: the body came slower than the server allows; nothing was done
	CodeIdempotencyKeyReused ErrorCode = "idempotency_key_reused" // 422: the key was used with another order
	CodeRateLimited          ErrorCode = "rate_limited"           // 429: see RetryAfter
	CodeTooManyStreams       ErrorCode = "too_many_streams"       // 429: the account has as many event streams open as it may; close one
	CodeInternal             ErrorCode = "internal"               // 500: quote RequestID
	CodeNotImplemented       ErrorCode = "not_implemented"        // 501
	CodeUnavailable          ErrorCode = "unavailable"            // 503: see RetryAfter
)

// errorFrom reads an answer outside 2xx. It never fails: a body that is not the
// service's error shape still gives an Error with the status.
func errorFrom(res *http.Response) *Error {
	e := &Error{
		Status:     res.StatusCode,
		Message:    http.StatusText(res.StatusCode),
		RequestID:  res.Header.Get("X-Request-Id"),
		RetryAfter: retryAfter(res.Header),
		Scope:      Scope(bearerParam(res.Header.Values("WWW-Authenticate"), "scope")),
	}
	var body api.Error
	data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if json.Unmarshal(data, &body) != nil || body.Code == "" {
		return e
	}
	e.Code, e.Message = ErrorCode(body.Code), body.Message
	if body.Details != nil {
		for _, d := range *body.Details {
			e.Details = append(e.Details, Detail{Field: d.Field, Problem: d.Problem})
		}
	}
	return e
}

// bearerParam returns the parameter name of the Bearer challenge among the
// WWW-Authenticate values, or "" when there is none. A value may hold several
// challenges (RFC 9110 §11.6.1), and a quoted parameter may hold commas and escapes:
// `Basic realm="a, b", Bearer error="insufficient_scope", scope="pets:write"`.
func bearerParam(values []string, name string) string {
	for _, v := range values {
		scheme := ""
	header:
		for {
			v = strings.TrimLeft(v, " \t,")
			word := leading(v, tokenChars)
			if word == "" {
				break header // the end, or not the header's grammar: the rest cannot be read safely
			}
			v = strings.TrimLeft(v[len(word):], " \t")
			rest, isParam := strings.CutPrefix(v, "=")
			rest = strings.TrimLeft(rest, " \t")
			isParam = isParam && rest != "" && (rest[0] == '"' || leading(rest[:1], tokenChars) != "")
			switch {
			case isParam: // name=value, of the current challenge
				value, after, ok := paramValue(rest)
				if !ok {
					break header
				}
				if strings.EqualFold(scheme, "Bearer") && strings.EqualFold(word, name) {
					return value
				}
				v = after
				continue
			case strings.HasPrefix(v, "="): // the padding of a token68, such as Basic's credentials
				v = strings.TrimLeft(v, "=")
			default: // an auth-scheme starts a challenge (or a token68 without padding)
				scheme = word
			}
		}
	}
	return ""
}

// tokenChars are the characters of a token (RFC 9110 §5.6.2), and "/" of a token68.
const tokenChars = "!#$%&'*+-./^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// leading is the longest prefix of s made of chars.
func leading(s, chars string) string { return s[:len(s)-len(strings.TrimLeft(s, chars))] }

// paramValue reads a token or a quoted string (RFC 9110 §5.6.4) from the start of s,
// and returns it unquoted with what follows it.
func paramValue(s string) (value, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		token := leading(s, tokenChars)
		return token, s[len(token):], token != ""
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i++; i == len(s) {
				return "", "", false
			}
			b.WriteByte(s[i])
		case '"':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", false // no closing quote
}

// retryAfter reads Retry-After, in seconds (what the service sends) or as an HTTP date.
// A number of seconds too large for a Duration is the longest Duration, never one that
// wrapped around to a short wait.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" { // delay-seconds: digits only (RFC 9110 §10.2.3)
		s, err := strconv.ParseInt(v, 10, 64) // on digits, it fails only out of range
		if err != nil || s > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
