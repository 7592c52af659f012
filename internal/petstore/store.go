package petstore

import (
	"context"
	"time"
)

// Store is everything the service keeps. Implementations (internal/sqlite,
// internal/postgres) pass the same behaviour suite (internal/storetest).
//
// Conventions: a missing row is an *Error with code ENotFound, never a nil result;
// a unique or in-use clash is EConflict; every store rule is applied inside the same
// transaction as the change it guards.
type Store interface {
	AccountStore
	KeyStore
	TokenStore
	MessageStore
	CatalogStore
	InventoryStore
	OrderStore
	IdempotencyStore
	WebhookStore

	// SetCurrency makes code (an ISO 4217 code, checked by the caller) the shop's
	// currency, which orders are priced in from then on. A database that has orders in
	// another currency keeps it: EConflict, naming it.
	SetCurrency(ctx context.Context, code string) error
	// Currency is the shop's currency: the last SetCurrency's, else the one the
	// database holds, else DefaultCurrency.
	Currency() string

	// Ping reports whether the database is reachable and takes writes.
	Ping(ctx context.Context) error
	// Unavailable reports whether err, returned by this store, is a passing failure of
	// the database that is not the caller's fault (a full disk, a server shutting down,
	// a lost connection, a lock held too long): the service answers 503 and the
	// caller should retry.
	Unavailable(err error) bool
	// Close releases the database.
	Close() error
}

// AccountStore keeps accounts.
type AccountStore interface {
	// CreateAccount adds an account; an email already used (in any letter case) is
	// EConflict. passwordHash may be empty for a key-only account.
	CreateAccount(ctx context.Context, email, passwordHash string, role Role) (Account, error)
	// AccountByEmail finds an account (in any letter case) with its password hash.
	AccountByEmail(ctx context.Context, email string) (Account, string, error)
	// Account finds an account by id, without its password hash; ENotFound if there
	// is none.
	Account(ctx context.Context, id int64) (Account, error)
	// EnsureAccount returns the account with this email, creating it without a password
	// if there is none. A non-empty role is set on the account, under CheckRoleGrant
	// (an account with a password is never made admin: EConflict).
	EnsureAccount(ctx context.Context, email string, role Role) (Account, error)
	// TakeOverAccount removes the password of the account with this email and revokes
	// all its keys, so that only the operator's new key opens it; ENotFound if there
	// is no such account. Each key revoked makes an api_key.revoked event by the
	// operator.
	TakeOverAccount(ctx context.Context, email string) error
	// UpdateAccount applies an admin's change to the account with this id under the
	// last-admin rule (AccountChange.Apply), the enabled admins counted in the same
	// transaction so that two changes at once cannot both leave none; ENotFound for an
	// unknown account.
	UpdateAccount(ctx context.Context, id int64, change AccountChange) (Account, error)
	// CountAccounts counts all accounts.
	CountAccounts(ctx context.Context) (int, error)
	// Accounts lists a page of the accounts that match every filter of f, by id,
	// without password hashes.
	Accounts(ctx context.Context, f AccountFilter, p Page) ([]Account, error)
}

// KeyStore keeps API keys, by the hash of their secret.
type KeyStore interface {
	// CreateAPIKey stores a key, and its api_key.created event by k.By, in one
	// transaction; ENotFound for an unknown account, EConflict past MaxKeysPerAccount.
	// At the cap, the account's expired keys make room: they are revoked in the same
	// transaction, each with its api_key.revoked event by k.By.
	CreateAPIKey(ctx context.Context, k NewAPIKey) (APIKey, error)
	// APIKeys lists a page of an account's keys that are not revoked, by id.
	APIKeys(ctx context.Context, accountID int64, p Page) ([]APIKey, error)
	// RevokeAPIKey revokes one of an account's live keys, and writes its
	// api_key.revoked event by by, in one transaction; another account's key, an
	// unknown one and one already revoked are ENotFound, and write nothing.
	RevokeAPIKey(ctx context.Context, accountID, keyID int64, by Actor) error
	// PrincipalByKeyHash finds who holds the key with this hash, with the key's scopes
	// and expiry; an unknown or revoked key is ENotFound, an expired one is found.
	PrincipalByKeyHash(ctx context.Context, hash []byte) (Principal, error)
	// TouchAPIKeys records that the keys were used at the minute at (those whose last
	// use is older).
	TouchAPIKeys(ctx context.Context, ids []int64, at time.Time) error
}

// MessageStore keeps the getting-started messages.
type MessageStore interface {
	// CreateMessage stores m as given; text the policy refuses (Message.Validate) is
	// EValidationFailed.
	CreateMessage(ctx context.Context, m Message) error
	// Message finds one of an account's messages; another account's is ENotFound.
	Message(ctx context.Context, accountID int64, id string) (Message, error)
}

// CatalogStore keeps categories and pets.
type CatalogStore interface {
	// CreateCategory validates c (trimming its name) and adds it.
	CreateCategory(ctx context.Context, c Category) (Category, error)
	Category(ctx context.Context, id int64) (Category, error)
	Categories(ctx context.Context, p Page) ([]Category, error)
	// ReplaceCategory validates c and replaces the category with its id.
	ReplaceCategory(ctx context.Context, c Category) (Category, error)
	// DeleteCategory removes a category; one that pets use is EConflict.
	DeleteCategory(ctx context.Context, id int64) error

	// CreatePet validates f (trimming the name) and adds a pet with a stock of 0; an
	// unknown category is EValidationFailed on categoryId.
	CreatePet(ctx context.Context, f PetFields) (Pet, error)
	Pet(ctx context.Context, id int64) (Pet, error)
	// Pets lists one page of the pets that match every filter of f, by id, after
	// f.Validate (a name breaking the name policy is EValidationFailed on name).
	Pets(ctx context.Context, f PetFilter, p Page) ([]Pet, error)
	// UpdatePet changes a pet to what change returns, in one transaction, checking the
	// status change against CheckStatusChange and the category as CreatePet does.
	UpdatePet(ctx context.Context, id int64, change func(PetFields) (PetFields, error)) (Pet, error)
	// DeletePet removes a pet from the catalogue; one with incomplete orders is
	// EConflict. A pet that had orders is archived (PetState.CanDelete): kept where the
	// sales report finds its name, out of every read of the catalogue, so that it is
	// ENotFound like an erased one.
	DeletePet(ctx context.Context, id int64) error

	// AddPetPhoto adds p last to the photos of the pet; ENotFound for an unknown pet,
	// EConflict (TooManyPhotos) when it has MaxPhotosPerPet. The photo's files are
	// the media store's, written before.
	AddPetPhoto(ctx context.Context, petID int64, p Photo) (Pet, error)
	// RemovePetPhoto takes a photo off the pet; ENotFound (PhotoNotFound) when the pet
	// does not have it. The caller removes its files after.
	RemovePetPhoto(ctx context.Context, petID int64, photoID string) (Pet, error)
	// ReorderPetPhotos puts the pet's photos in the order of ids, under
	// CheckPhotoOrder (EConflict, nothing changed, unless ids names each once).
	ReorderPetPhotos(ctx context.Context, petID int64, ids []string) (Pet, error)
	// KnownPhotos reports which of ids a pet has: the sweep of the media store
	// removes the files of the others.
	KnownPhotos(ctx context.Context, ids []string) (map[string]bool, error)
}

// InventoryStore keeps the stock per pet.
type InventoryStore interface {
	Inventory(ctx context.Context, petID int64) (InventoryItem, error)
	// Inventories lists one page of the stock of the pets that match every filter of
	// f, by pet id.
	Inventories(ctx context.Context, f InventoryFilter, p Page) ([]InventoryItem, error)
	// SetInventory sets a pet's stock under PetState.Restock.
	SetInventory(ctx context.Context, petID int64, quantity int) (InventoryItem, error)
}

// OrderStore keeps orders. owner scopes a lookup to one account's orders; 0 means any
// account (admins).
type OrderStore interface {
	// PlaceOrder places an order under PlanOrders: the pet's stock, the order and the
	// result on the request's Idempotency-Key change in one transaction, which
	// concurrent requests share (package groupcommit). A refusal is the error, an *Error;
	// PlacedOrder.Replayed says whether the answer (order or refusal) is the one an
	// earlier request with the same key got. Any other error means nothing changed.
	PlaceOrder(ctx context.Context, o NewOrder) (PlacedOrder, error)
	Order(ctx context.Context, id, owner int64) (Order, error)
	// Orders lists one page of the orders that match every filter of f, newest first
	// (by CreatedAt, then by id) or oldest first; p.After is the id of the last order
	// of the page before.
	Orders(ctx context.Context, f OrderFilter, p Page) ([]Order, error)
	// CancelOrder cancels a placed order under the domain's rule of the same name
	// (changes.go), keeping it with its new status; a complete one is EConflict, and a
	// cancelled one is left as it is (no error, no event).
	CancelOrder(ctx context.Context, id, owner int64) error
	// UpdateOrder completes an order (under the domain's CompleteOrder, changes.go)
	// or sets its ship date; any change to a complete order is EInvalidTransition.
	UpdateOrder(ctx context.Context, id int64, u OrderUpdate) (Order, error)
	// SalesReport answers a validated query from the summary the order changes keep
	// (sales.go): the totals of its days and its groups, by day oldest first, or by
	// pet or category, the Limit with the most revenue (then units, then id).
	SalesReport(ctx context.Context, q SalesQuery) (SalesReport, error)
}

// IdempotencyStore forgets old Idempotency-Keys (PlaceOrder stores them).
type IdempotencyStore interface {
	// PurgeIdempotencyKeys deletes keys first used before the given time.
	PurgeIdempotencyKeys(ctx context.Context, before time.Time) (int64, error)
}

// WebhookStore keeps webhook endpoints, the event feed and deliveries.
//
// Events are written once, by the other stores' changes, in their transactions; an
// event exists exactly when its change does. Nothing is written per endpoint then:
// each endpoint keeps its place in the feed (a cursor), and ClaimDeliveries fans the
// events after it out to the endpoint, outside any sale. A delivery has a row only
// while it is in flight, pending a retry, failed, or once it took more than one
// attempt (and for test events); one that succeeded at its first attempt leaves no
// row, and is known from the endpoint's spans: the ranges of the feed it was sent,
// each with the subscription it had then. Deliveries lists both kinds alike.
//
// A change writes its events in this order: the order's event (placed, completed,
// cancelled), then the pet's StockEvents. A batch of orders writes an order.placed
// per placed order and the StockEvents of each pet whose state it changed, from the
// state before the batch to the state after it; their order within the batch is not
// fixed.
//
// Every method that takes an endpoint's id answers ENotFound for an unknown one.
type WebhookStore interface {
	// CreateWebhook adds an endpoint (enabled), sent the events that happen from now
	// on; w.ID and the dates are set by the store. Text the policy refuses
	// (Webhook.CheckText) is EValidationFailed; the MaxWebhooks+1st is EConflict.
	CreateWebhook(ctx context.Context, w Webhook) (Webhook, error)
	Webhook(ctx context.Context, id int64) (Webhook, error)
	Webhooks(ctx context.Context, p Page) ([]Webhook, error)
	// UpdateWebhook changes an endpoint to what change returns, in one transaction,
	// and sets UpdatedAt; an error from change is returned and nothing changes, and
	// so is a URL or description the text policy refuses (Webhook.CheckText).
	// change is given the types of the endpoint's pending deliveries, read in the
	// transaction when it calls pending (see Principal.CheckStream).
	// Disabling it fails its pending deliveries and the events not yet sent to it;
	// enabling a disabled one clears DisabledReason and FailingSince (its run of
	// failures starts afresh) and sends it the events that happen from then on. A
	// new subscription applies to the events not yet sent.
	UpdateWebhook(ctx context.Context, id int64, change func(cur Webhook, pending PendingTypes) (Webhook, error)) (Webhook, error)
	// DeleteWebhook removes an endpoint and its deliveries.
	DeleteWebhook(ctx context.Context, id int64) error
	// SendTestEvent writes a WebhookTest event and its one delivery, to endpoint id,
	// due at once. An endpoint with MaxPendingTests test deliveries pending is
	// EConflict.
	SendTestEvent(ctx context.Context, id int64, now time.Time) (Delivery, error)

	// Deliveries lists a page of an endpoint's deliveries by id (the event's place
	// in the feed), oldest first: those it was sent and those it is being sent. Events
	// not yet fanned out to it are not listed.
	Deliveries(ctx context.Context, webhookID int64, p Page) ([]Delivery, error)
	// RetryDelivery makes a delivery of the endpoint pending again, due at now, with a
	// fresh retry horizon; one pending already is left as it is. A delivery of another
	// endpoint is ENotFound. may decides first whether the caller may have it sent
	// again (Principal.CheckResend): its error is returned and nothing changes.
	RetryDelivery(ctx context.Context, webhookID, deliveryID int64, now time.Time, may func(Delivery) error) (Delivery, error)

	// Events lists a page of the feed by Seq (Page.After is a Seq), oldest first. On
	// PostgreSQL it shows an event only once every event before it is committed, so
	// a reader that follows the cursor misses none.
	Events(ctx context.Context, f EventFilter, p Page) ([]Event, error)
	// Event finds one event of the feed by its id; a WebhookTest event is not in the
	// feed (ENotFound).
	Event(ctx context.Context, id string) (Event, error)
	// PurgeEvents deletes events that happened before the given time, with their
	// deliveries.
	PurgeEvents(ctx context.Context, before time.Time) (int64, error)

	// ClaimDeliveries leases up to o.Max deliveries due at o.Now, for o.Lease: first
	// each endpoint's retries that are due, then the events after its cursor that it
	// subscribes to (the cursor moves past them). An endpoint is given at most its
	// window less what it has in flight, and endpoints are served in turn, so that
	// none waits for another. No order holds between an endpoint's deliveries. A lease
	// that runs out (a process killed mid-delivery) makes the delivery claimable
	// again. Concurrent claims, from any process, never share a delivery.
	ClaimDeliveries(ctx context.Context, o ClaimOptions) ([]DeliveryJob, error)
	// FinishAttempts records the results of attempts, in one transaction (Attempts
	// counts each) and ends their leases; the first attempt of a run (Attempts 0)
	// sets RetrySince to its At. A success at a fan-out's first attempt removes the
	// delivery's row (its span remembers it). On the endpoint a success clears
	// FailingSince and widens its window by one; a failure sets FailingSince at the
	// first failure of a run, halves the window and, past DisableIfFailingBefore,
	// disables the endpoint with a reason and fails its pending deliveries, this one
	// included. A result whose delivery is gone (its endpoint was deleted) or no
	// longer pending (its endpoint was disabled) is left out.
	FinishAttempts(ctx context.Context, results []AttemptResult) error
	// QueueStats counts the deliveries waiting: pending ones and events not yet
	// fanned out.
	QueueStats(ctx context.Context) (QueueStats, error)
}

// TokenStore keeps the one-time tokens of invitations and password resets, by the
// hash of their secret. A token works once: Redeem closes it in the transaction that
// applies it, so of two redemptions at once exactly one succeeds.
type TokenStore interface {
	// CreateInvitation stores an invitation's token (t.Kind TokenInvitation), which
	// replaces the open invitation of the same email (in any letter case); an email
	// whose account has a password is EConflict (CheckInvitation).
	CreateInvitation(ctx context.Context, t NewToken) (Invitation, error)
	// CreatePasswordReset stores a reset's token for the account with t.Email, which
	// replaces its open one; ENotFound for no account.
	CreatePasswordReset(ctx context.Context, t NewToken) error
	// Redeem uses a token of r.Kind once, in one transaction: an invitation creates its
	// account, or gives a key-only one its password and role (AcceptInto); a reset sets
	// the password (ResetInto) and revokes the account's session keys. Unknown, used,
	// replaced or expired tokens are ErrInvalidToken. It returns the account as it now is.
	Redeem(ctx context.Context, r Redemption) (Account, error)
	// RevokeKey revokes the live key with this id of any account, as the operator;
	// ENotFound for an unknown or revoked key. It returns the key's account id.
	RevokeKey(ctx context.Context, keyID int64) (int64, error)
}
