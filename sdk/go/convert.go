package petstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// The conversions between the SDK's types (models.go) and their generated twins: a
// field the document renames or retypes breaks the build here.

func petFrom(p api.Pet) *Pet {
	pet := &Pet{ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: PetStatus(p.Status), Price: p.Price, Tags: p.Tags}
	if pet.Tags == nil {
		pet.Tags = []string{}
	}
	pet.Photos = make([]Photo, len(p.Photos))
	for i, ph := range p.Photos {
		pet.Photos[i] = *photoFrom(ph)
	}
	if p.Description != nil {
		pet.Description = *p.Description
	}
	if p.Stock != nil {
		pet.Stock = int(*p.Stock)
	}
	if p.Currency != nil {
		pet.Currency = *p.Currency
	}
	return pet
}

func photoFrom(p api.Photo) *Photo {
	return &Photo{ID: p.ID, Width: int(p.Width), Height: int(p.Height), ContentType: p.ContentType,
		URLs: PhotoURLs{Thumb: p.Urls.Thumb, Display: p.Urls.Display, Original: p.Urls.Original}}
}

func (p NewPet) body() api.NewPet {
	body := api.NewPet{Name: p.Name, CategoryID: p.CategoryID, Status: optional(api.PetStatus(p.Status)), Price: p.Price,
		Description: optional(p.Description)}
	if p.Tags != nil {
		body.Tags = &p.Tags
	}
	return body
}

func (p PetPatch) body() api.PetPatch {
	patch := api.PetPatch{Name: p.Name, CategoryID: p.CategoryID, Price: p.Price, Description: p.Description}
	if p.Tags != nil {
		patch.Tags = &p.Tags
	}
	if p.Status != nil {
		patch.Status = Ptr(api.PetStatus(*p.Status))
	}
	return patch
}

// errPriceAndRemovePrice is a PetPatch that both sets and removes the price.
var errPriceAndRemovePrice = errors.New("petstore: a PetPatch may set Price or RemovePrice, not both")

// json is the patch as sent. The generated body leaves a nil field out, and has no
// way to say null: RemovePrice adds "price": null to it.
func (p PetPatch) json() ([]byte, error) {
	if p.RemovePrice && p.Price != nil {
		return nil, errPriceAndRemovePrice
	}
	b, err := json.Marshal(p.body())
	if err != nil || !p.RemovePrice {
		return b, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	fields["price"] = json.RawMessage("null")
	return json.Marshal(fields)
}

func categoryFrom(c api.Category) *Category {
	cat := &Category{ID: c.ID, Name: c.Name}
	if c.Description != nil {
		cat.Description = *c.Description
	}
	return cat
}

func (c NewCategory) body() api.NewCategory {
	return api.NewCategory{Name: c.Name, Description: optional(c.Description)}
}

func inventoryFrom(i api.InventoryItem) *InventoryItem {
	return &InventoryItem{PetID: i.PetID, Quantity: int(i.Quantity), Status: PetStatus(i.Status)}
}

func orderFrom(o api.Order) *Order {
	order := &Order{
		ID: o.ID, PetID: o.PetID, Quantity: int(o.Quantity), Complete: o.Complete, AccountID: o.AccountID,
		Status: OrderStatus(o.Status), CreatedAt: o.CreatedAt, UnitPrice: o.UnitPrice, Total: o.Total, Currency: o.Currency,
	}
	if o.ShipDate != nil {
		order.ShipDate = *o.ShipDate
	}
	if o.CompletedAt != nil {
		order.CompletedAt = *o.CompletedAt
	}
	if o.CancelledAt != nil {
		order.CancelledAt = *o.CancelledAt
	}
	if o.PetName != nil {
		order.PetName = *o.PetName
	}
	return order
}

func salesFiguresFrom(f api.SalesFigures) SalesFigures {
	return SalesFigures{
		Orders: f.Orders, Units: f.Units, Revenue: f.Revenue,
		CancelledOrders: f.CancelledOrders, CancelledUnits: f.CancelledUnits, CancelledRevenue: f.CancelledRevenue,
	}
}

func salesReportFrom(r api.SalesReport) *SalesReport {
	report := &SalesReport{
		From: r.From.Time, To: r.To.Time, GroupBy: SalesGroupBy(r.GroupBy), Currency: r.Currency,
		Totals: salesFiguresFrom(r.Totals), Groups: make([]SalesGroup, len(r.Groups)),
	}
	for i, g := range r.Groups {
		group := SalesGroup{SalesFigures: salesFiguresFrom(api.SalesFigures{
			Orders: g.Orders, Units: g.Units, Revenue: g.Revenue,
			CancelledOrders: g.CancelledOrders, CancelledUnits: g.CancelledUnits, CancelledRevenue: g.CancelledRevenue,
		})}
		if g.Day != nil {
			group.Day = g.Day.Time
		}
		if g.PetID != nil {
			group.PetID = *g.PetID
		}
		if g.PetName != nil {
			group.PetName = *g.PetName
		}
		if g.CategoryID != nil {
			group.CategoryID = *g.CategoryID
		}
		if g.CategoryName != nil {
			group.CategoryName = *g.CategoryName
		}
		report.Groups[i] = group
	}
	return report
}

func (o NewOrder) body() api.NewOrder {
	body := api.NewOrder{PetID: o.PetID, Quantity: int32Of(o.Quantity)}
	if !o.ShipDate.IsZero() {
		body.ShipDate = &o.ShipDate
	}
	return body
}

func (u OrderUpdate) body() api.OrderUpdate {
	return api.OrderUpdate{Complete: u.Complete, ShipDate: u.ShipDate}
}

func accountFrom(a api.Account) *Account {
	return &Account{ID: a.ID, Email: a.Email, Role: Role(a.Role), CreatedAt: a.CreatedAt, Disabled: a.Disabled,
		PasswordSource: PasswordSource(a.PasswordSource)}
}

func currentAccountFrom(a api.CurrentAccount) *Account {
	acct := &Account{ID: a.ID, Email: a.Email, Role: Role(a.Role), CreatedAt: a.CreatedAt, Disabled: a.Disabled,
		PasswordSource: PasswordSource(a.PasswordSource)}
	if k := a.Key; k != nil {
		acct.Key = &CallingKey{ID: k.ID, Scopes: make([]Scope, len(k.Scopes))}
		for i, s := range k.Scopes {
			acct.Key.Scopes[i] = Scope(s)
		}
		if k.ExpiresAt != nil {
			acct.Key.ExpiresAt = *k.ExpiresAt
		}
	}
	return acct
}

func apiKeyFrom(k api.APIKey) *APIKey {
	key := &APIKey{ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt}
	if k.Scopes != nil {
		key.Scopes = make([]Scope, len(*k.Scopes))
		for i, s := range *k.Scopes {
			key.Scopes[i] = Scope(s)
		}
	}
	if k.ExpiresAt != nil {
		key.ExpiresAt = *k.ExpiresAt
	}
	if k.LastUsedAt != nil {
		key.LastUsedAt = *k.LastUsedAt
	}
	return key
}

func createdAPIKeyFrom(k api.CreatedAPIKey) *CreatedAPIKey {
	key := apiKeyFrom(api.APIKey{
		ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt, Scopes: k.Scopes, ExpiresAt: k.ExpiresAt,
	})
	return &CreatedAPIKey{APIKey: *key, Key: k.Key}
}

func (k NewAPIKey) body() api.NewAPIKey {
	body := api.NewAPIKey{Name: k.Name}
	if k.Scopes != nil {
		scopes := make([]api.Scope, len(k.Scopes))
		for i, s := range k.Scopes {
			scopes[i] = api.Scope(s)
		}
		body.Scopes = &scopes
	}
	if !k.ExpiresAt.IsZero() {
		body.ExpiresAt = &k.ExpiresAt
	}
	return body
}

func messageFrom(m api.Message) *Message {
	return &Message{ID: m.ID, Message: m.Message, Status: MessageStatus(m.Status), CreatedAt: m.CreatedAt}
}

func webhookFrom(w api.Webhook) *Webhook {
	hook := &Webhook{ID: w.ID, URL: w.URL, Enabled: w.Enabled, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	for _, e := range w.Events {
		hook.Events = append(hook.Events, EventType(e))
	}
	if w.Description != nil {
		hook.Description = *w.Description
	}
	if w.DisabledReason != nil {
		hook.DisabledReason = *w.DisabledReason
	}
	if w.FailingSince != nil {
		hook.FailingSince = *w.FailingSince
	}
	if w.PreviousSecretExpiresAt != nil {
		hook.PreviousSecretExpiresAt = *w.PreviousSecretExpiresAt
	}
	return hook
}

func webhookWithSecretFrom(w api.WebhookWithSecret) *WebhookWithSecret {
	hook := webhookFrom(api.Webhook{
		ID: w.ID, URL: w.URL, Description: w.Description, Events: w.Events, Enabled: w.Enabled,
		DisabledReason: w.DisabledReason, FailingSince: w.FailingSince,
		PreviousSecretExpiresAt: w.PreviousSecretExpiresAt, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
	})
	return &WebhookWithSecret{Webhook: *hook, Secret: w.Secret}
}

// subscription is how the generated layer spells a list of event types to receive.
func subscription(types []EventType) []api.EventSubscription {
	if types == nil {
		return nil
	}
	s := make([]api.EventSubscription, len(types))
	for i, t := range types {
		s[i] = api.EventSubscription(t)
	}
	return s
}

func (w NewWebhook) body() api.NewWebhook {
	return api.NewWebhook{URL: w.URL, Events: subscription(w.Events), Description: optional(w.Description)}
}

func (p WebhookPatch) body() api.WebhookPatch {
	patch := api.WebhookPatch{URL: p.URL, Description: p.Description, Enabled: p.Enabled}
	if p.Events != nil {
		patch.Events = Ptr(subscription(p.Events))
	}
	return patch
}

func (p AccountPatch) body() api.AccountPatch {
	patch := api.AccountPatch{Disabled: p.Disabled}
	if p.Role != nil {
		patch.Role = Ptr(api.AccountPatchRole(*p.Role))
	}
	return patch
}

func (r SecretRotation) body() api.SecretRotation {
	if r.Overlap == nil {
		return api.SecretRotation{}
	}
	// Rounded up, so that an overlap asked for is never a revocation.
	seconds := (*r.Overlap + time.Second - 1) / time.Second
	return api.SecretRotation{OverlapSeconds: Ptr(int32Of(int(seconds)))}
}

func deliveryFrom(d api.Delivery) *Delivery {
	del := &Delivery{
		ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, EventType: EventType(d.EventType),
		Status: DeliveryStatus(d.Status), Attempts: int(d.Attempts), CreatedAt: d.CreatedAt,
	}
	if d.NextAttemptAt != nil {
		del.NextAttemptAt = *d.NextAttemptAt
	}
	if d.LastAttemptAt != nil {
		del.LastAttemptAt = *d.LastAttemptAt
	}
	if d.ResponseStatus != nil {
		del.ResponseStatus = int(*d.ResponseStatus)
	}
	if d.LastError != nil {
		del.LastError = *d.LastError
	}
	return del
}

// wireEvent is an Event as the service writes it. Decoding one decodes its data by
// its type, so that data of the wrong shape fails like any answer that does not decode.
type wireEvent struct{ event *Event }

func (w *wireEvent) UnmarshalJSON(b []byte) error {
	var e api.Event
	if err := json.Unmarshal(b, &e); err != nil {
		return err
	}
	data, err := e.Data.MarshalJSON()
	if err != nil {
		return err
	}
	ev := &Event{ID: e.ID, Type: EventType(e.Type), CreatedAt: e.CreatedAt, Data: data}
	switch ev.Type {
	case EventTypeOrderPlaced, EventTypeOrderCompleted, EventTypeOrderCancelled:
		var o api.Order
		o, err = e.Data.AsOrder()
		ev.Order = orderFrom(o)
	case EventTypePetSoldOut, EventTypePetRestocked, EventTypeInventoryUpdated:
		var i api.InventoryItem
		i, err = e.Data.AsInventoryItem()
		ev.Inventory = inventoryFrom(i)
	case EventTypePetStatusChanged:
		var p api.Pet
		p, err = e.Data.AsPet()
		ev.Pet = petFrom(p)
	case EventTypeWebhookTest:
		var h api.Webhook
		h, err = e.Data.AsWebhook()
		ev.Webhook = webhookFrom(h)
	}
	if err != nil {
		return fmt.Errorf("the data of %s event %s: %w", ev.Type, ev.ID, err)
	}
	w.event = ev
	return nil
}

func eventFrom(w wireEvent) *Event { return w.event }
