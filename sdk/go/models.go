package petstore

import (
	"encoding/json"
	"time"
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

// PasswordSource is where an account's password came from. The list is open: treat a
// source this package does not know as PasswordSignUp.
type PasswordSource string

// The password sources this package knows.
const (
	PasswordNone       PasswordSource = "none"       // the account signs in with API keys alone
	PasswordSignUp     PasswordSource = "signup"     // chosen by whoever signed up: never made admin
	PasswordInvitation PasswordSource = "invitation" // set through an invitation's one-time link
)

// MessageStatus is how far a message got. The list is open: treat a status this
// package has no constant for as still in progress.
type MessageStatus string

// The message statuses this package knows.
const (
	MessageStatusQueued MessageStatus = "queued" // accepted for delivery
)

// Scope is what an API key may do: each operation needs one (the README's table of
// operations names it), and a key limited to some scopes is refused the others with
// CodeInsufficientScope. A key made without scopes has every scope its account's role
// allows, those a later version adds included.
//
// In answers (APIKey.Scopes, Error.Scope) the list is open: a newer service may report
// a scope this package has no constant for; it comes through unchanged. In requests
// (NewAPIKey) only the constants below are accepted.
type Scope string

// The scopes this package knows, with the calls each allows. Events also need the
// scope that reads their data (the service's EventType: order.* ScopeOrdersRead, pet.*
// and inventory.updated ScopePetsRead, api_key.* ScopeAccountsRead), in the feed, in an
// endpoint's subscription or new URL, and to retry a delivery.
const (
	ScopeAccountRead     Scope = "account:read"     // GetCurrentAccount
	ScopeAccountsRead    Scope = "accounts:read"    // ListAccounts (admins)
	ScopeAccountsManage  Scope = "accounts:manage"  // UpdateAccount (admins)
	ScopeKeysManage      Scope = "keys:manage"      // CreateAPIKey, ListAPIKeys, RevokeAPIKey with a key
	ScopeMessagesRead    Scope = "messages:read"    // GetMessage
	ScopeMessagesWrite   Scope = "messages:write"   // SendMessage
	ScopePetsRead        Scope = "pets:read"        // reading pets, categories and stock
	ScopePetsWrite       Scope = "pets:write"       // adding, changing and deleting pets (admins)
	ScopeCategoriesWrite Scope = "categories:write" // adding, replacing and deleting categories (admins)
	ScopeInventoryWrite  Scope = "inventory:write"  // SetInventory (admins)
	ScopeOrdersRead      Scope = "orders:read"      // ListOrders, GetOrder
	ScopeOrdersWrite     Scope = "orders:write"     // PlaceOrder, CancelOrder, UpdateOrder (admins)
	ScopeSalesRead       Scope = "sales:read"       // GetSalesReport (admins)
	ScopeWebhooksManage  Scope = "webhooks:manage"  // the webhook endpoints and their deliveries (admins)
	ScopeEventsRead      Scope = "events:read"      // ListEvents, GetEvent (admins)
)

// EventType is what an event tells of. The list is open: a newer service may send a
// type this package has no constant for; ignore an event whose type you do not know.
// In requests (NewWebhook, WebhookPatch, ListEventsOptions) only the constants below
// are accepted, and EventTypeWebhookTest is not among them.
type EventType string

// The event types this package knows, with the resource each event holds.
const (
	EventTypeOrderPlaced      EventType = "order.placed"       // Event.Order
	EventTypeOrderCompleted   EventType = "order.completed"    // Event.Order
	EventTypeOrderCancelled   EventType = "order.cancelled"    // Event.Order, with OrderStatusCancelled
	EventTypePetSoldOut       EventType = "pet.sold_out"       // Event.Inventory: the stock reached 0
	EventTypePetRestocked     EventType = "pet.restocked"      // Event.Inventory: the stock left 0
	EventTypeInventoryUpdated EventType = "inventory.updated"  // Event.Inventory: any change of the stock
	EventTypePetStatusChanged EventType = "pet.status_changed" // Event.Pet
	EventTypeAPIKeyCreated    EventType = "api_key.created"    // Event.Data: the key (never its secret), its account, who made it
	EventTypeAPIKeyRevoked    EventType = "api_key.revoked"    // Event.Data: the key as it was, its account, who revoked it
	EventTypeWebhookTest      EventType = "webhook.test"       // Event.Webhook: only from SendTestEvent
	// EventTypeAll subscribes an endpoint to every type, those a later version adds
	// included. It stands alone: beside a type it is refused.
	EventTypeAll EventType = "*"
)

// DeliveryStatus is where a delivery stands. The list is open: treat a status this
// package has no constant for as not delivered.
type DeliveryStatus string

// The delivery statuses this package knows.
const (
	DeliveryStatusPending   DeliveryStatus = "pending"   // not delivered yet; see Delivery.NextAttemptAt
	DeliveryStatusSucceeded DeliveryStatus = "succeeded" // the endpoint answered 2xx
	DeliveryStatusFailed    DeliveryStatus = "failed"    // given up, or the endpoint was disabled: RetryDelivery
)

// Pet is an animal in the store. It can be ordered while it has a Price, its Status
// is PetStatusAvailable and its Stock covers the quantity; a new pet has a Stock of 0
// until it is restocked (SetInventory).
type Pet struct {
	ID         int64
	Name       string
	CategoryID int64
	Status     PetStatus
	Stock      int // units in stock when the pet was read (read-only; see SetInventory)
	// Price is the price of one unit in the minor unit of Currency (1999 is 19.99
	// EUR); nil when the pet has none, and then ordering it is CodeNotForSale. A
	// pointer because 0 is a price: the pet is free.
	Price    *int64
	Currency string // the shop's ISO 4217 code, such as "EUR"; set with Price
	// Description is what a customer reads about the animal; "" when it has none.
	Description string
	// Tags are the pet's tags as written (empty when it has none); the service tells
	// them apart without regard to case.
	Tags []string
	// Photos are the pet's photos in the order staff gave them, the first the one to
	// show in a list (empty when it has none); see UploadPetPhoto.
	Photos []Photo
}

// NewPet is a pet to add, or the full replacement of one.
type NewPet struct {
	Name       string // 1–100 characters once trimmed
	CategoryID int64
	Status     PetStatus // PetStatusAvailable when empty
	// Price is the price of one unit in the minor unit of the shop's currency,
	// 0–100,000,000. nil: a new pet has no price, and a replacement (ReplacePet)
	// keeps the price the pet has; take a price away with PetPatch.RemovePrice.
	Price *int64
	// Description is free text of at most 2,000 characters. "": a new pet has none,
	// and a replacement keeps the one the pet has (remove it with PetPatch).
	Description string
	// Tags are at most 10, each 1–32 characters, none twice in any letter case. nil:
	// a new pet has none, and a replacement keeps the pet's; an empty, non-nil list
	// removes them.
	Tags []string
}

// PetPatch changes some fields of a pet: nil fields keep their value. Ptr makes the
// pointers: PetPatch{Status: petstore.Ptr(petstore.PetStatusSold)}.
type PetPatch struct {
	Name       *string
	CategoryID *int64
	Status     *PetStatus
	Price      *int64 // the new price, in the minor unit of the shop's currency
	// RemovePrice takes the pet's price away (sent as "price": null): it cannot be
	// ordered until it has one again. It cannot go with Price.
	RemovePrice bool
	// Description, when not nil, replaces the pet's; Ptr("") removes it.
	Description *string
	// Tags, when not nil, replace all of the pet's; an empty list removes them.
	Tags []string
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

// OrderStatus is where an order is in its life.
//
// In answers the list is open: a newer service may report a status this package has
// no constant for; treat it as neither completed nor cancelled. In requests
// (ListOrdersOptions) only the constants below are accepted.
type OrderStatus string

// The order statuses this package knows.
const (
	OrderStatusPlaced    OrderStatus = "placed"    // its units are held
	OrderStatusCompleted OrderStatus = "completed" // fulfilled
	OrderStatusCancelled OrderStatus = "cancelled" // its units went back on the stock; it stays readable
)

// Order is a customer's order, with its whole life. Every field is set by the service
// when it happens: a later change of the pet's price or name does not rewrite it.
type Order struct {
	ID          int64
	PetID       int64
	Quantity    int
	ShipDate    time.Time // zero when not set
	Complete    bool      // exactly when Status is OrderStatusCompleted
	AccountID   int64     // the account that placed it
	Status      OrderStatus
	CreatedAt   time.Time // when it was placed
	CompletedAt time.Time // zero unless completed
	CancelledAt time.Time // zero unless cancelled
	// UnitPrice is the pet's price when the order was placed, and Total UnitPrice ×
	// Quantity, both in the minor unit of Currency. nil for an order placed before the
	// service kept prices.
	UnitPrice *int64
	Total     *int64
	Currency  string // the shop's ISO 4217 code, such as "EUR"
	PetName   string // the pet's name when the order was placed; "" when unknown
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
	// Disabled is set for an account an admin disabled: its keys and password open
	// nothing until it is enabled again (UpdateAccount).
	Disabled bool
	// PasswordSource is where the account's password came from, which says whether
	// an admin may make it admin (not a sign-up's).
	PasswordSource PasswordSource
	// Key is the API key the client called with; only GetCurrentAccount sets it (nil
	// elsewhere).
	Key *CallingKey
}

// CallingKey is the API key a call came with, as GetCurrentAccount tells it: what the
// key may do, to offer a user only that.
type CallingKey struct {
	ID int64
	// Scopes are what the key may do now, sorted: its scopes, or every scope of its
	// account's role for a key made without any, and only those the role allows.
	Scopes []Scope
	// ExpiresAt is when the key stops working; zero when it never does.
	ExpiresAt time.Time
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
	// Scopes are what the key may do, sorted; nil when it has every scope of its
	// account's role.
	Scopes []Scope
	// ExpiresAt is when the key stops working; zero when it never does.
	ExpiresAt time.Time
	// LastUsedAt is the minute the key was last used (up to a minute late); zero when
	// it has not been used.
	LastUsedAt time.Time
}

// CreatedAPIKey is a new API key, with its secret: the only time the service shows it.
type CreatedAPIKey struct {
	APIKey
	Key string // psk_…: give it to WithAPIKey
}

// NewAPIKey is a key to make. Without Scopes and ExpiresAt it is its account's whole
// power for as long as the operator allows; give a program only what it needs:
//
//	petstore.NewAPIKey{
//		Name:      "storefront",
//		Scopes:    []petstore.Scope{petstore.ScopePetsRead},
//		ExpiresAt: time.Now().Add(90 * 24 * time.Hour),
//	}
type NewAPIKey struct {
	Name string // what the key is for, such as "laptop"
	// Scopes limit what the key may do (at most 13). nil gives it every scope of the
	// account's role, those a later version adds included, or, made with a limited
	// key, that key's scopes; an empty non-nil list is sent as it is, and refused,
	// rather than taken for every scope. A scope the role does not allow, or that the
	// key making the call lacks, is refused (CodeValidationFailed).
	Scopes []Scope
	// ExpiresAt is when the key stops working: any future instant up to the
	// operator's longest lifetime (--key-max-lifetime) and the expiry of the key
	// making the call; a later one is refused. Zero: the earlier of those two, or
	// never when there is neither.
	ExpiresAt time.Time
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

// Webhook is an endpoint that is sent signed events (admins), without its secret.
type Webhook struct {
	ID          int64
	URL         string // where deliveries are posted
	Description string
	Events      []EventType // the types it receives, or just EventTypeAll
	Enabled     bool        // whether events are delivered to it
	// DisabledReason says why the service disabled the endpoint (its attempts failed
	// for 72 hours straight); empty while it is enabled or when an admin disabled it.
	DisabledReason string
	// FailingSince is when the current run of failed attempts began; zero while the
	// last attempt succeeded.
	FailingSince time.Time
	// PreviousSecretExpiresAt is until when the secret replaced by the last rotation
	// still signs deliveries beside the new one; zero when no rotation overlaps.
	PreviousSecretExpiresAt time.Time
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

// WebhookWithSecret is an endpoint with its signing secret: the only times the
// service shows it are CreateWebhook and RotateWebhookSecret.
type WebhookWithSecret struct {
	Webhook
	// Secret (whsec_…) is the key of the deliveries' signatures; give it to
	// ConstructEvent in your receiver.
	Secret string
}

// NewWebhook is an endpoint to add.
type NewWebhook struct {
	// URL is where deliveries are posted: https:// on a public address (the
	// operator's --webhooks-allow-private also allows private and loopback addresses,
	// over http:// too). At most 2,048 bytes.
	URL string
	// Events are the types to receive (1–9, each once), or []EventType{EventTypeAll}.
	Events      []EventType
	Description string // optional, at most 500 characters
}

// WebhookPatch changes some fields of an endpoint: nil fields keep their value.
type WebhookPatch struct {
	URL    *string     // checked as on creation
	Events []EventType // the new subscription; nil keeps it
	// Description replaces the description; Ptr("") removes it.
	Description *string
	// Enabled false stops deliveries (pending ones fail); true enables a disabled
	// endpoint again and clears DisabledReason and FailingSince.
	Enabled *bool
}

// AccountPatch is a change to an account (UpdateAccount): nil fields keep their value.
type AccountPatch struct {
	// Role is the role to give the account: RoleCustomer or RoleAdmin.
	Role *Role
	// Disabled true stops the account's keys and password at once; false lets them
	// work again.
	Disabled *bool
}

// SecretRotation says how a rotation treats the secret it replaces.
type SecretRotation struct {
	// Overlap is how long the replaced secret keeps signing beside the new one, up to
	// 24 hours, in whole seconds (a fraction counts as a second). nil is the
	// service's default of 24 hours; Ptr(time.Duration(0)) revokes the replaced
	// secret at once, as for a leaked one.
	Overlap *time.Duration
}

// Delivery is the sending of one event to one endpoint, over one or more attempts.
type Delivery struct {
	ID        int64 // the event's place in the feed, unique among the endpoint's deliveries
	WebhookID int64
	EventID   string // also the Petstore-Event-Id header of the delivery
	EventType EventType
	Status    DeliveryStatus
	// Attempts counts the attempts of the current run: since the delivery was made,
	// or since it was last retried by hand.
	Attempts      int
	NextAttemptAt time.Time // zero unless pending
	// LastAttemptAt, ResponseStatus and LastError are zero for a delivery that
	// succeeded at its first attempt: the service keeps only that fact.
	LastAttemptAt  time.Time
	ResponseStatus int    // the HTTP status of the last attempt; 0 when it got no answer
	LastError      string // why the last attempt failed, one of a few fixed reasons
	CreatedAt      time.Time
}

// Event is something that happened, with the resource it tells of as the API showed
// it then: an entry of the feed (ListEvents, GetEvent) and the body of every webhook
// delivery (ConstructEvent).
//
// Exactly one of Order, Inventory, Pet and Webhook is set for the types this package
// knows (see the EventType constants); choose by Type. For api_key.created and
// api_key.revoked, and for a type it does not know, none is, and Data holds the
// resource as sent.
type Event struct {
	ID        string // evt_…: a delivery may come more than once, so drop an id you have handled
	Type      EventType
	CreatedAt time.Time // the commit of the change

	Order     *Order         // order.placed, order.completed, order.cancelled
	Inventory *InventoryItem // pet.sold_out, pet.restocked, inventory.updated
	Pet       *Pet           // pet.status_changed
	Webhook   *Webhook       // webhook.test: the endpoint the test was sent to
	Data      json.RawMessage
}

// ListOptions are the options of a list without filters.
type ListOptions struct {
	Limit int // items per page, 1–100; the service's default (20) when 0
	// Cursor is where the list starts: the Next of a page fetched of the same list,
	// to go on from there; "" for the start.
	Cursor string
}

// ListAccountsOptions filter ListAccounts.
type ListAccountsOptions struct {
	IDs []int64 // at most 100; ids that match no account are left out
	// Role keeps the accounts of one role, disabled ones too (RoleAdmin: the staff);
	// "" for every role.
	Role  Role
	Limit int // items per page, 1–100; 0 for the service's default (with IDs, all of them)
	// Cursor is where the list starts: the Next of a page fetched with the same
	// filters, to go on from there; "" for the start.
	Cursor string
}

// ListPetsOptions filter ListPets; every filter set must hold.
type ListPetsOptions struct {
	Status     PetStatus
	CategoryID int64
	IDs        []int64 // at most 100; ids that match no pet are left out
	// Name keeps the pets whose name contains it, without regard to case ("éc" finds
	// "Éclair"); every character stands for itself (% and _ are not wildcards).
	Name string
	// Tags keeps the pets that have every one of them, without regard to case; at
	// most 10.
	Tags  []string
	Limit int // items per page, 1–100; 0 for the service's default (with IDs, all of them)
	// Cursor is where the list starts: the Next of a page fetched with the same
	// filters, to go on from there; "" for the start.
	Cursor string
}

// ListInventoryOptions filter ListInventory; every filter set must hold.
type ListInventoryOptions struct {
	Status PetStatus // the pet's status
	IDs    []int64   // at most 100; ids that match no pet are left out
	Limit  int       // items per page, 1–100; 0 for the service's default (with IDs, all of them)
	// Cursor is where the list starts: the Next of a page fetched with the same
	// filters, to go on from there; "" for the start.
	Cursor string
}

// OrderSort is the order of ListOrders.
type OrderSort string

// The orders of ListOrders.
const (
	OrderSortNewest OrderSort = "newest" // newest first, by CreatedAt then id (the service's default)
	OrderSortOldest OrderSort = "oldest"
)

// ListOrdersOptions filter ListOrders; every filter set must hold.
type ListOrdersOptions struct {
	AccountID int64       // only this account's orders (admins; a customer sees only their own)
	Status    OrderStatus // only orders with this status
	Complete  *bool       // only complete (true) or incomplete (false: placed or cancelled) orders
	// CreatedAfter and CreatedBefore bound CreatedAt: at or after, and before. Zero
	// leaves the bound out.
	CreatedAfter  time.Time
	CreatedBefore time.Time
	Sort          OrderSort // OrderSortNewest when empty
	Limit         int       // items per page, 1–100; 0 for the service's default
	// Cursor is where the list starts: the Next of a page fetched with the same
	// filters, to go on from there; "" for the start.
	Cursor string
}

// ListEventsOptions filter ListEvents.
type ListEventsOptions struct {
	Type  EventType // only events of this type (not EventTypeWebhookTest: tests are not in the feed)
	Limit int       // items per page, 1–100; 0 for the service's default
	// Cursor is where the feed starts: the last Next a reader of the feed (with the
	// same Type) was given, to read the events that came after; "" for the oldest.
	Cursor string
}

// Ptr returns a pointer to v, for the optional fields of PetPatch, OrderUpdate,
// ListOrdersOptions, WebhookPatch and SecretRotation.
func Ptr[T any](v T) *T { return &v }
