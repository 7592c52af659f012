package petstore

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"
)

// list walks every page of a list operation: the first from first, each next one from
// the previous page's Link: <…>; rel="next". It stops at the first error, which it
// yields, or when the loop over it stops. A Link back to a page already fetched is an
// error, not a loop that never ends.
func list[T, U any](ctx context.Context, c *Client, operation string, first func(context.Context) (*http.Response, error), to func(T) U) iter.Seq2[U, error] {
	return func(yield func(U, error) bool) {
		var zero U
		ctx := withOperation(ctx, operation)
		fetched := map[string]bool{} // the URLs of the pages so far
		res, err := first(ctx)
		for {
			var page []T
			if page, err = decode[[]T](res, err); err != nil {
				yield(zero, err)
				return
			}
			fetched[res.Request.URL.String()] = true
			for _, item := range page {
				if !yield(to(item), nil) {
					return
				}
			}
			var next *url.URL
			if next, err = c.nextPage(res); err != nil {
				yield(zero, err)
				return
			}
			if next == nil {
				return
			}
			if fetched[next.String()] {
				yield(zero, fmt.Errorf("petstore: next page link %s leads to a page already fetched", next.RequestURI()))
				return
			}
			fetched[next.String()] = true // also when a redirect answers it from elsewhere
			res, err = c.get(ctx, next)
		}
	}
}

// nextPage returns the URL of the page after res, or nil after the last one. The
// service writes it relative to its origin (/v1/pets?cursor=…), so it is resolved
// against the request, never appended to the base URL.
func (c *Client) nextPage(res *http.Response) (*url.URL, error) {
	link := linkTarget(res.Header, "next")
	if link == "" {
		return nil, nil
	}
	ref, err := url.Parse(link)
	if err != nil {
		return nil, fmt.Errorf("petstore: next page link %q: %w", link, err)
	}
	next := res.Request.URL.ResolveReference(ref)
	// The next request carries the credentials: never to another origin.
	if next.Scheme != c.base.Scheme || next.Host != c.base.Host {
		return nil, fmt.Errorf("petstore: next page link %q leaves %s://%s", link, c.base.Scheme, c.base.Host)
	}
	return next, nil
}

// linkTarget returns the target of the first link with relation rel in the Link headers
// (RFC 8288), as written (often a reference relative to the request), or "".
func linkTarget(h http.Header, rel string) string {
	for _, v := range h.Values("Link") {
		// Each link is "<target>" then ";"-separated parameters. Targets may hold
		// commas (?ids=1,2), so links are told apart by their "<", not by commas.
		for v != "" {
			start := strings.IndexByte(v, '<')
			if start < 0 {
				break
			}
			n := strings.IndexByte(v[start:], '>')
			if n < 0 {
				break
			}
			target, params := v[start+1:start+n], v[start+n+1:]
			v = ""
			if next := strings.IndexByte(params, '<'); next >= 0 {
				params, v = params[:next], params[next:]
			}
			for _, p := range strings.Split(params, ";") {
				name, value, _ := strings.Cut(p, "=")
				if !strings.EqualFold(strings.TrimSpace(name), "rel") {
					continue
				}
				// rel may name several relations: rel="next last".
				for _, r := range strings.Fields(strings.Trim(value, "\" \t,")) {
					if strings.EqualFold(r, rel) {
						return target
					}
				}
			}
		}
	}
	return ""
}

// limit is the page size of opts, nil for the service's default.
func (o *ListOptions) limit() *int32 {
	if o == nil {
		return nil
	}
	return optional(int32Of(o.Limit))
}
