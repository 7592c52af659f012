package petstore

import (
	"encoding/json"
	"fmt"
	"time"
)

// The stores keep an event's resource as JSON of a small tagged snapshot, written and
// read by MarshalEventData and UnmarshalEventData so that both stores keep the same
// bytes. The snapshot's field names are spelled out: renaming a Go field must not
// change what is stored, since events outlive releases (30 days by default). The
// snapshot of an endpoint never holds its secrets.

type eventData struct {
	Order     *orderSnapshot     `json:"order,omitempty"`
	Pet       *petSnapshot       `json:"pet,omitempty"`
	Inventory *inventorySnapshot `json:"inventory,omitempty"`
	Webhook   *webhookSnapshot   `json:"webhook,omitempty"`
}

type orderSnapshot struct {
	ID        int64      `json:"id"`
	PetID     int64      `json:"petId"`
	AccountID int64      `json:"accountId"`
	Quantity  int        `json:"quantity"`
	ShipDate  *time.Time `json:"shipDate,omitempty"`
	Complete  bool       `json:"complete"`
	CreatedAt time.Time  `json:"createdAt"`
}

type petSnapshot struct {
	ID         int64     `json:"id"`
	Name       string    `json:"name"`
	CategoryID int64     `json:"categoryId"`
	Status     PetStatus `json:"status"`
	Stock      int       `json:"stock"`
}

type inventorySnapshot struct {
	PetID    int64     `json:"petId"`
	Quantity int       `json:"quantity"`
	Status   PetStatus `json:"status"`
}

type webhookSnapshot struct {
	ID          int64       `json:"id"`
	URL         string      `json:"url"`
	Description string      `json:"description"`
	Events      []EventType `json:"events"`
}

// MarshalEventData encodes the resource of e (its Order, Pet, Inventory or Webhook,
// exactly one of which must be set) for a store to keep. Times are kept in UTC.
func MarshalEventData(e Event) ([]byte, error) {
	var d eventData
	n := 0
	if o := e.Order; o != nil {
		n++
		d.Order = &orderSnapshot{ID: o.ID, PetID: o.PetID, AccountID: o.AccountID, Quantity: o.Quantity,
			ShipDate: utcPtr(o.ShipDate), Complete: o.Complete, CreatedAt: o.CreatedAt.UTC()}
	}
	if p := e.Pet; p != nil {
		n++
		d.Pet = &petSnapshot{ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: p.Status, Stock: p.Stock}
	}
	if it := e.Inventory; it != nil {
		n++
		d.Inventory = &inventorySnapshot{PetID: it.PetID, Quantity: it.Quantity, Status: it.Status}
	}
	if w := e.Webhook; w != nil {
		n++
		d.Webhook = &webhookSnapshot{ID: w.ID, URL: w.URL, Description: w.Description, Events: w.Events.Types()}
	}
	if n != 1 {
		return nil, fmt.Errorf("event %s (%s) holds %d resources, want 1", e.ID, e.Type, n)
	}
	return json.Marshal(d)
}

// UnmarshalEventData decodes what MarshalEventData made into the resource fields of
// e, leaving its other fields as they are. Times come back in UTC.
func UnmarshalEventData(data []byte, e *Event) error {
	var d eventData
	if err := json.Unmarshal(data, &d); err != nil {
		return fmt.Errorf("read the data of event %s: %w", e.ID, err)
	}
	e.Order, e.Pet, e.Inventory, e.Webhook = nil, nil, nil, nil
	if o := d.Order; o != nil {
		e.Order = &Order{ID: o.ID, PetID: o.PetID, AccountID: o.AccountID, Quantity: o.Quantity,
			ShipDate: utcPtr(o.ShipDate), Complete: o.Complete, CreatedAt: o.CreatedAt.UTC()}
	}
	if p := d.Pet; p != nil {
		e.Pet = &Pet{ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: p.Status, Stock: p.Stock}
	}
	if it := d.Inventory; it != nil {
		e.Inventory = &InventoryItem{PetID: it.PetID, Quantity: it.Quantity, Status: it.Status}
	}
	if w := d.Webhook; w != nil {
		// The types were those of a valid mask; an unknown one (from a later release)
		// is left out rather than failing the event.
		var m EventMask
		for _, t := range w.Events {
			if t == AllEvents {
				m = MaskAll
			}
			m |= t.Bit()
		}
		e.Webhook = &Webhook{ID: w.ID, URL: w.URL, Description: w.Description, Events: m}
	}
	if e.Order == nil && e.Pet == nil && e.Inventory == nil && e.Webhook == nil {
		return fmt.Errorf("read the data of event %s: it holds no resource", e.ID)
	}
	return nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
