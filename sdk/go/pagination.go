package petstore

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"
)

// Page is one page of a list: one request and its answer. The ListXxxPages methods
// yield them, for a program that shows a page at a time, stores where it stopped, or
// reads the headers of each answer.
type Page[T any] struct {
	// Items are the page's items, in the list's order; none on an empty page.
	Items []T
	// Next is the cursor of the page after this one, "" when this is the last page.
	// Give it as the Cursor of the list's options, with the same filters, to go on from
	// here later, in another process even. For the event feed, the last page that holds
	// events has a Next too: where the events that happen later will be.
	Next string
	// Response is the answer that carried the page.
	Response *Response
}

// items flattens pages into their items, for the list methods that yield items.
func items[T any](pages iter.Seq2[*Page[T], error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for page, err := range pages {
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range page.Items {
				if !yield(item, nil) {
					return
				}
			}
		}
	}
}

// pages walks the pages of a list operation: the first from first, each next one from
// the previous page's Link: <…>; rel="next". It stops at the first error, which it
// yields, or when the loop over it stops. A Link back to a page already fetched is an
// error, not a loop that never ends.
func pages[T, U any](ctx context.Context, c *Client, operation string, opts []CallOption, first func(context.Context) (*http.Response, error), to func(T) U) iter.Seq2[*Page[U], error] {
	return func(yield func(*Page[U], error) bool) {
		ctx := withCall(ctx, operation, opts)
		fetched := map[string]bool{} // the URLs of the pages so far
		res, err := first(ctx)
		for {
			var body []T
			if body, err = decode[[]T](res, err); err != nil {
				yield(nil, err)
				return
			}
			fetched[res.Request.URL.String()] = true
			page := &Page[U]{Items: make([]U, len(body)), Response: responseFrom(res)}
			for i, item := range body {
				page.Items[i] = to(item)
			}
			// A next link that may not be followed still leaves this page good.
			next, nextErr := c.nextPage(res)
			if next != nil {
				page.Next = next.Query().Get("cursor")
			}
			if !yield(page, nil) {
				return
			}
			if nextErr != nil {
				yield(nil, nextErr)
				return
			}
			if next == nil {
				return
			}
			if fetched[next.String()] {
				yield(nil, fmt.Errorf("petstore: next page link %s leads to a page already fetched", next.RequestURI()))
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

// page is the page size of opts (nil for the service's default) and the cursor to
// start from (nil for the first page).
func (o *ListOptions) page() (limit *int32, cursor *string) {
	if o == nil {
		return nil, nil
	}
	return optional(int32Of(o.Limit)), optional(o.Cursor)
}
