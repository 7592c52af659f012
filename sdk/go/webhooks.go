package petstore

import (
	"context"
	"iter"
	"net/http"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// ListWebhooks returns every webhook endpoint, by id, without their secrets (admins);
// opts may be nil.
func (c *Client) ListWebhooks(ctx context.Context, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*Webhook, error] {
	return items(c.ListWebhooksPages(ctx, opts, callOpts...))
}

// ListWebhooksPages returns the endpoints a page at a time (admins).
func (c *Client) ListWebhooksPages(ctx context.Context, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*Page[*Webhook], error] {
	var params api.ListWebhooksParams
	params.Limit, params.Cursor = opts.page()
	return pages(ctx, c, "listWebhooks", callOpts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListWebhooks(ctx, &params)
	}, webhookFrom)
}

// CreateWebhook registers an endpoint that is sent the events it subscribes to from
// now on, enabled (admins). The answer holds the endpoint's signing secret, shown only
// here and by RotateWebhookSecret: keep it for ConstructEvent. A URL that may not be
// used is an *Error with CodeValidationFailed whose Details say why; a 101st endpoint
// is CodeConflict.
func (c *Client) CreateWebhook(ctx context.Context, webhook NewWebhook, opts ...CallOption) (*WebhookWithSecret, error) {
	ctx = withCall(ctx, "createWebhook", opts)
	v, err := decode[api.WebhookWithSecret](c.api.CreateWebhook(ctx, webhook.body()))
	return convert(v, err, webhookWithSecretFrom)
}

// GetWebhook returns one endpoint, without its secret (admins).
func (c *Client) GetWebhook(ctx context.Context, id int64, opts ...CallOption) (*Webhook, error) {
	ctx = withCall(ctx, "getWebhook", opts)
	v, err := decode[api.Webhook](c.api.GetWebhook(ctx, id))
	return convert(v, err, webhookFrom)
}

// UpdateWebhook changes the fields of an endpoint that patch sets (admins). Disabling
// it fails its pending deliveries; enabling a disabled one sends it new events again,
// and its failed deliveries only when retried with RetryDelivery. A new subscription
// applies to the events not yet sent to it.
func (c *Client) UpdateWebhook(ctx context.Context, id int64, patch WebhookPatch, opts ...CallOption) (*Webhook, error) {
	ctx = withCall(ctx, "updateWebhook", opts)
	v, err := decode[api.Webhook](c.api.UpdateWebhookWithApplicationMergePatchPlusJSONBody(ctx, id, patch.body()))
	return convert(v, err, webhookFrom)
}

// DeleteWebhook removes an endpoint and its deliveries (admins); its events stay in
// the feed.
func (c *Client) DeleteWebhook(ctx context.Context, id int64, opts ...CallOption) error {
	ctx = withCall(ctx, "deleteWebhook", opts)
	return noContent(c.api.DeleteWebhook(ctx, id))
}

// RotateWebhookSecret gives an endpoint a new signing secret, in the answer this once
// (admins). The secret it replaces keeps signing beside the new one for
// rotation.Overlap (24 hours by default), so the receiver can switch at any time
// within it; rotating again within the overlap ends it. For a leaked secret, use an
// Overlap of 0: the replaced secret stops signing at once.
//
// It is a POST without an Idempotency-Key, so it is not retried: a second rotation
// would end the overlap of the first.
func (c *Client) RotateWebhookSecret(ctx context.Context, id int64, rotation SecretRotation, opts ...CallOption) (*WebhookWithSecret, error) {
	ctx = withCall(ctx, "rotateWebhookSecret", opts)
	v, err := decode[api.WebhookWithSecret](c.api.RotateWebhookSecret(ctx, id, rotation.body()))
	return convert(v, err, webhookWithSecretFrom)
}

// SendTestEvent delivers a webhook.test event, whose Event.Webhook is the endpoint, to
// this endpoint only, at once, whatever it subscribes to and also when it is disabled
// (admins). The answer is the pending delivery; the event is not in the feed. An
// endpoint with 10 test deliveries pending is an *Error with CodeConflict.
func (c *Client) SendTestEvent(ctx context.Context, id int64, opts ...CallOption) (*Delivery, error) {
	ctx = withCall(ctx, "sendTestEvent", opts)
	v, err := decode[api.Delivery](c.api.SendTestEvent(ctx, id))
	return convert(v, err, deliveryFrom)
}

// ListDeliveries returns an endpoint's deliveries, oldest first (admins): where each
// stands, its attempts and when the next is due. An event is listed once it is being
// sent, so one just written may not be listed yet. opts may be nil.
func (c *Client) ListDeliveries(ctx context.Context, webhookID int64, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*Delivery, error] {
	return items(c.ListDeliveriesPages(ctx, webhookID, opts, callOpts...))
}

// ListDeliveriesPages returns an endpoint's deliveries a page at a time (admins).
func (c *Client) ListDeliveriesPages(ctx context.Context, webhookID int64, opts *ListOptions, callOpts ...CallOption) iter.Seq2[*Page[*Delivery], error] {
	var params api.ListDeliveriesParams
	params.Limit, params.Cursor = opts.page()
	return pages(ctx, c, "listDeliveries", callOpts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListDeliveries(ctx, webhookID, &params)
	}, deliveryFrom)
}

// RetryDelivery makes a failed delivery pending again, due at once, with a fresh 72
// hours of retries (admins); a succeeded one is sent again (receivers drop the repeat
// by event id), and a pending one is left as it is. A delivery of a disabled endpoint
// is an *Error with CodeConflict: enable the endpoint first.
func (c *Client) RetryDelivery(ctx context.Context, webhookID, deliveryID int64, opts ...CallOption) (*Delivery, error) {
	ctx = withCall(ctx, "retryDelivery", opts)
	v, err := decode[api.Delivery](c.api.RetryDelivery(ctx, webhookID, deliveryID))
	return convert(v, err, deliveryFrom)
}

// ListEvents returns the feed of events, oldest first (admins): the events endpoints
// are sent, with the same ids and data, test events excepted. The loop ends when it
// has caught up; events are kept for 30 days. opts may be nil. To poll the feed and
// go on later from where it stopped, use ListEventsPages.
func (c *Client) ListEvents(ctx context.Context, opts *ListEventsOptions, callOpts ...CallOption) iter.Seq2[*Event, error] {
	return items(c.ListEventsPages(ctx, opts, callOpts...))
}

// ListEventsPages returns the feed a page at a time (admins), up to an empty page:
// caught up. A poller keeps the last Next it was given (an empty page has none) and
// starts from it, as ListEventsOptions.Cursor, the next time; it then sees every
// event once:
//
//	opts := &petstore.ListEventsOptions{Cursor: stored}
//	for page, err := range client.ListEventsPages(ctx, opts) {
//		if err != nil {
//			return err
//		}
//		handle(page.Items)
//		if page.Next != "" {
//			stored = page.Next
//		}
//	}
func (c *Client) ListEventsPages(ctx context.Context, opts *ListEventsOptions, callOpts ...CallOption) iter.Seq2[*Page[*Event], error] {
	var params api.ListEventsParams
	if opts != nil {
		params = api.ListEventsParams{
			Type:   optional(api.FeedEventType(opts.Type)),
			Limit:  optional(int32Of(opts.Limit)),
			Cursor: optional(opts.Cursor),
		}
	}
	return pages(ctx, c, "listEvents", callOpts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListEvents(ctx, &params)
	}, eventFrom)
}

// GetEvent returns one event of the feed (admins). An id the feed does not hold (past
// its 30 days, or a test event's) is an *Error with CodeNotFound.
func (c *Client) GetEvent(ctx context.Context, id string, opts ...CallOption) (*Event, error) {
	ctx = withCall(ctx, "getEvent", opts)
	v, err := decode[wireEvent](c.api.GetEvent(ctx, id))
	return convert(v, err, eventFrom)
}
