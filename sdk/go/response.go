package petstore

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Response is what the service's answer to a call said besides its body: the status,
// the headers, and the headers worth reading parsed. Get it with WithResponse, or from
// a Page.
type Response struct {
	// StatusCode is the HTTP status of the answer, such as 201; 0 when none came (a
	// network error, a canceled context).
	StatusCode int
	// Header holds every header of the answer.
	Header http.Header
	// RequestID is the answer's X-Request-Id: the service's log lines of this call
	// carry it.
	RequestID string
	// RateLimits are the limits in force and what is left of each (RateLimit-Policy
	// and RateLimit), counted per account; none when the operator turned them off.
	RateLimits []RateLimit
	// Location is the resource a create made (Location, resolved against the request's
	// URL), or nil.
	Location *url.URL
}

// RateLimit is one limit the service applies to the caller (the IETF
// httpapi-ratelimit-headers: RateLimit-Policy, RateLimit).
type RateLimit struct {
	// Policy names the limit: "default" for every call, "credentials" for sign-ups and
	// calls with a password.
	Policy string
	// Quota is how many calls the limit allows per Window; 0 when the service did not
	// say.
	Quota  int
	Window time.Duration
	// Remaining is how many calls are left before the service answers 429, and Reset
	// how long until the allowance is whole again; -1 and 0 when the service did not
	// say.
	Remaining int
	Reset     time.Duration
}

// RateLimit returns the limit named policy (such as "default") of the answer, and
// whether the answer had it.
func (r *Response) RateLimit(policy string) (RateLimit, bool) {
	if r == nil {
		return RateLimit{}, false
	}
	for _, l := range r.RateLimits {
		if l.Policy == policy {
			return l, true
		}
	}
	return RateLimit{}, false
}

// CallOption changes one call, where Option changes every call of a Client. Every
// method takes them last.
type CallOption func(*call)

// WithResponse fills *r with the answer to the call, success or *Error alike: its
// status, headers, request id, rate limits and Location. For a list, it is the answer
// of the last page fetched so far.
//
//	var res petstore.Response
//	pet, err := client.CreatePet(ctx, petstore.NewPet{Name: "Rex"}, petstore.WithResponse(&res))
//	…
//	fmt.Println(res.Location, res.RequestID)
func WithResponse(r *Response) CallOption {
	return func(c *call) { c.response = r }
}

// call is what a request needs to know about the call it belongs to.
type call struct {
	operation string    // the operationId, for the deprecation report
	response  *Response // where WithResponse asked for the answer, or nil
}

// callKey is the context key of the call a request belongs to.
type callKey struct{}

// withCall records which operation (its operationId) a request makes, and the call's
// options, in the context that its requests carry to send.
func withCall(ctx context.Context, operation string, opts []CallOption) context.Context {
	c := &call{operation: operation}
	for _, opt := range opts {
		if opt != nil {
			opt(c)
		}
	}
	if c.response != nil {
		*c.response = Response{}
	}
	return context.WithValue(ctx, callKey{}, c)
}

func callOf(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return &call{}
	}
	return c
}

func operationOf(ctx context.Context) string { return callOf(ctx).operation }

// noteResponse hands the answer (nil for none) to WithResponse's Response, if the call
// asked for it.
func noteResponse(ctx context.Context, res *http.Response) {
	target := callOf(ctx).response
	switch {
	case target == nil:
	case res == nil:
		*target = Response{}
	default:
		*target = *responseFrom(res)
	}
}

// responseFrom reads what the Response of an answer says.
func responseFrom(res *http.Response) *Response {
	r := &Response{
		StatusCode: res.StatusCode,
		Header:     res.Header,
		RequestID:  res.Header.Get("X-Request-Id"),
		RateLimits: rateLimits(res.Header),
	}
	if loc := res.Header.Get("Location"); loc != "" {
		if ref, err := url.Parse(loc); err == nil {
			r.Location = ref
			if res.Request != nil && res.Request.URL != nil {
				r.Location = res.Request.URL.ResolveReference(ref)
			}
		}
	}
	return r
}

// rateLimits reads RateLimit-Policy ("default";q=100;w=1) and RateLimit
// ("default";r=99;t=1), lists of structured-field items that may come in one header
// line or in several.
func rateLimits(h http.Header) []RateLimit {
	var out []RateLimit
	index := map[string]int{}
	entry := func(name string) *RateLimit {
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, RateLimit{Policy: name, Remaining: -1})
		}
		return &out[i]
	}
	for _, item := range sfItems(h.Values("RateLimit-Policy")) {
		l := entry(item.name)
		l.Quota = item.int("q", 0)
		l.Window = time.Duration(item.int("w", 0)) * time.Second
	}
	for _, item := range sfItems(h.Values("RateLimit")) {
		l := entry(item.name)
		l.Remaining = item.int("r", -1)
		l.Reset = time.Duration(item.int("t", 0)) * time.Second
	}
	return out
}

// sfItem is one item of a structured-field list (RFC 9651) whose items are strings
// with parameters: "name";key=value;….
type sfItem struct {
	name   string
	params map[string]string
}

func (it sfItem) int(key string, otherwise int) int {
	n, err := strconv.Atoi(it.params[key])
	if err != nil {
		return otherwise
	}
	return n
}

// sfItems splits header lines into items, at the commas outside quotes.
func sfItems(lines []string) []sfItem {
	var items []sfItem
	for _, line := range lines {
		quoted, start := false, 0
		for i := 0; i <= len(line); i++ {
			if i < len(line) {
				switch line[i] {
				case '"':
					quoted = !quoted
					continue
				case '\\':
					i++
					continue
				case ',':
					if quoted {
						continue
					}
				default:
					continue
				}
			}
			if item, ok := sfItemOf(line[start:i]); ok {
				items = append(items, item)
			}
			start = i + 1
		}
	}
	return items
}

func sfItemOf(s string) (sfItem, bool) {
	parts := strings.Split(strings.TrimSpace(s), ";")
	name := strings.TrimSpace(parts[0])
	if unq, err := strconv.Unquote(name); err == nil {
		name = unq
	}
	if name == "" {
		return sfItem{}, false
	}
	item := sfItem{name: name, params: map[string]string{}}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		item.params[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return item, true
}
