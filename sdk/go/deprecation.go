package petstore

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Deprecation is what the service says about a deprecated operation, in the headers of
// every answer to it (Deprecation, RFC 9745; Sunset, RFC 8594; Link rel="successor-version").
// From Sunset on, the operation answers 410 with CodeGone.
type Deprecation struct {
	Operation string    // the operation's id in the API document, such as "getPetById"
	Since     time.Time // when it was deprecated; zero if the service did not say
	Sunset    time.Time // when it stops working; zero if the service did not say
	Successor *url.URL  // what replaces it; nil if the service did not say
}

// noteDeprecation tells the deprecation handler about an answer to a deprecated operation.
func (c *Client) noteDeprecation(ctx context.Context, res *http.Response) {
	since, deprecated := res.Header["Deprecation"]
	if !deprecated {
		return
	}
	d := Deprecation{Operation: operationOf(ctx)}
	if s, ok := strings.CutPrefix(since[0], "@"); ok {
		if unix, err := strconv.ParseInt(s, 10, 64); err == nil {
			d.Since = time.Unix(unix, 0).UTC()
		}
	}
	if t, err := http.ParseTime(res.Header.Get("Sunset")); err == nil {
		d.Sunset = t.UTC()
	}
	if link := linkTarget(res.Header, "successor-version"); link != "" {
		if ref, err := url.Parse(link); err == nil {
			d.Successor = res.Request.URL.ResolveReference(ref)
		}
	}
	if c.onDeprecation != nil {
		c.onDeprecation(d)
		return
	}
	// By default, say it once per operation: enough to be noticed, too little to flood a log.
	if _, logged := c.warned.LoadOrStore(d.Operation, true); !logged {
		args := []any{"operation", d.Operation}
		if !d.Sunset.IsZero() {
			args = append(args, "sunset", d.Sunset.Format(time.DateOnly))
		}
		if d.Successor != nil {
			args = append(args, "successor", d.Successor.String())
		}
		slog.Warn("petstore: this operation is deprecated", args...)
	}
}
