package petstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// version is this SDK's version, sent in the User-Agent header.
const version = "0.1.0"

// Client calls the Pet Store API. Make one with NewClient and share it: it is safe for
// concurrent use.
type Client struct {
	api     *api.Client // the generated client; its requests go through send
	base    *url.URL
	http    *http.Client
	auth    string // the Authorization header, or "" for calls without credentials
	agent   string
	retries int
	delay   time.Duration // the first back-off, doubled on every retry

	onDeprecation func(Deprecation)
	warned        *sync.Map // operations the default deprecation handler has logged
}

// Option configures a Client made by NewClient.
type Option func(*Client)

// WithAPIKey sends key (psk_…) as "Authorization: Bearer <key>" on every call. Without
// it, a client can only open accounts; see also Client.WithPassword.
func WithAPIKey(key string) Option {
	return func(c *Client) { c.auth = "Bearer " + key }
}

// WithHTTPClient sends the requests with hc instead of a client with a 30-second time
// limit per attempt.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.http = hc
		}
	}
}

// WithUserAgent puts product (such as "shop-frontend/2.3") in front of the SDK's own
// User-Agent, so that the service's logs tell your program apart.
func WithUserAgent(product string) Option {
	return func(c *Client) { c.agent = product + " " + c.agent }
}

// WithRetries sets how many times a call is retried after a network error or an answer
// of 429 or 503 (default 2; 0 turns retries off). See the package documentation for
// which calls are retried.
func WithRetries(n int) Option {
	return func(c *Client) { c.retries = max(n, 0) }
}

// WithDeprecationHandler calls fn for every answer to a deprecated operation, instead of
// the default of one slog warning per operation. fn runs on the calling goroutine and
// must be safe for concurrent use if the Client is.
func WithDeprecationHandler(fn func(Deprecation)) Option {
	return func(c *Client) { c.onDeprecation = fn }
}

// NewClient returns a client of the API at baseURL, such as "http://localhost:8080/v1"
// (with the version; a trailing slash makes no difference).
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	base, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("petstore: base URL: %w", err)
	}
	if (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("petstore: base URL %q is not an absolute http(s) URL", baseURL)
	}
	// Paths are joined onto the base; a query, a fragment or credentials in it would
	// end up in the wrong place of every request, or in logs.
	if base.RawQuery != "" || base.ForceQuery || base.Fragment != "" || base.User != nil {
		return nil, fmt.Errorf("petstore: base URL %q may not hold a query, a fragment or credentials; pass the key with WithAPIKey", baseURL)
	}
	c := &Client{
		base:    base,
		http:    &http.Client{Timeout: 30 * time.Second},
		agent:   fmt.Sprintf("petstore-go/%s (%s)", version, runtime.Version()),
		retries: 2,
		delay:   500 * time.Millisecond,
		warned:  new(sync.Map),
	}
	for _, opt := range opts {
		opt(c)
	}
	if c.auth == "Bearer " {
		return nil, errors.New("petstore: WithAPIKey was given an empty key")
	}
	c.bind()
	return c, nil
}

// bind gives c a generated client of its own, whose requests go through c.send.
func (c *Client) bind() {
	c.api = &api.Client{Server: c.base.String() + "/", Client: doerFunc(c.send)}
}

// doerFunc lets a function be the generated client's HTTP client.
type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

// send is where every request goes out: it adds the credentials and User-Agent, retries
// what may be retried, and reports deprecated operations.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	req.Header.Set("User-Agent", c.agent)
	res, err := c.sendWithRetries(req)
	if err == nil {
		c.noteDeprecation(req.Context(), res)
	}
	noteResponse(req.Context(), res)
	return res, err
}

// get fetches an absolute URL of the API, such as the next page of a list.
func (c *Client) get(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	return c.send(req)
}

// decode reads the JSON body of a 2xx answer into a T. Any other answer is an *Error,
// whatever its body: a declared error must never pass for a result.
func decode[T any](res *http.Response, err error) (T, error) {
	var v T
	if err != nil {
		return v, err
	}
	defer closeBody(res)
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return v, errorFrom(res)
	}
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		return v, fmt.Errorf("petstore: reading the answer to %s %s: %w", res.Request.Method, res.Request.URL.Path, err)
	}
	return v, nil
}

// noContent checks an answer that carries no body (204).
func noContent(res *http.Response, err error) error {
	if err != nil {
		return err
	}
	defer closeBody(res)
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return errorFrom(res)
	}
	return nil
}

// convert turns a decoded generated value into the SDK's own type.
func convert[T, U any](v T, err error, to func(T) U) (U, error) {
	if err != nil {
		var zero U
		return zero, err
	}
	return to(v), nil
}

// closeBody reads what is left of a body before closing it, so that the connection
// can be used again.
func closeBody(res *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
	_ = res.Body.Close()
}

// optional returns a pointer to v, or nil for the zero value: how the generated layer
// spells a parameter left out.
func optional[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// optionalIDs is how the generated layer spells an ids filter: nil for none.
func optionalIDs(ids []int64) *[]int64 {
	if len(ids) == 0 {
		return nil
	}
	return &ids
}

// int32Of converts a count for the wire, where the document makes it an int32. Out of
// range, it stays out of range (the service then says which field is wrong) rather
// than wrapping around to a count nobody asked for.
func int32Of(n int) int32 {
	return int32(min(max(n, math.MinInt32), math.MaxInt32))
}
