package petstore

import (
	cryptorand "crypto/rand"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"time"
)

const (
	// maxDelay caps the back-off when the service did not say how long to wait.
	maxDelay = 10 * time.Second
	// maxRetryAfter is the longest Retry-After worth waiting for; past it, the caller
	// hears the answer (an *Error with RetryAfter) and decides.
	maxRetryAfter = time.Minute
)

// sendWithRetries sends req, and sends it again after a network error or an answer of
// 429 or 503 when that cannot do a thing twice: for GET, PUT and DELETE, which are
// idempotent, and for a POST with an Idempotency-Key, which the service answers with
// the first result. Other POSTs (and PATCH) are sent once.
func (c *Client) sendWithRetries(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	repeatable := req.Body == nil || req.GetBody != nil
	safe := req.Method == http.MethodGet || req.Method == http.MethodHead ||
		req.Method == http.MethodPut || req.Method == http.MethodDelete ||
		req.Header.Get("Idempotency-Key") != ""
	for attempt := 0; ; attempt++ {
		try := req.Clone(ctx)
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			try.Body = body
		}
		res, err := c.http.Do(try)
		if res != nil && res.Request == nil {
			// A RoundTripper need not set it (a test stub often does not); links,
			// errors and deprecations are resolved against it.
			res.Request = try
		}
		if attempt == c.retries || !safe || !repeatable || ctx.Err() != nil {
			return res, err
		}
		wait, again := c.backoff(attempt, res, err)
		if !again {
			return res, err
		}
		// A wait the context cannot outlast would only turn the service's answer into
		// a deadline error.
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return res, err
		}
		if res != nil {
			closeBody(res)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// backoff says whether an attempt is worth repeating, and after how long: what
// Retry-After asks, else an exponential back-off with jitter, so that clients that
// failed together do not come back together.
func (c *Client) backoff(attempt int, res *http.Response, err error) (time.Duration, bool) {
	if err == nil && res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	if res != nil {
		if d := retryAfter(res.Header); d > 0 {
			return d, d <= maxRetryAfter
		}
	}
	d := maxDelay
	if attempt < 16 { // past that, the shift could overflow
		d = min(c.delay<<attempt, maxDelay)
	}
	return d/2 + rand.N(d/2+1), true
}

// newIdempotencyKey makes a key no other order will have: 128 random bits.
func newIdempotencyKey() (string, error) {
	b := make([]byte, 16)
	if _, err := cryptorand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
