package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/acme-pets/petstore/internal/oas"
	"github.com/acme-pets/petstore/internal/petstore"
)

// newSecret makes an endpoint's signing secret: 256 random bits, base64url, after a
// prefix that says what it is (as psk_ does for API keys).
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// checkWebhookURL refuses a URL deliveries may not go to, as a validation_failed on
// field url whose problem is the checker's reason ("must be an https:// URL").
func (h *Handler) checkWebhookURL(raw string) error {
	if err := petstore.CheckAddress("url", raw); err != nil {
		return err
	}
	if err := h.checkURL(raw); err != nil {
		return petstore.Invalid("url", err.Error())
	}
	return nil
}

// eventMask reads a subscription; the generated server has checked that each entry
// is "*" or a known type, once, 1 to 9 of them.
func eventMask(events []oas.EventSubscription) (petstore.EventMask, error) {
	types := make([]petstore.EventType, len(events))
	for i, e := range events {
		types[i] = petstore.EventType(e)
	}
	return petstore.MaskOf("events", types)
}

// toWebhook shows an endpoint at now (which decides whether a rotation still overlaps).
func toWebhook(w petstore.Webhook, now time.Time) oas.Webhook {
	types := w.Events.Types()
	out := oas.Webhook{
		ID:        w.ID,
		URL:       w.URL,
		Events:    make([]string, len(types)),
		Enabled:   w.Enabled,
		CreatedAt: w.CreatedAt.UTC(),
		UpdatedAt: w.UpdatedAt.UTC(),
	}
	for i, t := range types {
		out.Events[i] = string(t)
	}
	if w.Description != "" {
		out.Description = oas.NewOptString(w.Description)
	}
	if w.DisabledReason != "" {
		out.DisabledReason = oas.NewOptString(w.DisabledReason)
	}
	if w.FailingSince != nil {
		out.FailingSince = oas.NewOptDateTime(w.FailingSince.UTC())
	}
	// An overlap that has ended is not shown: the old secret no longer signs.
	if t := w.PreviousSecretExpiresAt; t != nil && w.PreviousSecret != "" && now.Before(*t) {
		out.PreviousSecretExpiresAt = oas.NewOptDateTime(t.UTC())
	}
	return out
}

func toWebhookWithSecret(w petstore.Webhook, now time.Time) oas.WebhookWithSecret {
	v := toWebhook(w, now)
	return oas.WebhookWithSecret{
		ID:                      v.ID,
		URL:                     v.URL,
		Description:             v.Description,
		Events:                  v.Events,
		Enabled:                 v.Enabled,
		DisabledReason:          v.DisabledReason,
		FailingSince:            v.FailingSince,
		PreviousSecretExpiresAt: v.PreviousSecretExpiresAt,
		CreatedAt:               v.CreatedAt,
		UpdatedAt:               v.UpdatedAt,
		Secret:                  w.Secret,
	}
}

func toDelivery(d petstore.Delivery) oas.Delivery {
	out := oas.Delivery{
		ID:        d.ID,
		WebhookId: d.WebhookID,
		EventId:   d.EventID,
		EventType: oas.EventType(d.EventType),
		Status:    string(d.Status),
		Attempts:  int32(d.Attempts),
		CreatedAt: d.CreatedAt.UTC(),
	}
	if d.NextAttemptAt != nil && d.Status == petstore.DeliveryPending {
		out.NextAttemptAt = oas.NewOptDateTime(d.NextAttemptAt.UTC())
	}
	if d.LastAttemptAt != nil {
		out.LastAttemptAt = oas.NewOptDateTime(d.LastAttemptAt.UTC())
	}
	if d.ResponseStatus != 0 {
		out.ResponseStatus = oas.NewOptInt32(int32(d.ResponseStatus))
	}
	if d.LastError != "" {
		out.LastError = oas.NewOptString(d.LastError)
	}
	return out
}

// showWebhook is toWebhook at the handler's clock.
func (h *Handler) showWebhook(w petstore.Webhook) oas.Webhook { return toWebhook(w, h.now()) }

func webhookPath(id int64) string { return apiPrefix + "/webhooks/" + strconv.FormatInt(id, 10) }

func (h *Handler) ListWebhooks(ctx context.Context, params oas.ListWebhooksParams) (oas.ListWebhooksRes, error) {
	store := h.store
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	ws, err := store.Webhooks(ctx, listPage(page))
	if err != nil {
		return nil, err
	}
	ws, link := nextLink(ws, page, "/webhooks", nil, func(w petstore.Webhook) int64 { return w.ID })
	return &oas.ListWebhooksOKHeaders{Link: link, Response: mapSlice(ws, h.showWebhook)}, nil
}

func (h *Handler) CreateWebhook(ctx context.Context, req *oas.NewWebhook) (oas.CreateWebhookRes, error) {
	store := h.store
	if err := h.checkWebhookURL(req.URL); err != nil {
		return nil, err
	}
	mask, err := eventMask(req.Events)
	if err != nil {
		return nil, err
	}
	description := req.Description.Or("")
	if err := petstore.CheckDescription("description", description); err != nil {
		return nil, err
	}
	w := petstore.Webhook{URL: req.URL, Description: description, Events: mask, Secret: newSecret()}
	// A key subscribes an endpoint only to the types it may read itself.
	if err := principal(ctx).CheckStream(petstore.Webhook{}, w, nil); err != nil {
		return nil, err
	}
	w, err = store.CreateWebhook(ctx, w)
	if err != nil {
		return nil, err
	}
	return &oas.WebhookWithSecretHeaders{Location: webhookPath(w.ID), Response: toWebhookWithSecret(w, h.now())}, nil
}

func (h *Handler) GetWebhook(ctx context.Context, params oas.GetWebhookParams) (oas.GetWebhookRes, error) {
	store := h.store
	w, err := store.Webhook(ctx, params.WebhookId)
	if err != nil {
		return nil, err
	}
	out := h.showWebhook(w)
	return &out, nil
}

func (h *Handler) UpdateWebhook(ctx context.Context, req oas.UpdateWebhookReq, params oas.UpdateWebhookParams) (oas.UpdateWebhookRes, error) {
	store := h.store
	var patch oas.WebhookPatch
	switch r := req.(type) {
	case *oas.UpdateWebhookApplicationJSON:
		patch = oas.WebhookPatch(*r)
	case *oas.UpdateWebhookApplicationMergePatchJSON:
		patch = oas.WebhookPatch(*r)
	}
	// Everything the patch says is checked before the store is asked, so that a
	// refusal names the field whatever the endpoint holds.
	if v, ok := patch.URL.Get(); ok {
		if err := h.checkWebhookURL(v); err != nil {
			return nil, err
		}
	}
	var mask petstore.EventMask
	if patch.Events != nil { // absent is nil; present has 1 entry to one per event type
		var err error
		if mask, err = eventMask(patch.Events); err != nil {
			return nil, err
		}
	}
	if v, ok := patch.Description.Get(); ok {
		if err := petstore.CheckDescription("description", v); err != nil {
			return nil, err
		}
	}
	w, err := store.UpdateWebhook(ctx, params.WebhookId, func(cur petstore.Webhook, pending petstore.PendingTypes) (petstore.Webhook, error) {
		w := cur
		if v, ok := patch.URL.Get(); ok {
			w.URL = v
		}
		if patch.Events != nil {
			w.Events = mask
		}
		switch {
		case patch.Description.IsNull():
			w.Description = ""
		case patch.Description.IsSet():
			w.Description = patch.Description.Value
		}
		if v, ok := patch.Enabled.Get(); ok {
			w = w.SetEnabled(v)
		}
		// A new URL or subscription carries only data the key may read itself.
		return w, principal(ctx).CheckStream(cur, w, pending)
	})
	if err != nil {
		return nil, err
	}
	out := h.showWebhook(w)
	return &out, nil
}

func (h *Handler) DeleteWebhook(ctx context.Context, params oas.DeleteWebhookParams) (oas.DeleteWebhookRes, error) {
	store := h.store
	if err := store.DeleteWebhook(ctx, params.WebhookId); err != nil {
		return nil, err
	}
	return &oas.DeleteWebhookNoContent{}, nil
}

// RotateWebhookSecret replaces the secret as petstore.Webhook.RotateSecret does, with
// the overlap asked (petstore.SecretOverlap unless told).
func (h *Handler) RotateWebhookSecret(ctx context.Context, req oas.OptSecretRotation, params oas.RotateWebhookSecretParams) (oas.RotateWebhookSecretRes, error) {
	overlap := petstore.SecretOverlap
	if s, ok := req.Value.OverlapSeconds.Get(); ok && req.Set {
		overlap = time.Duration(s) * time.Second
	}
	secret, now := newSecret(), h.now()
	w, err := h.store.UpdateWebhook(ctx, params.WebhookId, func(w petstore.Webhook, _ petstore.PendingTypes) (petstore.Webhook, error) {
		return w.RotateSecret(secret, now, overlap), nil
	})
	if err != nil {
		return nil, err
	}
	out := toWebhookWithSecret(w, h.now())
	return &out, nil
}

func (h *Handler) SendTestEvent(ctx context.Context, params oas.SendTestEventParams) (oas.SendTestEventRes, error) {
	store := h.store
	d, err := store.SendTestEvent(ctx, params.WebhookId, h.now().UTC().Truncate(time.Second))
	if err != nil {
		return nil, err
	}
	out := toDelivery(d)
	return &out, nil
}

func (h *Handler) ListDeliveries(ctx context.Context, params oas.ListDeliveriesParams) (oas.ListDeliveriesRes, error) {
	store := h.store
	page, err := pageOf(params.Limit, params.Cursor)
	if err != nil {
		return nil, err
	}
	ds, err := store.Deliveries(ctx, params.WebhookId, listPage(page))
	if err != nil {
		return nil, err
	}
	path := "/webhooks/" + strconv.FormatInt(params.WebhookId, 10) + "/deliveries"
	ds, link := nextLink(ds, page, path, nil, func(d petstore.Delivery) int64 { return d.ID })
	p := principal(ctx)
	return &oas.ListDeliveriesOKHeaders{Link: link, Response: mapSlice(ds, func(d petstore.Delivery) oas.Delivery {
		if !p.MayReadEvents(d.EventType) {
			d = d.WithoutAnswer() // the receiver may have echoed the event
		}
		return toDelivery(d)
	})}, nil
}

func (h *Handler) RetryDelivery(ctx context.Context, params oas.RetryDeliveryParams) (oas.RetryDeliveryRes, error) {
	store := h.store
	// Sending it again sends the event's data: the key needs the scope of its type.
	d, err := store.RetryDelivery(ctx, params.WebhookId, params.DeliveryId, h.now().UTC().Truncate(time.Second),
		principal(ctx).CheckResend)
	if err != nil {
		return nil, err
	}
	out := toDelivery(d)
	return &out, nil
}
