package petstore

import (
	"time"

	"github.com/acme-pets/petstore/sdk/go/internal/api"
)

// The types below are the SDK's own, not aliases of the generated ones: their fields
// read like Go (no pointers where a zero value says "none"), the open enums have types,
// and a change in the generator does not change the API. Each is converted from or to
// its generated twin, so a field the document renames or retypes breaks the build here
// instead of quietly decoding as zero.

// PetStatus is where a pet stands in the store.
//
// In answers the list is open: a newer service may report a status this package has no
// constant for. It comes through unchanged; treat it as not for sale. In requests
// (NewPet, PetPatch, filters) only the constants below are accepted.
type PetStatus string

// The pet statuses this package knows.
const (
	PetStatusAvailable PetStatus = "available"
	PetStatusPending   PetStatus = "pending"
	PetStatusSold      PetStatus = "sold"
)

// Role is what an account may do. The list is open: treat a role this package has no
// constant for as having no more rights than RoleCustomer.
type Role string

// The roles this package knows.
const (
	RoleCustomer Role = "customer" // every account that signs up
	RoleAdmin    Role = "admin"    // store staff, made by the operator
)

// MessageStatus is how far a message got. The list is open: treat a status this
// package has no constant for as still in progress.
type MessageStatus string

// The message statuses this package knows.
const (
	MessageStatusQueued MessageStatus = "queued" // accepted for delivery
)

// Pet is an animal in the store.
type Pet struct {
	ID         int64
	Name       string
	CategoryID int64
	Status     PetStatus
}

// NewPet is a pet to add, or the full replacement of one.
type NewPet struct {
	Name       string // 1–100 characters once trimmed
	CategoryID int64
	Status     PetStatus // PetStatusAvailable when empty
}

// PetPatch changes some fields of a pet: nil fields keep their value. Ptr makes the
// pointers: PetPatch{Status: petstore.Ptr(petstore.PetStatusSold)}.
type PetPatch struct {
	Name       *string
	CategoryID *int64
	Status     *PetStatus
}

// Category is a kind of animal.
type Category struct {
	ID          int64
	Name        string
	Description string
}

// NewCategory is a category to add, or the full replacement of one.
type NewCategory struct {
	Name        string // unique without regard to case
	Description string // optional, at most 500 characters
}

// InventoryItem is the stock of one pet.
type InventoryItem struct {
	PetID    int64
	Quantity int
	Status   PetStatus // the pet's status
}

// InventoryUpdate is a new stock count.
type InventoryUpdate struct {
	Quantity int // 0–1,000,000
}

// Order is a customer's order.
type Order struct {
	ID        int64
	PetID     int64
	Quantity  int
	ShipDate  time.Time // zero when not set
	Complete  bool
	AccountID int64 // the account that placed it
}

// NewOrder is an order to place.
type NewOrder struct {
	PetID    int64
	Quantity int       // 1–100
	ShipDate time.Time // optional; in 2000–2099
	// IdempotencyKey is sent as the Idempotency-Key header: the service places one
	// order per key and answers a repeat with that order. Left empty, PlaceOrder makes
	// a random one, which makes its own retries safe; set your own (up to 255 printable
	// ASCII characters) to make it safe to place the order again after a crash.
	IdempotencyKey string
}

// OrderUpdate changes an incomplete order (admins): nil fields keep their value.
type OrderUpdate struct {
	Complete *bool // true fulfils the order; there is no way back
	ShipDate *time.Time
}

// Account is an account of the service.
type Account struct {
	ID        int64
	Email     string
	Role      Role
	CreatedAt time.Time
}

// NewAccount is what signing up takes.
type NewAccount struct {
	Email    string
	Password string // 12–128 characters
}

// APIKey is an API key, without its secret.
type APIKey struct {
	ID        int64
	Name      string
	Prefix    string // the first characters of the key, to tell keys apart
	CreatedAt time.Time
}

// CreatedAPIKey is a new API key, with its secret: the only time the service shows it.
type CreatedAPIKey struct {
	APIKey
	Key string // psk_…: give it to WithAPIKey
}

// NewAPIKey is a key to make.
type NewAPIKey struct {
	Name string // what the key is for, such as "laptop"
}

// Message is a message sent with SendMessage.
type Message struct {
	ID        string
	Message   string
	Status    MessageStatus
	CreatedAt time.Time
}

// NewMessage is a message to send.
type NewMessage struct {
	Message string // 1–2,000 characters
}

// ListOptions are the options of a list without filters.
type ListOptions struct {
	Limit int // items per page, 1–100; the service's default (20) when 0
}

// ListPetsOptions filter ListPets; every filter set must hold.
type ListPetsOptions struct {
	Status     PetStatus
	CategoryID int64
	IDs        []int64 // at most 100; ids that match no pet are left out
	// Name keeps the pets whose name contains it, without regard to case ("éc" finds
	// "Éclair"); every character stands for itself (% and _ are not wildcards).
	Name  string
	Limit int // items per page, 1–100; 0 for the service's default (with IDs, all of them)
}

// ListInventoryOptions filter ListInventory; every filter set must hold.
type ListInventoryOptions struct {
	Status PetStatus // the pet's status
	IDs    []int64   // at most 100; ids that match no pet are left out
	Limit  int       // items per page, 1–100; 0 for the service's default (with IDs, all of them)
}

// ListOrdersOptions filter ListOrders.
type ListOrdersOptions struct {
	AccountID int64 // only this account's orders (admins; a customer sees only their own)
	Complete  *bool // only complete (true) or incomplete (false) orders
	Limit     int   // items per page, 1–100; 0 for the service's default
}

// Ptr returns a pointer to v, for the optional fields of PetPatch, OrderUpdate and
// ListOrdersOptions.
func Ptr[T any](v T) *T { return &v }

func petFrom(p api.Pet) *Pet {
	return &Pet{ID: p.ID, Name: p.Name, CategoryID: p.CategoryID, Status: PetStatus(p.Status)}
}

func (p NewPet) body() api.NewPet {
	return api.NewPet{Name: p.Name, CategoryID: p.CategoryID, Status: optional(api.PetStatus(p.Status))}
}

func (p PetPatch) body() api.PetPatch {
	patch := api.PetPatch{Name: p.Name, CategoryID: p.CategoryID}
	if p.Status != nil {
		patch.Status = Ptr(api.PetStatus(*p.Status))
	}
	return patch
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
	order := &Order{ID: o.ID, PetID: o.PetID, Quantity: int(o.Quantity), Complete: o.Complete, AccountID: o.AccountID}
	if o.ShipDate != nil {
		order.ShipDate = *o.ShipDate
	}
	return order
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
	return &Account{ID: a.ID, Email: a.Email, Role: Role(a.Role), CreatedAt: a.CreatedAt}
}

func apiKeyFrom(k api.APIKey) *APIKey {
	return &APIKey{ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt}
}

func createdAPIKeyFrom(k api.CreatedAPIKey) *CreatedAPIKey {
	return &CreatedAPIKey{
		APIKey: APIKey{ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt},
		Key:    k.Key,
	}
}

func messageFrom(m api.Message) *Message {
	return &Message{ID: m.ID, Message: m.Message, Status: MessageStatus(m.Status), CreatedAt: m.CreatedAt}
}
