package httpapi

import (
	"context"
	"fmt"
	"net/url"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// toEvent renders an event as the API shows it: the resource it holds in the same
// representation as the operations that answer it, amounts in currency, the shop's.
func toEvent(e petstore.Event, currency string) (oas.Event, error) {
	out := oas.Event{ID: e.ID, Type: oas.EventType(e.Type), CreatedAt: e.CreatedAt.UTC()}
	switch {
	case e.Order != nil:
		out.Data.SetOrder(toOrder(*e.Order, currency))
	case e.Pet != nil:
		out.Data.SetPet(toPet(*e.Pet, currency))
	case e.Inventory != nil:
		out.Data.SetInventoryItem(toInventory(*e.Inventory))
	case e.Webhook != nil:
		// The stored endpoint has no secrets; as of the event, no rotation overlaps.
		out.Data.SetWebhook(toWebhook(*e.Webhook, e.CreatedAt))
	case e.Key != nil:
		out.Data.SetApiKeyChange(toKeyChange(*e.Key))
	default:
		return oas.Event{}, fmt.Errorf("event %s (%s) holds no resource", e.ID, e.Type)
	}
	return out, nil
}

// toKeyChange shows the key of an api_key.* event as GET /api-keys shows a key (it
// holds no secret to leave out), with its account and who acted.
func toKeyChange(c petstore.KeyChange) oas.ApiKeyChange {
	k := c.Key
	out := oas.ApiKeyChange{ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt.UTC(), Scopes: k.Scopes,
		ExpiresAt: timeOpt(k.ExpiresAt), LastUsedAt: timeOpt(k.LastUsedAt), AccountId: k.AccountID, AccountEmail: c.AccountEmail}
	switch by := c.By; {
	case by.AccountID == 0:
		out.Actor.Type = "operator"
	case by.KeyID == 0:
		out.Actor = oas.Actor{Type: "password", AccountId: oas.NewOptInt64(by.AccountID)}
	default:
		out.Actor = oas.Actor{Type: "key", AccountId: oas.NewOptInt64(by.AccountID), KeyId: oas.NewOptInt64(by.KeyID)}
	}
	return out
}

// EventEncoder returns the encoder of the events of a shop in currency: the JSON of
// an event, byte for byte what GET /events/{eventId} and the feed show for it, which
// is the body of a webhook delivery, which its signature covers.
func EventEncoder(currency string) func(petstore.Event) ([]byte, error) {
	return func(e petstore.Event) ([]byte, error) {
		out, err := toEvent(e, currency)
		if err != nil {
			return nil, err
		}
		return out.MarshalJSON()
	}
}

func (h *Handler) ListEvents(ctx context.Context, params oas.ListEventsParams) (oas.ListEventsRes, error) {
	store := h.store
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	// A key sees only the types it may read (their scopes, petstore.EventType.Scope).
	f, err := principal(ctx).FeedFilter(petstore.EventType(params.Type.Or("")))
	if err != nil {
		return nil, err
	}
	events, err := store.Events(ctx, f, listPage(page))
	if err != nil {
		return nil, err
	}
	filters := func() url.Values {
		q := url.Values{}
		if f.Type != "" {
			q.Set("type", string(f.Type))
		}
		return q
	}
	seq := func(e petstore.Event) int64 { return e.Seq } // the feed's order, not an id
	events, link := nextLink(events, page, "/events", filters, seq)
	if !link.IsSet() && len(events) > 0 {
		// A feed goes on: its last page links to where the next events will be, so
		// that a poller always holds a cursor.
		link = linkAfter(page, "/events", filters, seq(events[len(events)-1]))
	}
	out := make([]oas.Event, len(events))
	for i, e := range events {
		if out[i], err = toEvent(e, h.currency); err != nil {
			return nil, err
		}
	}
	return &oas.ListEventsOKHeaders{Link: link, Response: out}, nil
}

func (h *Handler) GetEvent(ctx context.Context, params oas.GetEventParams) (oas.GetEventRes, error) {
	store := h.store
	e, err := store.Event(ctx, params.EventId)
	if err != nil {
		return nil, err
	}
	// An event the key may not read is not found, as it is not in the key's feed.
	if !principal(ctx).MayReadEvents(e.Type) {
		return nil, petstore.EventNotFound(params.EventId)
	}
	out, err := toEvent(e, h.currency)
	if err != nil {
		return nil, err
	}
	return &out, nil
}
