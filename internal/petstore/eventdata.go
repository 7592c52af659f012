package petstore

import (
	"encoding/json"
	"fmt"
	"time"
)

// eventData is how stores keep the resource of an event: the domain values with tags
// of their own, so that a stored event reads back whatever the API's JSON becomes.
// The HTTP layer renders the API's representation from the Event when it is sent or
// listed.
type eventData struct {
	Order     *storedOrder     `json:"order,omitempty"`
	Pet       *storedPet       `json:"pet,omitempty"`
	Inventory *storedInventory `json:"inventory,omitempty"`
	Webhook   *storedWebhook   `json:"webhook,omitempty"`
	Key       *storedKey       `json:"apiKey,omitempty"`
	// TraceParent is Event.TraceParent.
	TraceParent string `json:"traceparent,omitempty"`
}

// storedOrder keeps an order. An event stored before orders kept their history has
// no status: UnmarshalEventData gives it the one its type implies.
type storedOrder struct {
	ID          int64       `json:"id"`
	PetID       int64       `json:"petId"`
	AccountID   int64       `json:"accountId"`
	Quantity    int         `json:"quantity"`
	ShipDate    *time.Time  `json:"shipDate,omitempty"`
	Complete    bool        `json:"complete"`
	Status      OrderStatus `json:"status,omitempty"`
	CreatedAt   time.Time   `json:"createdAt"`
	CompletedAt *time.Time  `json:"completedAt,omitempty"`
	CancelledAt *time.Time  `json:"cancelledAt,omitempty"`
	UnitPrice   *int64      `json:"unitPrice,omitempty"`
	PetName     string      `json:"petName,omitempty"`
	CategoryID  int64       `json:"categoryId,omitempty"`
	Currency    string      `json:"currency,omitempty"`
}

type storedPet struct {
	ID         int64     `json:"id"`
	Name       string    `json:"name"`
	CategoryID int64     `json:"categoryId"`
	Status     PetStatus `json:"status"`
	Stock      int       `json:"stock"`
	Price      *int64    `json:"price,omitempty"`
	// Description and Tags came with issue 35: events stored before lack them.
	Description string        `json:"description,omitempty"`
	Tags        []string      `json:"tags,omitempty"`
	Photos      []storedPhoto `json:"photos,omitempty"`
}

type storedInventory struct {
	PetID    int64     `json:"petId"`
	Quantity int       `json:"quantity"`
	Status   PetStatus `json:"status"`
}

// storedWebhook keeps what a test event shows of its endpoint: never its secrets.
type storedWebhook struct {
	ID          int64     `json:"id"`
	URL         string    `json:"url"`
	Description string    `json:"description,omitempty"`
	Events      EventMask `json:"events"`
	Enabled     bool      `json:"enabled"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// storedKey keeps what an api_key.* event shows of its key: never its secret or hash.
type storedKey struct {
	ID           int64      `json:"id"`
	AccountID    int64      `json:"accountId"`
	AccountEmail string     `json:"accountEmail"`
	Name         string     `json:"name"`
	Prefix       string     `json:"prefix"`
	CreatedAt    time.Time  `json:"createdAt"`
	Scopes       []string   `json:"scopes,omitempty"`
	ExpiresAt    *time.Time `json:"expiresAt,omitempty"`
	LastUsedAt   *time.Time `json:"lastUsedAt,omitempty"`
	ByAccountID  int64      `json:"byAccountId,omitempty"`
	ByKeyID      int64      `json:"byKeyId,omitempty"`
}

// MarshalEventData encodes the resource of e (its Order, Pet, Inventory, Webhook or Key)
// for a store to keep beside the event.
func MarshalEventData(e Event) ([]byte, error) {
	var d eventData
	switch {
	case e.Order != nil:
		o := storedOrder(*e.Order)
		d.Order = &o
	case e.Pet != nil:
		d.Pet = toStoredPet(*e.Pet)
	case e.Inventory != nil:
		i := storedInventory(*e.Inventory)
		d.Inventory = &i
	case e.Webhook != nil:
		w := e.Webhook
		d.Webhook = &storedWebhook{ID: w.ID, URL: w.URL, Description: w.Description, Events: w.Events,
			Enabled: w.Enabled, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	case e.Key != nil:
		k := e.Key.Key
		d.Key = &storedKey{ID: k.ID, AccountID: k.AccountID, AccountEmail: e.Key.AccountEmail, Name: k.Name, Prefix: k.Prefix,
			CreatedAt: k.CreatedAt, Scopes: k.Scopes, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt,
			ByAccountID: e.Key.By.AccountID, ByKeyID: e.Key.By.KeyID}
	default:
		return nil, fmt.Errorf("event %s (%s) has no resource", e.ID, e.Type)
	}
	d.TraceParent = e.TraceParent
	return json.Marshal(d)
}

// UnmarshalEventData reads what MarshalEventData wrote into e's resource.
func UnmarshalEventData(e *Event, data []byte) error {
	var d eventData
	if err := json.Unmarshal(data, &d); err != nil {
		return fmt.Errorf("event %s: stored data: %w", e.ID, err)
	}
	e.TraceParent = d.TraceParent
	switch {
	case d.Order != nil:
		o := Order(*d.Order)
		if o.Status == "" {
			legacyOrderStatus(&o, e.Type, e.CreatedAt)
		}
		e.Order = &o
	case d.Pet != nil:
		e.Pet = d.Pet.pet()
	case d.Inventory != nil:
		i := InventoryItem(*d.Inventory)
		e.Inventory = &i
	case d.Webhook != nil:
		w := d.Webhook
		e.Webhook = &Webhook{ID: w.ID, URL: w.URL, Description: w.Description, Events: w.Events,
			Enabled: w.Enabled, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
	case d.Key != nil:
		k := d.Key
		e.Key = &KeyChange{
			Key: APIKey{ID: k.ID, AccountID: k.AccountID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt,
				Scopes: k.Scopes, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt},
			AccountEmail: k.AccountEmail, By: Actor{AccountID: k.ByAccountID, KeyID: k.ByKeyID}}
	default:
		return fmt.Errorf("event %s: stored data holds no resource", e.ID)
	}
	return nil
}

// legacyOrderStatus gives an order stored by an event written before orders had a
// status the one the event's type implies, and the time of the change it tells of.
func legacyOrderStatus(o *Order, t EventType, at time.Time) {
	switch {
	case t == OrderCancelled:
		o.Status, o.CancelledAt = Cancelled, &at
	case t == OrderCompleted || o.Complete:
		o.Status = Completed
		if t == OrderCompleted {
			o.CompletedAt = &at
		}
	default:
		o.Status = Placed
	}
}

func toStoredPet(p Pet) *storedPet {
	s := &storedPet{ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: p.Status, Stock: p.Stock, Price: p.Price,
		Description: p.Description, Tags: p.Tags}
	for _, ph := range p.Photos {
		s.Photos = append(s.Photos, storedPhoto(ph))
	}
	return s
}

func (s *storedPet) pet() *Pet {
	p := &Pet{ID: s.ID, Name: s.Name, CategoryID: s.CategoryID, Status: s.Status, Stock: s.Stock, Price: s.Price,
		Description: s.Description, Tags: s.Tags}
	for _, ph := range s.Photos {
		p.Photos = append(p.Photos, Photo(ph))
	}
	return p
}
